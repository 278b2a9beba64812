#!/usr/bin/env bash
# The soak run: packages the FMU, then two processes couple through it in lockstep
# for 10^8 steps (or --steps N), checking every value; reports lost, duplicated,
# out-of-order and corrupted frames (all must be 0) and the step-time distribution.
#   scripts/soak.sh --device A+B --faults EVERY [--seed N]: on two emulated
#   redundant rings, a board of one ring cut at every multiple of EVERY steps
#   and mended EVERY/2 later (the seed printed: --seed replays the cuts).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup build
# Its own FMU, linux64 only (what it runs), beside the benchmark's: it
# replaces nothing build-fmu made in target/fmu.
cargo build --release -p build-fmu --bin build-fmu -p rfm-bench --bin soak
# The emulator on its own (the benchmark's counting features stay out of it),
# for --device A+B.
cargo build --release -p rfm2g-sim
target/release/build-fmu --platform linux64 --glibc 2.28 --out target/bench/fmu/rfm_attitude.fmu
target/release/soak "$@"
