#!/usr/bin/env bash
# PCs without cards: shm: memories on one host standing for two or three PCs,
# joined by rfm-bridge over TCP, and the packaged FMUs coupled through them.
#
#   scripts/bridge-test.sh [loopback|netns]
#
# loopback: every bridge on 127.0.0.1. netns: two network namespaces joined by
# a veth pair, one "PC" in each (needs `ip netns`; skipped with the reason when
# it is not permitted). Needs target/release/{rfm-bridge,simulators,lab,rfmctl,
# librfm2g.so} and the FMUs test.sh packs (target/fmu/rfm_attitude.fmu,
# target/fmu/lab).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-loopback}
bridge=target/release/rfm-bridge
simulators=target/release/simulators
tag="rfm-bridge-test-$$"
pids=()
namespaces=()
links=()

cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for l in "${links[@]}"; do ip link del "$l" 2>/dev/null || true; done
    for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    rm -f /dev/shm/"$tag"-* /dev/shm/rfm2g-sim."$tag"-* "target/$tag.why"
}
trap cleanup EXIT

fail() { echo "bridge-test: $*" >&2; exit 1; }

# The addresses the bridges listen on.
addr_a=127.0.0.1
addr_b=127.0.0.1
# Two namespaces joined by a veth pair; fails (for the skip's reason) at the
# first step this machine does not permit.
netns_setup() {
    local a="$tag-a" b="$tag-b" va="veth-$$-a" vb="veth-$$-b"
    ip netns add "$a" && namespaces+=("$a") &&
        ip netns add "$b" && namespaces+=("$b") &&
        ip link add "$va" type veth peer name "$vb" && links+=("$va") &&
        ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" &&
        ip -n "$a" addr add 10.77.0.1/24 dev "$va" &&
        ip -n "$b" addr add 10.77.0.2/24 dev "$vb" &&
        ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
        ip -n "$a" link set "$va" up && ip -n "$b" link set "$vb" up &&
        ip netns exec "$a" true && ip netns exec "$b" true
}
if [ "$mode" = netns ]; then
    if ! command -v ip > /dev/null; then
        echo "bridge-test: skipped over a veth pair: no \`ip\` command (iproute2)"
        exit 0
    fi
    if ! netns_setup 2> "target/$tag.why"; then
        echo "bridge-test: skipped over a veth pair: this machine does not permit it ($(tr '\n' ' ' < "target/$tag.why"))"
        exit 0
    fi
    addr_a=10.77.0.1
    addr_b=10.77.0.2
    echo "bridge-test: two network namespaces joined by a veth pair ($addr_a, $addr_b)"
fi
# Host A's and host B's commands (in their namespaces, if any).
# (exec: started in the background, the job's pid is the program's own.)
on_a() { if [ "$mode" = netns ]; then exec ip netns exec "$tag-a" "$@"; else exec "$@"; fi; }
on_b() { if [ "$mode" = netns ]; then exec ip netns exec "$tag-b" "$@"; else exec "$@"; fi; }

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_bridge HOST LOG ARGS...: starts a bridge on host A or B; its pid in $started.
start_bridge() {
    local host=$1 log=$2
    shift 2
    "on_$host" "$bridge" "$@" --report 1 > "$log" 2>&1 &
    started=$!
    pids+=("$started")
}

# Until a bridge's log says another bridge joined (at most 20 s).
joined() {
    for _ in $(seq 200); do
        grep -q "joined" "$1" && return 0
        sleep 0.1
    done
    cat "$1" >&2
    fail "no bridge joined $1 within 20 s"
}

mem_a="shm:$tag-a" mem_b="shm:$tag-b"
pa=$(port)
start_bridge a "target/$tag-a.log" "$mem_a" --listen "tcp/$addr_a:$pa"
bridge_a=$started
start_bridge b "target/$tag-b.log" "$mem_b" --connect "tcp/$addr_a:$pa"
bridge_b=$started
joined "target/$tag-a.log"
joined "target/$tag-b.log"

# The attitude pair, aircraft i on memory i. (Under netns the FMUs run in
# the root namespace: a namespace does not separate /dev/shm, and what must
# cross the veth pair is the bridges' traffic.)
pair() {
    # pair STEPS LAG
    "$simulators" target/fmu/rfm_attitude.fmu --steps "$1" --lag "$2" --device "$mem_a,$mem_b"
}

echo "bridge-test: the attitude pair, 10,000 lockstep steps at lag 0 over two bridges"
pair 10000 0 | tail -2
echo "bridge-test: 5,000 lockstep steps at lag 1"
pair 5000 1 | tail -2
grep -q "remote node" "target/$tag-a.log" || fail "bridge A never wrote a remote node"
grep -q "one-way" "target/$tag-a.log" || fail "bridge A printed no latency"

