#!/usr/bin/env bash
# The main job: build and package the FMU, then run two simulator processes coupled
# through it over shared memory, printing the attitudes crossing and the step time.
# Extra arguments go to the simulators (e.g. --steps 1000000). With --rfm2g-sim the
# two couple through /dev/rfm2g0 on two boards of the RFM2g emulator instead, as
# two PCs with cards would. With --record DIR each side records its run into
# DIR/aircraft0.rec and DIR/aircraft1.rec, and DIR/attitude.png plots both
# aircraft's roll from aircraft 0's recording (rfmctl show, export,
# plot and diff read them).
#
# `scripts/demo.sh formation [--lag L] [--seconds S] [--out DIR]` flies the
# formation instead: two JSBSim aircraft in two simulator processes, the
# wingman holding a slot beside the leader from the state that reaches it
# through the coupling; it prints the slot error and writes
# DIR/formation.png (default target/formation). See scripts/formation.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1-}" = formation ]; then
    shift
    exec scripts/formation.sh fly "$@"
fi
source scripts/setup.sh
setup demo
cargo run --release -p build-fmu -- --glibc 2.28
args=()
record=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rfm2g-sim)
            cargo build --release -p rfm2g-sim
            args+=(--rfm2g-sim "$PWD/target/release/librfm2g.so")
            ;;
        --record)
            record=$(mkdir -p "$2" && cd "$2" && pwd)
            args+=(--record "$record")
            shift
            ;;
        *) args+=("$1") ;;
    esac
    shift
done
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu "${args[@]}"
if [ -n "$record" ]; then
    cargo build --release -p rfmctl
    target/release/rfmctl show "$record/aircraft0.rec"
    target/release/rfmctl plot "$record/aircraft0.rec" \
        --signals slot0.roll,slot1.roll --out "$record/attitude.png"
fi
