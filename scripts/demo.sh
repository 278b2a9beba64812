#!/usr/bin/env bash
# The main job: build and package the FMU for this machine, then run two
# simulator processes coupled through it over shared memory, printing the
# attitudes crossing and the step time. Extra arguments go to the simulators
# (e.g. --steps 1000000). With --rfm2g-sim the two couple through /dev/rfm2g0
# on two boards of the RFM2g emulator instead, as two PCs with cards would.
# With --record DIR each side records its run into DIR/aircraft0.rec and
# DIR/aircraft1.rec, and DIR/attitude.png plots both aircraft's roll from
# aircraft 0's recording (rfmctl show, export, plot and diff read them).
#
# The FMU goes to target/demo/rfm_attitude.fmu, linux64 only (what the demo
# runs): it replaces nothing `build-fmu` made in target/fmu (linux64 and
# win64, for a lab).
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

args=()
record=""
# What the demo runs, built by one cargo invocation (one release build: the
# crates they share are compiled once, with one set of features).
build=(-p build-fmu --bin build-fmu -p artefact-tests --bin simulators)
what="build-fmu (the packager) and simulators (the demo's master, the fmi crate's importer)"
while [ $# -gt 0 ]; do
    case "$1" in
        --rfm2g-sim)
            build+=(-p rfm2g-sim --lib)
            what+=", the RFM2g emulator (librfm2g.so)"
            args+=(--rfm2g-sim "$PWD/target/release/librfm2g.so")
            ;;
        --record)
            [ $# -ge 2 ] || { echo "scripts/demo.sh: --record DIR (the folder for the recordings)" >&2; exit 2; }
            record=$(mkdir -p "$2" && cd "$2" && pwd)
            build+=(-p rfmctl --bin rfmctl)
            what+=", rfmctl (reads the recordings)"
            args+=(--record "$record")
            shift
            ;;
        *) args+=("$1") ;;
    esac
    shift
done

source scripts/setup.sh
setup demo
echo "==> building $what: one release build (about a minute on 2 cores the first time)"
cargo build --release "${build[@]}"
fmu=target/demo/rfm_attitude.fmu
echo "==> packing $fmu for linux64: build-fmu compiles the FMU with its own profile" \
    "(fat LTO, linked against glibc 2.28; about 20 s the first time), then verifies the archive"
build_venv_wait
target/release/build-fmu --platform linux64 --glibc 2.28 --out "$fmu"
echo "==> two simulator processes coupled through $fmu"
target/release/simulators "$fmu" "${args[@]}"
if [ -n "$record" ]; then
    target/release/rfmctl show "$record/aircraft0.rec"
    target/release/rfmctl plot "$record/aircraft0.rec" \
        --signals slot0.roll,slot1.roll --out "$record/attitude.png"
fi
