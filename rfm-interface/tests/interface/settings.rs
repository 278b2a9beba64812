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
            "timeout = 0.01: expected seconds of at least 0.1",
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
