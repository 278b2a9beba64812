#!/usr/bin/env bash
# The soak run: packages the FMU, then two processes couple through it in lockstep
# for 10^8 steps (or --steps N), checking every value; reports lost, duplicated,
# out-of-order and corrupted frames (all must be 0) and the step-time distribution.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup build
cargo run --release -p build-fmu -- --platform linux64 --glibc 2.28
cargo run --release -p rfm-bench --bin soak -- "$@"
