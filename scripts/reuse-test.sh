#!/usr/bin/env bash
# One memory, many couplings: a lab reuses the same memory run after run, and
# its interface changes between runs. Every coupling below starts where
# another interface ran before, its node processes started in random order
# (0-50 ms apart), and checks every value it reads:
#   1. 30 rounds alternating the three-node lab and the attitude pair on one
#      shm: name;
#   2. the same on one emulated RFM2g ring (each node its own board);
#   3. a two-node interface of the test's own (tests/interfaces/motion.toml)
#      after the attitude pair, its slot-1 node started first, 20 times.
# 0 failures allowed. Needs target/release/{lab,simulators,librfm2g.so} and the
# FMUs test.sh packs (target/fmu/rfm_attitude.fmu, target/fmu/lab,
# target/fmu/motion).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-30}
tag="rfm-reuse-$$"
log="target/$tag.log"
cleanup() { rm -f /dev/shm/"$tag" /dev/shm/rfm2g-sim."$tag" "$log"; }
trap cleanup EXIT

lib="$PWD/target/release/librfm2g.so"
run() {
    if ! "$@" > "$log" 2>&1; then
        echo "reuse-test: failed: $*" >&2
        cat "$log" >&2
        exit 1
    fi
}
lab() {
    target/release/lab --dir target/fmu/lab --interface lab --nodes cockpit,visual,ios \
        --stop 2 --periods 0.001,1/60,0.1 --free visual:ios --start-jitter 50 "$@"
}
pair() {
    target/release/simulators target/fmu/rfm_attitude.fmu --steps 2000 --start-jitter 50 "$@"
}

for memory in shm ring; do
    for round in $(seq 1 "$rounds"); do
        if [ "$memory" = shm ]; then
            run lab --device "shm:$tag,shm:$tag,shm:$tag"
            run pair --device "shm:$tag"
        else
            run lab --rfm2g-sim "$lib" --ring "$tag"
            run pair --rfm2g-sim "$lib" --ring "$tag"
        fi
    done
    echo "reuse-test: $memory: $rounds rounds of the lab then the attitude pair on one memory, every value exact"
done

rm -f /dev/shm/"$tag"
for round in $(seq 1 20); do
    run pair --device "shm:$tag" --steps 500
    run target/release/lab --dir target/fmu/motion --interface motion --nodes flight,platform \
        --steps 1000 --periods 0.002,0.002 --device "shm:$tag,shm:$tag" --first platform \
        --start-jitter 20
done
echo "reuse-test: 20 rounds of the attitude pair then interface motion, its slot-1 node started first, every value exact"
