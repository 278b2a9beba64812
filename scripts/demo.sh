#!/usr/bin/env bash
# The main job: build and package the FMU, then run two simulator processes coupled
# through it over shared memory, printing the attitudes crossing and the step time.
# Extra arguments go to the simulators (e.g. --steps 1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup demo
cargo run --release -p build-fmu
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu "$@"
