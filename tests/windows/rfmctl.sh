#!/usr/bin/env bash
# rfmctl.exe under Wine: each subcommand once on \\.\rfm2gN boards of an
# emulated ring through rfm2gdll_stdc_64.dll (found next to rfmctl.exe), and on
# a shm: memory that two master processes are coupling through.
# Usage: tests/windows/rfmctl.sh RFMCTL_EXE RFM2G_DLL
# (from the repository root, after scripts/wine.sh's wine_setup and
# tests/windows/run.sh, whose master.exe and unpacked FMU it uses).
set -euo pipefail
out=target/wine/rfmctl
rm -rf "$out"
mkdir -p "$out"
cp "$1" "$out/rfmctl.exe"
cp "$2" "$out/rfm2gdll_stdc_64.dll"
rfmctl() { echo "+ rfmctl $*"; wine "$out/rfmctl.exe" "$@"; }

# Two boards of one ring in this "PC". A Windows ring lives while a program has
# one of its boards open: a waiting `events wait` holds it for the poke/peek.
export RFM2G_SIM_DEVICES="\\\\.\\rfm2g0 ring=rfmctl-$$ node=1 size=1M;\\\\.\\rfm2g1 ring=rfmctl-$$ node=2 size=1M"
rfmctl info '\\.\rfm2g0'
wine "$out/rfmctl.exe" events wait '\\.\rfm2g1' --timeout-ms 20000 > "$out/events" &
waiter=$!
sleep 2
rfmctl poke '\\.\rfm2g0' 0x100 0xdeadbeef
rfmctl peek '\\.\rfm2g1' 0x100 | tee "$out/peek"
grep -q "0xdeadbeef" "$out/peek"
rfmctl dump '\\.\rfm2g1' 0x100 16 | tee "$out/dump"
grep -q "ef be ad de" "$out/dump"
rfmctl ring-check '\\.\rfm2g0'
rfmctl doctor '\\.\rfm2g0' --seconds 0.2 | tee "$out/doctor"
grep -q "PASS  ring" "$out/doctor"
# The Windows PC's own checks print (a verdict each; Wine may give no plan).
grep -E "^(PASS|WARN|SKIP)  power-plan" "$out/doctor"
grep -E "^(PASS|WARN|SKIP)  timer-resolution" "$out/doctor"
rfmctl ping '\\.\rfm2g0' --slot 5 --peer 6 --both --count 2000 | tail -3
rfmctl events send '\\.\rfm2g0' --to 2 --data 42
wait "$waiter"
cat "$out/events"
grep -q "INTR1 from node 1, data 0x0000002a (42)" "$out/events"

# shm:: memory two simulators created (master.exe processes), watched and
# inspected while they run. They are given more steps than they can finish and
# stopped once looked at: a fixed pause raced them on a fast machine, which
# finished 10,000,000 steps before watch looked.
dir="Z:${PWD//\//\\}\\target\\wine\\fmu\\rfm_attitude"
name=rfmctl-$$
masters=()
for me in 0 1; do
    wine target/wine/master.exe "$dir" node "$me" 1000000000 "shm:$name" > "$out/node$me" &
    masters+=($!)
done
stop_masters() { kill "${masters[@]}" 2>/dev/null || true; wait "${masters[@]}" 2>/dev/null || true; }
trap stop_masters EXIT
live=
for _ in $(seq 60); do
    if wine "$out/rfmctl.exe" watch "shm:$name" --once > "$out/watch" 2>&1 \
        && grep -q "live" "$out/watch"; then
        live=yes
        break
    fi
    sleep 1
done
cat "$out/watch"
[ -n "$live" ] || { echo "the two masters were not seen live on shm:$name in 60 s" >&2; exit 1; }
rfmctl info "shm:$name"
rfmctl peek "shm:$name" 0
rfmctl dump "shm:$name" 0 64 --decode
rfmctl ping "shm:$name" --slot 10 --peer 11 --both --count 2000 | tail -3
rfmctl watch "shm:$name" --once | tee "$out/watch"
grep -q "live" "$out/watch"
stop_masters
trap - EXIT
echo "rfmctl.exe: every subcommand ran on \\\\.\\rfm2gN (emulated) and on shm:"
