#!/usr/bin/env bash
# Ring cuts and mends at moments nobody chose (issue 47): the three-rate lab
# (paced at real time, 2 s) and the attitude pair (4,000,000 steps, about 2 s)
# alternating on the same two emulated rings (each node a board of ring A and
# one of ring B, `/dev/rfm2g0+/dev/rfm2g1`); in each run one board of one
# ring, chosen at random, is cut 0-1.5 s after the nodes start (so also while
# they claim their slots and take their first frames) and mended 50-400 ms
# later, `CYCLES` times (default 1). The other ring is always whole, so every
# run must pass, every value checked by the rule.
# Prints its seed; `SEED=N` replays the same cuts. `RUNS` (default 30),
# `RING=a|b` to cut one ring only. A step of scripts/test.sh (fixed seed).
# Needs target/release/{lab,simulators,rfmctl,librfm2g.so} and the FMUs
# test.sh packs (target/fmu/rfm_attitude.fmu, target/fmu/lab).
set -euo pipefail
cd "$(dirname "$0")/.."

seed=${SEED:-$((RANDOM * 32768 + RANDOM))}
runs=${RUNS:-30}
cycles=${CYCLES:-1}
RANDOM=$seed
tag="rfm-faults-$$"
lib="$PWD/target/release/librfm2g.so"
logs="target/$tag"
mkdir -p "$logs"
cleanup() { rm -f /dev/shm/rfm2g-sim."$tag"-a* /dev/shm/rfm2g-sim."$tag"-b*; }
trap cleanup EXIT
echo "ring-faults: seed $seed ($runs runs, $cycles cut and mend each; SEED=$seed replays them)"

# Milliseconds as sleep's seconds.
ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

failed=0
for run in $(seq 1 "$runs"); do
    if [ $((run % 2)) = 1 ]; then
        what=lab nodes=3
        cmd=(target/release/lab --dir target/fmu/lab --interface lab --nodes cockpit,visual,ios
             --stop 2 --real-time-factor 1 --periods 0.001,1/60,0.1 --free visual:ios --start-jitter 50)
    else
        what=pair nodes=2
        cmd=(target/release/simulators target/fmu/rfm_attitude.fmu --steps 4000000 --start-jitter 50)
    fi
    "${cmd[@]}" --rfm2g-sim "$lib" --ring "$tag" --redundant > "$logs/$run.log" 2>&1 &
    coupling=$!
    cuts=""
    for _ in $(seq 1 "$cycles"); do
        ring=${RING:-$([ $((RANDOM % 2)) = 0 ] && echo a || echo b)}
        board="/dev/rfm2g-sim/$tag-$ring/$((1 + RANDOM % nodes))/1M"
        before=$((RANDOM % 1500)) down=$((50 + RANDOM % 351))
        sleep "$(ms "$before")"
        # A ring that no node opened yet cannot be cut (rfmctl refuses it).
        target/release/rfmctl --library "$lib" cut "$board" > /dev/null 2>&1 || true
        sleep "$(ms "$down")"
        target/release/rfmctl --library "$lib" mend "$board" > /dev/null 2>&1 || true
        cuts="$cuts ${board#/dev/rfm2g-sim/$tag-} at +${before} ms for ${down} ms;"
    done
    if wait "$coupling"; then
        echo "ring-faults: run $run ($what):$cuts passed"
    else
        failed=$((failed + 1))
        echo "ring-faults: run $run ($what):$cuts FAILED: $(grep -m1 -E '\[Error|[Ee]rror:|failed' "$logs/$run.log" | cut -c1-300)"
    fi
done
echo "ring-faults: $failed of $runs runs failed (seed $seed); logs in $logs"
[ "$failed" = 0 ]