echo "bridge-test: rfmctl watch on host B shows host A's aircraft as remote"
"$simulators" target/fmu/rfm_attitude.fmu --steps 100000000 --device "$mem_a,$mem_b" --timeout 1 \
    > "target/$tag-long.log" 2>&1 &
coupling=$!
pids+=("$coupling")
for _ in $(seq 100); do
    target/release/rfmctl watch "$mem_b" --once 2>/dev/null | grep -q "remote" && break
    sleep 0.1
done
target/release/rfmctl watch "$mem_b" --once | tee "target/$tag-watch.txt"
grep -E "^ +0 .*remote" "target/$tag-watch.txt" > /dev/null || fail "slot 0 is not shown as remote on host B"
grep -E "^ +1 .*remote" "target/$tag-watch.txt" > /dev/null && fail "slot 1 (host B's own) is shown as remote"

echo "bridge-test: host A's aircraft's own timing reaches host B (its statistics block, over the bridges)"
remote_stats() {
    target/release/rfmctl watch "$mem_b" --once --json --interval 0.1 2>/dev/null | python3 -c '
import json, sys
slots = {n["slot"]: n for n in json.load(sys.stdin)["slots"]}
a = slots.get(0) or {}
sys.exit(0 if a.get("holder", {}).get("remote") and (a.get("stats") or {}).get("samples", 0) > 0 else 1)'
}
published=
for _ in $(seq 50); do
    remote_stats && published=yes && break
    sleep 0.1
done
[ -n "$published" ] || fail "host B shows no statistics of host A's aircraft"

echo "bridge-test: a node claiming on host B the slot host A's aircraft holds is refused at its claim"
started_at=$(date +%s)
if timeout 20 "$simulators" target/fmu/rfm_attitude.fmu --node 0 --device "$mem_b" --steps 10; then
    fail "a second holder of slot 0 ran on host B"
fi
[ $(($(date +%s) - started_at)) -lt 5 ] || fail "the refusal took longer than 5 s (startupTimeout, not the claim?)"

echo "bridge-test: bridge B killed: both aircraft fail within their timeout (1 s)"
killed_at=$(date +%s.%N)
kill -KILL "$bridge_b"
wait "$coupling" && fail "the coupling went on without its bridge"
ended_at=$(date +%s.%N)
python3 - "$killed_at" "$ended_at" <<'EOF'
import sys
took = float(sys.argv[2]) - float(sys.argv[1])
print(f"bridge-test: the coupling failed {took:.2f} s after the bridge was killed")
# The timeout, a beat's mirroring and the master's last step: well under 2.5 s.
sys.exit(0 if took < 2.5 else 1)
EOF
grep -E "dead|silent|timeout" "target/$tag-long.log" | head -2 || true

echo "bridge-test: bridge B restarted: a fresh coupling on the same names works"
start_bridge b "target/$tag-b2.log" "$mem_b" --connect "tcp/$addr_a:$pa"
bridge_b=$started
joined "target/$tag-b2.log"
pair 10000 0 | tail -1

echo "bridge-test: bridge B restarted under a running coupling: it resumes"
"$simulators" target/fmu/rfm_attitude.fmu --steps 20000 --device "$mem_a,$mem_b" --timeout 10 \
    > "target/$tag-resume.log" 2>&1 &
coupling=$!
pids+=("$coupling")
sleep 1
kill -KILL "$bridge_b"
sleep 0.3
start_bridge b "target/$tag-b3.log" "$mem_b" --connect "tcp/$addr_a:$pa"
bridge_b=$started
wait "$coupling" || { cat "target/$tag-resume.log" >&2; fail "the coupling did not resume"; }
tail -1 "target/$tag-resume.log"

echo "bridge-test: 20 tries of two nodes claiming one slot on the two bridged memories at one moment"
# Each try a slot of its own (10..29), each claimant on its own host's memory,
# both claiming at one wall-clock instant: exactly one owns the slot, and the
# other is refused at its claim, naming the winner (never later, at a beat).
for try in $(seq 0 19); do
    slot=$((10 + try))
    at=$(python3 -c 'import time; print(time.time_ns() + 300_000_000)')
    target/release/examples/claim "$mem_a" "$slot" "$at" 800 > "target/$tag-claim-a.txt" 2>&1 &
    claim_a=$!
    target/release/examples/claim "$mem_b" "$slot" "$at" 800 > "target/$tag-claim-b.txt" 2>&1 &
    claim_b=$!
    wait "$claim_a" "$claim_b"
    python3 - "$try" "target/$tag-claim-a.txt" "target/$tag-claim-b.txt" <<'EOF'
