//! Tests of the packaged `.fmu` from outside, as masters use it: `tests/fmi_crate.rs`
//! (the Rust `fmi` 0.8 importer) and `python/test_fmpy.py` (FMPy 0.3.32), plus the
//! demo's master, `src/bin/simulators.rs`. The library itself is empty.
