//! The struct of tests/c/lab_struct.h, which tests/c/lab_writer.c writes: as
//! an interface file declares it, and the values of each write as an FMU
//! shows them.

use super::Fmu;

/// tests/c/lab_struct.h as an interface file declares it (natural alignment,
/// the default, gives the compiler's offsets).
const LAB: &str = r#"
name = "lab"
memory_size = 65536
[[node]]
name = "sim"
slot = 0
offset = 16384
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "motion"
offset = 4096
byte_order = "big"
{handshake}
fields = [
  { name = "marker", type = "uint32" },
  { name = "i8", type = "int8" },
  { name = "i16", type = "int16" },
  { name = "i32", type = "int32" },
  { name = "i64", type = "int64" },
  { name = "u8", type = "uint8" },
  { name = "u16", type = "uint16", count = 3 },
  { name = "u32", type = "uint32" },
  { name = "u64", type = "uint64" },
  { name = "f", type = "float", count = 2 },
  { name = "d", type = "double", count = 3 },
  { name = "on", type = "bool" },
  { name = "name", type = "char[7]" },
]
[[node]]
name = "control"
offset = 8192
writer = "sim"
handshake = "none"
fields = [ { name = "stop", type = "uint32" } ]
"#;

pub fn interface(mode: &str) -> String {
    let handshake = match mode {
        "counter" => r#"handshake = { kind = "counter", field = "marker" }"#,
        // The program's period declared: lockstep waits for its writes.
        "lockstep" => {
            return LAB
                .replacen("name = \"lab\"\n", "name = \"lab\"\nperiod = 0.001\n", 1)
                .replace(
                    "{handshake}",
                    r#"handshake = { kind = "counter", field = "marker", period = 0.001 }"#,
                )
        }
        "after" => r#"handshake = { kind = "counter", field = "marker", counts = "after-data" }"#,
        "flag" => r#"handshake = { kind = "flag", field = "marker", value = 0x600DF00D }"#,
        _ => r#"handshake = "none""#,
    };
    LAB.replace("{handshake}", handshake)
}

/// The values of write `n` (lab_struct.h's `lab_values`), as the FMU shows
/// them: (variable, value as text).
pub fn expected(n: u64) -> Vec<(String, String)> {
    let mut v = vec![
        ("i8".to_owned(), ((n % 256) as i64 - 128).to_string()),
        (
            "i16".to_owned(),
            ((n * 3 % 65536) as i64 - 32768).to_string(),
        ),
        ("i32".to_owned(), (n as i64 * 7 - 1_000_000).to_string()),
        ("i64".to_owned(), format!("{}", -(n as i64) * 1_000_000_007)),
        ("u8".to_owned(), (n & 0xff).to_string()),
        ("u32".to_owned(), format!("{}", 4_000_000_000u64 - n)),
        ("u64".to_owned(), format!("{}", (1u64 << 52) + n)),
        ("on".to_owned(), (n & 1 == 1).to_string()),
        ("name".to_owned(), format!("n{:05}", n % 100_000)),
    ];
    for j in 0..3 {
        v.push((format!("u16[{j}]"), (n + j).to_string()));
        v.push((
            format!("d[{j}]"),
            format!("{}", n as f64 * 0.001 + j as f64),
        ));
    }
    for j in 0..2 {
        let f = n as f32 * 0.5 + j as f32;
        v.push((format!("f[{j}]"), format!("{}", f64::from(f))));
    }
    v
}

pub fn shown(fmu: &Fmu, name: &str) -> String {
    use rfm_frames::fmi::FmiType;
    match fmu.vr(name).1 {
        FmiType::Real => format!("{}", fmu.real(name)),
        FmiType::Integer => fmu.integer(name).to_string(),
        FmiType::Boolean => fmu.boolean(name).to_string(),
        FmiType::String => fmu.string(name),
    }
}

/// The write whose struct `fmu` shows (its `i32` names it); `None` before
/// the first (zeros).
pub fn write_of(fmu: &Fmu) -> Option<u64> {
    let i32 = fmu.integer("motion.i32") as i64;
    ((i32 + 1_000_000) % 7 == 0 && i32 + 1_000_000 > 0).then(|| ((i32 + 1_000_000) / 7) as u64)
}

/// The elements `fmu` shows that are not write `n`'s (a torn struct), each
/// as `NAME SHOWN (write N: EXPECTED)`.
pub fn not_of_write(fmu: &Fmu, n: u64) -> Vec<String> {
    expected(n)
        .into_iter()
        .filter(|(name, value)| shown(fmu, &format!("motion.{name}")) != *value)
        .map(|(name, value)| {
            format!(
                "{name} {} (write {n}: {value})",
                shown(fmu, &format!("motion.{name}"))
            )
        })
        .collect()
}

/// What a child (the program, or a master in its own process) printed on
/// stdout; it must have succeeded (`who` names it otherwise, with stderr).
pub fn output_of(child: std::process::Child, who: &str) -> String {
    let o = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{who}: {text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

/// A master's report line (`MODE: N steps, …, the last N, …`), read back:
/// the number before `after` (` torn`), or after `the last `.
pub struct Report(pub String);

impl Report {
    /// The line of `mode` in a master's output.
    pub fn of(output: &str, mode: &str) -> Report {
        let line = (output.lines())
            .find(|l| l.starts_with(&format!("{mode}: ")))
            .unwrap_or_else(|| panic!("no report in {output}"));
        Report(line.to_owned())
    }

    pub fn number(&self, after: &str) -> u64 {
        let before = self.0.split(after).next().unwrap();
        let word = before.split_whitespace().last().unwrap();
        word.parse()
            .unwrap_or_else(|_| panic!("no number before `{after}` in {}", self.0))
    }

    /// The last write the master saw.
    pub fn last(&self) -> u64 {
        (self.0.split("the last ").nth(1))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no last write in {}", self.0))
    }
}