import sys
attempt, files = sys.argv[1], sys.argv[2:]
lines = [open(f).read().strip() for f in files]
won = [l for l in lines if l.startswith("won ")]
refused = [l for l in lines if l.startswith("refused ")]
ok = len(won) == 1 and len(refused) == 1
if ok:
    token = won[0].split()[1]
    ok = token in refused[0] and "on another host" in refused[0]
if not ok:
    sys.exit(f"bridge-test: claim try {attempt}: not one owner and one refusal naming it: {lines}")
EOF
done
echo "bridge-test: 20 tries: one owner each, the other refused at its claim naming it (on another host)"
rm -f "target/$tag-claim-a.txt" "target/$tag-claim-b.txt"

if [ "$mode" = loopback ]; then
    echo "bridge-test: the three lab FMUs on three memories with three bridges (1 kHz, 1/60 s, 10 Hz)"
    # Fresh memories: a coupling of one interface after another's in the
    # same memory is not what this tests.
    mem_a="shm:$tag-la" mem_b="shm:$tag-lb" mem_c="shm:$tag-lc"
    for p in "$bridge_a" "$bridge_b"; do
        kill -TERM "$p"
        wait "$p" || fail "a bridge ended by SIGTERM did not exit 0"
    done
    pa=$(port) pb=$(port) pc=$(port)
    start_bridge a "target/$tag-la.log" "$mem_a" --listen "tcp/127.0.0.1:$pa"
    start_bridge a "target/$tag-lb.log" "$mem_b" --listen "tcp/127.0.0.1:$pb" --connect "tcp/127.0.0.1:$pa"
    start_bridge a "target/$tag-lc.log" "$mem_c" --listen "tcp/127.0.0.1:$pc" \
        --connect "tcp/127.0.0.1:$pa" --connect "tcp/127.0.0.1:$pb"
    for log in la lb lc; do
        for _ in $(seq 200); do
            [ "$(grep -c joined "target/$tag-$log.log")" -ge 2 ] && break
            sleep 0.1
        done
    done
    for lags in 0,0,0 1,2,0; do
        target/release/lab --dir target/fmu/lab --interface lab --nodes cockpit,visual,ios --stop 10 \
            --periods 0.001,1/60,0.1 --free visual:ios --lags "$lags" --device "$mem_a,$mem_b,$mem_c"
    done

    echo "bridge-test: two emulated RFM2g rings, each extended to the other by a bridge on its second board"
    lib="$PWD/target/release/librfm2g.so"
    pr=$(port)
    start_bridge a "target/$tag-ra.log" "/dev/rfm2g-sim/$tag-ra/2/1M" --library "$lib" \
        --listen "tcp/127.0.0.1:$pr"
    start_bridge a "target/$tag-rb.log" "/dev/rfm2g-sim/$tag-rb/2/1M" --library "$lib" \
        --connect "tcp/127.0.0.1:$pr"
    joined "target/$tag-rb.log"
    # Each aircraft on board 1 of its ring; the FMU finds the emulator as
    # librfm2g.so on the library path.
    LD_LIBRARY_PATH="$PWD/target/release" "$simulators" target/fmu/rfm_attitude.fmu --steps 2000 \
        --device "/dev/rfm2g-sim/$tag-ra/1/1M,/dev/rfm2g-sim/$tag-rb/1/1M" | tail -1

    echo "bridge-test: bad input exits non-zero within seconds, naming it"
    expect() {
        # expect TEXT COMMAND...
        local text=$1
        shift
        local out
        if out=$(timeout 10 "$@" 2>&1); then fail "\`$*\` succeeded"; fi
        echo "$out" | grep -q -- "$text" || { echo "$out" >&2; fail "\`$*\` did not say \`$text\`"; }
        echo "  $* -> $(echo "$out" | grep -- "$text" | head -1)"
    }
    expect "unknown device \`nonsense:x\`" "$bridge" nonsense:x
    expect "endpoint \`tcp/127.0.0.1\` cannot be parsed" "$bridge" "$mem_a" --connect tcp/127.0.0.1
    expect "endpoint \`foo\` cannot be parsed" "$bridge" "$mem_a" --listen foo
    expect "is the port in use" "$bridge" "shm:$tag-d" --listen "tcp/127.0.0.1:$pa"
    expect "couples a memory of 1048576 bytes" "$bridge" "shm:$tag-e" --memory-size 2097152 \
        --connect "tcp/127.0.0.1:$pa"
fi
echo "bridge-test: passed ($mode)"
