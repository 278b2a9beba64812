#!/usr/bin/env bash
# The coupling benchmarks (release build, a few minutes): packages the FMU, then
# runs every case in one run; writes target/bench/coupling.json and coupling.png
# and prints the table. Extra arguments go to the benchmark (e.g. --steps 200000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup bench
cargo run --release -p build-fmu -- --platform linux64
cargo build --release -p rfm2g-sim
cargo run --release -p rfm-bench --bin coupling -- "$@"
