#!/usr/bin/env bash
# The formation lab (issue 48): two JSBSim aircraft, each its own simulator
# process, coupled over shm: by the formation interface's FMUs; the wingman
# holds a slot beside the leader from the leader's state that reaches it
# through the coupling.
#
#   scripts/formation.sh build [--no-cargo]     the FMUs, into target/fmu/formation
#   scripts/formation.sh fly [--lag L] [--seconds S] [--out DIR]
#                                               builds, flies both (FMPy, two
#                                               processes), prints the slot
#                                               error, writes DIR/formation.png
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

build() {
    # --no-cargo: build-fmu and the packaged FMU as they are (scripts/test.sh
    # built them, with the features of its whole package set).
    if [ "${1-}" != --no-cargo ]; then
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
    ls "$fmus"
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
    local device="shm:formation-$$" steps=$((seconds * 120))
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

case "${1-}" in
    build) shift; build "$@" ;;
    fly) shift; build; fly "$@" ;;
    *) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 2 ;;
esac
