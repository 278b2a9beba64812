//! The names an FMU keeps for itself ([`fmu_model::RESERVED`]): the interface
//! parser refuses a node or signal that takes one, naming the file, line and
//! column, and every parameter of the table is among them.

use fmu_model::{Causality, Model, Place, PARAMS, RESERVED};
use rfm_interface::Interface;

/// A file of one node whose body is `node` (a TOML table body).
fn with_node(node: &str) -> String {
    format!("name = \"lab\"\n[[node]]\n{node}\n")
}

#[test]
fn a_reserved_name_is_refused_with_file_line_and_column() {
    let cases: Vec<(String, (usize, usize), &str)> = vec![
        (
            with_node("name = \"record\"\nslot = 0\nsignals = [{ name = \"dropped\", type = \"Integer\" }]"),
            (3, 8),
            "node name `record` is the prefix of the FMU's own outputs (record, replay, pace, cpu, ring are taken)",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"time\", type = \"Real\" }]"),
            (5, 21),
            "signal name `time` collides with the output `a.time` every peer's FMU has (time, step, link are taken)",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"link\", type = \"Boolean\" }]"),
            (5, 21),
            "signal name `link` collides with the output `a.link`",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"timeout\", type = \"Real\" }]"),
            (5, 21),
            "signal name `timeout` collides with the FMU parameter `timeout`",
        ),
    ];
    for (text, (line, column), part) in cases {
        let err = Interface::parse("lab.toml", &text, &RESERVED).unwrap_err();
        assert_eq!(
            (err.file.as_str(), err.line, err.column),
            ("lab.toml", line, column),
            "`{err}` for\n{text}"
        );
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
    }
}

/// A signal named like a parameter would collide with it as an input: the
/// parser must refuse every name the parameter table has.
#[test]
fn every_parameter_name_is_refused_as_a_signal_name() {
    for p in PARAMS {
        let text = with_node(&format!(
            "name = \"a\"\nslot = 0\nsignals = [{{ name = \"{}\", type = \"Real\" }}]",
            p.name
        ));
        let err = Interface::parse("lab.toml", &text, &RESERVED).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("collides with the FMU parameter `{}`", p.name)),
            "{err}"
        );
    }
}

/// Every output the FMU has beside its peers' (`pace.behind`, `cpu.offCore`):
/// a node named by its prefix would give two variables one name, so the parser
/// must refuse it.
#[test]
fn every_own_output_prefix_is_refused_as_a_node_name() {
    let model = Model::attitude();
    let own: Vec<&str> = model
        .variables
        .iter()
        .filter(|v| v.causality == Causality::Output)
        .filter(|v| !matches!(v.place, Place::Output { .. }))
        .map(|v| v.name.split_once('.').expect("a dotted output").0)
        .collect();
    assert!(own.len() >= 4, "{own:?}");
    for prefix in own {
        let text = with_node(&format!(
            "name = \"{prefix}\"\nslot = 0\nsignals = [{{ name = \"x\", type = \"Real\" }}]"
        ));
        let err = Interface::parse("lab.toml", &text, &RESERVED).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "node name `{prefix}` is the prefix of the FMU's own outputs"
            )),
            "{err}"
        );
    }
}
