//! Packaging tool for the `.fmu` (skeleton: the packaging issue fills it in).

fn main() {
    eprintln!(
        "build-fmu: packaging is not implemented yet: the FMU itself (fmu-src) exports no \
         FMI functions so far. Nothing was written."
    );
    std::process::exit(2);
}
