#!/usr/bin/env bash
# The main job: build and package the FMU, then run two simulator processes coupled
# through it over shared memory, printing the attitudes crossing and the step time.
# Extra arguments go to the simulators (e.g. --steps 1000000). With --rfm2g-sim the
# two couple through /dev/rfm2g0 on two boards of the RFM2g emulator instead, as
# two PCs with cards would.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup demo
cargo run --release -p build-fmu
args=()
for a in "$@"; do
    if [[ "$a" == "--rfm2g-sim" ]]; then
        cargo build --release -p rfm2g-sim
        args+=(--rfm2g-sim "$PWD/target/release/librfm2g.so")
    else
        args+=("$a")
    fi
done
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu "${args[@]}"
