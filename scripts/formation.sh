#!/usr/bin/env bash
# The formation lab (issue 48): two JSBSim aircraft, each its own simulator
# process, coupled over shm: by the formation interface's FMUs; the wingman
# holds a slot beside the leader from the leader's state that reaches it
# through the coupling.
#
#   scripts/formation.sh build [--no-cargo]     the FMUs and each simulator's
#                                               SSP, into target/fmu/formation;
#                                               the three-rate lab with a JSBSim
#                                               cockpit (examples/jsbsim-lab),
#                                               into target/fmu/jsbsim-lab
#   scripts/formation.sh fly [--no-cargo] [--lag L] [--seconds S] [--out DIR]
#                                               builds, flies both (FMPy, two
#                                               processes), prints the slot
#                                               error, writes DIR/formation.png
# --no-cargo: build-fmu and target/fmu/rfm_attitude.fmu as they are.
#
# The aircraft, the leader's manoeuvre and the wingman's autopilot are
# pythonfmu FMUs built from examples/formation/*.py; JSBSim and its aircraft
# come from the `jsbsim` package in .venv (nothing of it is in this
# repository). See docs/src/guide/formation.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup formation

fmus=target/fmu/formation
lab=target/fmu/jsbsim-lab

build() {
    # --no-cargo: build-fmu and the packaged FMU as they are (scripts/test.sh
    # built them, with the features of its whole package set).
    if [ "$1" = yes ]; then
        echo "==> building build-fmu and the packaged FMU"
        cargo build --release -q -p build-fmu
        target/release/build-fmu --glibc 2.28
    fi
    echo "==> the formation's FMUs, into $fmus"
    target/release/build-fmu --interface examples/formation.toml --node all \
        --from target/fmu/rfm_attitude.fmu --out "$fmus" > /dev/null
    for model in aircraft manoeuvre slot_keeper; do
        .venv/bin/pythonfmu build -f "examples/formation/$model.py" -d "$fmus" > /dev/null
    done
    # Each simulator as its master runs it: one SSP each (libcosim, ecos).
    for node in leader wingman; do
        target/release/build-fmu --interface examples/formation.toml \
            --system "examples/formation/$node.toml" --from target/fmu/rfm_attitude.fmu \
            --out "$fmus" --ssp "$fmus/$node.ssp" 2>&1 | tail -1
    done
    # The three-rate lab with a JSBSim cockpit: its three simulators' SSPs.
    echo "==> the three-rate lab with a JSBSim cockpit, into $lab"
    mkdir -p "$lab"
    cp "$fmus/Aircraft.fmu" "$lab/"
    .venv/bin/pythonfmu build -f examples/jsbsim-lab/instructor.py -d "$lab" > /dev/null
    for node in cockpit visual ios; do
        target/release/build-fmu --interface examples/lab.toml \
            --system "examples/jsbsim-lab/$node.toml" --from target/fmu/rfm_attitude.fmu \
            --out "$lab" --ssp "$lab/$node.ssp" 2>&1 | tail -1
    done
}

fly() {
    local lag=0 seconds=70 out=target/formation
    while [ $# -gt 0 ]; do
        case "$1" in
            --lag) lag=$2; shift ;;
            --seconds) seconds=$2; shift ;;
            --out) out=$2; shift ;;
            *) echo "scripts/formation.sh fly: unknown argument \`$1\`" >&2; exit 2 ;;
        esac
        shift
    done
    mkdir -p "$out"
    local device="shm:formation-$$" steps=$((seconds * 125))
    # shellcheck disable=SC2064 # the name is fixed now
    trap "rm -f /dev/shm/${device#shm:}" EXIT
    echo "==> flying $seconds s: leader and wingman, two processes over $device, lag $lag"
    local common=(--fmus "$fmus" --device "$device" --lag "$lag" --steps "$steps")
    .venv/bin/python examples/formation/fly.py leader "${common[@]}" --out "$out/leader.json" &
    local leader=$!
    .venv/bin/python examples/formation/fly.py wingman "${common[@]}" --out "$out/wingman.json"
    wait "$leader"
    .venv/bin/python examples/formation/report.py "$out/leader.json" "$out/wingman.json" \
        --picture "$out/formation.png"
}

what=${1-}
shift || true
cargo=yes
if [ "${1-}" = --no-cargo ]; then
    cargo=no
    shift
fi
case "$what" in
    build) build "$cargo" ;;
    fly) build "$cargo"; fly "$@" ;;
    *) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 2 ;;
esac
