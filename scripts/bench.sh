#!/usr/bin/env bash
# The coupling benchmarks (release build, a few minutes): packages the FMU, then
# runs every case in one run; writes target/bench/coupling.json and coupling.png
# and prints the table. Extra arguments go to the benchmark (e.g. --steps 200000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup bench
cargo run --release -p build-fmu -- --platform linux64 --glibc 2.28
# The 100- and 1,000-Real cases' FMUs, from the same binary.
mkdir -p target/interfaces
for n in 100 1000; do
    python3 scripts/reals_interface.py $n > target/interfaces/reals$n.toml
    cargo run --release -p build-fmu -- --interface target/interfaces/reals$n.toml --node all \
        --from target/fmu/rfm_attitude.fmu --out target/fmu/reals$n
done
# Cases 9 and 10: three nodes of every type, and the three-rate lab.
for iface in tests/interfaces/mixed.toml examples/lab.toml; do
    cargo run --release -p build-fmu -- --interface "$iface" --node all \
        --from target/fmu/rfm_attitude.fmu --out "target/fmu/$(basename "$iface" .toml)"
done
cargo build --release -p rfm2g-sim
# Case 12: the bridge and Zenoh's own ping-pong.
cargo build --release -p rfm-bridge
cargo run --release -p rfm-bench --bin coupling -- "$@"
