//! Nothing inside the FMU writes to stdout or stderr: a master's console is not
//! ours, and everything the FMU has to say goes to the master's logger. The FMU is
//! fmu-src and rfm-core (its only code dependency), so neither's library source may
//! print, even from a `Drop` that has no caller to return an error to.

use std::path::Path;

fn printing_lines(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            printing_lines(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if [
                    "eprintln!",
                    "println!",
                    "eprint!",
                    "print!(",
                    "io::stderr",
                    "io::stdout",
                    "dbg!",
                ]
                .iter()
                .any(|p| code.contains(p))
                {
                    out.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
}

#[test]
fn nothing_in_the_fmu_or_rfm_core_prints_to_the_console() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for dir in ["fmu-src/src", "rfm-core/src"] {
        printing_lines(&root.join(dir), &mut found);
    }
    assert!(
        found.is_empty(),
        "prints from inside the FMU:\n{}",
        found.join("\n")
    );
}
