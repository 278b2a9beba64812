#!/usr/bin/env bash
# The coupling benchmarks (release build, a few minutes): packages the FMU, then
# runs every case in one run; writes target/bench/coupling.json and coupling.png
# and prints the table. Extra arguments go to the benchmark (e.g. --steps 200000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup bench
cargo run --release -p build-fmu -- --platform linux64
# The 100-Real case's FMUs, from the same binary.
mkdir -p target/interfaces
python3 scripts/reals_interface.py 100 > target/interfaces/reals100.toml
cargo run --release -p build-fmu -- --interface target/interfaces/reals100.toml --node all \
    --from target/fmu/rfm_attitude.fmu --out target/fmu/reals100
cargo build --release -p rfm2g-sim
cargo run --release -p rfm-bench --bin coupling -- "$@"
