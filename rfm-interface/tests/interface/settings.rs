//! The link settings of an interface file: each node gets its own over the
//! file's, and a wrong one is refused where it is written.

use super::*;

/// The link settings a file gives: at the top for every node, in a node for
/// it alone; a misspelt key or a value outside its parameter's rule is refused
/// at its line and column, the key named with every key there is.
#[test]
fn settings_reach_each_node_and_a_wrong_one_is_refused_where_it_is() {
    let text =
        "name = \"lab\"\ndevice = \"shm:lab\"\nlag = 1\ntimeout = 2\nsyncMode = \"lockstep\"\n\
                [[node]]\nname = \"a\"\nslot = 0\nlag = 0\nwaitStrategy = \"sleep\"\n\
                signals = [{ name = \"x\", type = \"Real\" }]\n\
                [[node]]\nname = \"b\"\nslot = 1\nsignals = [{ name = \"y\", type = \"Real\" }]\n";
    let lab = Interface::parse("lab.toml", text, &Reserved::NONE).unwrap();
    assert_eq!(
        lab.settings_of(0).to_string(),
        "device = shm:lab, lag = 0, syncMode = lockstep, waitStrategy = sleep, timeout = 2.0"
    );
    assert_eq!(
        lab.settings_of(1).to_string(),
        "device = shm:lab, lag = 1, syncMode = lockstep, timeout = 2.0"
    );
    let plain = text
        .lines()
        .filter(|l| {
            !["device", "lag", "timeout", "syncMode", "waitStrategy"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let plain = Interface::parse("lab.toml", &plain, &Reserved::NONE).unwrap();
    assert_eq!(
        lab.fingerprint(),
        plain.fingerprint(),
        "nodes built with other settings still couple"
    );
    for (bad, (line, column), part) in [
        (
            "devise = \"shm:lab\"",
            (2, 1),
            "unknown field `devise`, expected one of",
        ),
        ("lag = 9", (2, 7), "lag = 9: expected 0..7 steps"),
        (
            "timeout = 0.01",
            (2, 11),
            "timeout = 0.01: expected 0.1..1e9 seconds",
        ),
        (
            "syncMode = \"sometimes\"",
            (2, 12),
            "unknown sync mode `sometimes`; expected lockstep or free",
        ),
        ("device = \"shm:a/b\"", (2, 10), "device = \"shm:a/b\""),
        // A board path of no known form: refused when the FMUs are built
        // (build-fmu used to exit 0), naming the nearest.
        (
            "device = \"/dev/rfmg20\"",
            (2, 10),
            "no RFM2g board path (did you mean `/dev/rfm2g0`?)",
        ),
        (
            "realTimeFactor = \"1\"",
            (2, 18),
            "expected a number (the FMU parameter realTimeFactor is a Real)",
        ),
    ] {
        let file = format!("name = \"lab\"\n{bad}\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{{ name = \"x\", type = \"Real\" }}]\n");
        let err = error(&file);
        assert_eq!((err.line, err.column), (line, column), "{err}");
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
    }
    let err = error("name = \"lab\"\ndevise = 1\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n");
    for key in [
        "device",
        "lag",
        "syncMode",
        "waitStrategy",
        "timeout",
        "startupTimeout",
        "idleTimeout",
        "realTimeFactor",
        "regionOffset",
        "rfm2gLibrary",
    ] {
        assert!(
            err.to_string().contains(&format!("`{key}`")),
            "{err} lacks {key}"
        );
    }
    let err = error("name = \"lab\"\n[[node]]\nname = \"a\"\nslot = 0\nlagg = 1\nsignals = [{ name = \"x\", type = \"Real\" }]\n");
    assert_eq!((err.line, err.column), (5, 1), "{err}");
    assert!(
        err.to_string().contains("unknown field `lagg`") && err.to_string().contains("`lag`"),
        "{err}"
    );
}

/// The reference's table of a file's settings is the code's: a row for each
/// key a file may set, with its default and every word it accepts, and no
/// row for a key it may not.
#[test]
fn the_references_settings_table_is_the_codes() {
    use rfm_interface::settings::{Start, SETTINGS};
    let book = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/src/reference/interface-file.md"
    );
    let text = std::fs::read_to_string(book).unwrap();
    let section = text.split("## Settings").nth(1).unwrap();
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    for spec in &SETTINGS {
        let row = rows
            .iter()
            .find(|r| r.starts_with(&format!("| `{}` |", spec.key)));
        let Some(row) = row else {
            assert!(!spec.in_files, "no row for `{}`", spec.key);
            continue;
        };
        assert!(
            spec.in_files,
            "a row for `{}`, which no file may set",
            spec.key
        );
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let default = match spec.start {
            Start::Text(t) => t.to_owned(),
            Start::Integer(i) => i.to_string(),
            Start::Real(x) => x.to_string(),
        };
        assert!(
            cells[3].contains(&default),
            "`{}`: default {default} not in {row}",
            spec.key
        );
        for word in spec.words() {
            assert!(
                cells[2].contains(&format!("`{word}`")),
                "`{}`: {word} not in {row}",
                spec.key
            );
        }
    }
}
