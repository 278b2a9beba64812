#!/usr/bin/env bash
# Every check of the project, from a fresh Debian machine with Rust (stable and
# nightly); installs what it needs itself (scripts/setup.sh).
#
#   scripts/test.sh           every check (CI runs this; about 27-40 minutes from a
#                             fresh clone on 2 cores)
#   scripts/test.sh --quick   the loop to run after every change: fmt, clippy,
#                             the fast tests, the import-circle check, the
#                             packaged FMU in FMPy (2-4 minutes on a warm tree)
#
# A table of each step's minutes and the total ends every run, passed or failed.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
# The ring-faults step's seed: fixed, so that a failure in CI replays here
# (SEED=N bash scripts/ring-faults.sh); RING_FAULTS_SEED=N tries another.
RING_FAULTS_SEED=${RING_FAULTS_SEED:-20261204}
case "${1-}" in
    "") ;;
    --quick) mode=quick ;;
    -h | --help)
        sed -n '2,11s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *)
        echo "scripts/test.sh: unknown argument \`$1\`: --quick for the quick loop, none for every check" >&2
        exit 2
        ;;
esac

source scripts/setup.sh
source scripts/wine.sh
source scripts/steps.sh
# /dev/shm as the run found it: the run leaves it so (checked at the end).
# What this script names itself ends in -$$ and is removed however it ends.
shm_before=$(ls -A /dev/shm 2>/dev/null | sort)
trap 'status=$?; rm -f /dev/shm/*-"$$"; step_table $status' EXIT
shm_left() {
    step shm-left "nothing left in /dev/shm: every test and script removes the shared memory it made, pass or fail"
    local left
    left=$(comm -13 <(printf '%s\n' "$shm_before") <(ls -A /dev/shm 2>/dev/null | sort))
    if [ -n "$left" ]; then
        printf 'left in /dev/shm by this run (the test or script that made each must remove it):\n%s\n' "$left" >&2
        exit 1
    fi
}
step setup "what the checks need, installed where missing (scripts/setup.sh)"
setup test

# Every build here is made once, so cargo's incremental caches would only take
# disk (about 1 GB of target/debug). A whole run from a clean checkout took
# 6.6 GB at its peak (target/, fuzz/target, the Wine prefix). The quick loop
# builds the same few crates again and again: there they pay.
if [ "$mode" = full ]; then
    export CARGO_INCREMENTAL=0
fi
NEED_GB=7
free_gb=$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')
if [ "$free_gb" -lt "$NEED_GB" ]; then
    printf 'warning: %s GB free where target/ lives; a whole run takes about %s GB, and a build\n' "$free_gb" "$NEED_GB"
    printf '         that runs out fails with "No space left on device": free some, or cargo clean\n'
fi

step fmt "cargo fmt --check"
cargo fmt --all -- --check

step clippy "cargo clippy -D warnings (workspace)"
cargo clippy --workspace --all-targets -- -D warnings
if [ "$mode" = full ]; then
    step clippy-windows "cargo clippy -D warnings for Windows: rfm-memory, rfm-frames, rfm-interface, rfm-thread, rfm-record, rfm-core, the FMU, the emulator, rfmctl"
    cargo clippy -p rfm-memory -p rfm-frames -p rfm-interface -p rfm-thread -p rfm-record -p rfm-core --target x86_64-pc-windows-gnu --lib --test conformance --test windows_shm -- -D warnings
    cargo clippy -p fmu-src -p rfm2g-sim -p rfmctl --target x86_64-pc-windows-gnu -- -D warnings

    # rustdoc checks the crates with the metadata clippy just made.
    step rustdoc "rustdoc (broken intra-doc links are errors)"
    RUSTDOCFLAGS="-D rustdoc::broken_intra_doc_links" cargo doc --workspace --no-deps --quiet

    step trees "the FMU and build-fmu build with cargo alone: nothing in their tree runs bindgen; the FMU is built without the memory's counts, and without the crates release builds leave unoptimized"
    if cargo tree -p fmu-src -p build-fmu -e normal,build --prefix none | grep -qE '^(bindgen|clang-sys) '; then
        echo "bindgen or clang-sys is in the dependency tree of fmu-src or build-fmu" >&2
        exit 1
    fi
    # build-fmu builds `-p fmu-src` alone: the features cargo resolves for it are
    # these, and the counting hooks must be empty there.
    if cargo tree -p fmu-src -e features -i rfm-memory --prefix none | grep -q 'rfm-memory feature "counts"'; then
        echo "the FMU would be built with rfm-memory's counts feature" >&2
        exit 1
    fi
    # The crates release builds leave unoptimized (Cargo.toml's
    # [profile.release.package.*]) stay out of the FMU.
    unoptimized=$(sed -n 's/^\[profile\.release\.package\.\(.*\)\]$/\1/p' Cargo.toml)
    if cargo tree -p fmu-src -e normal --prefix none | cut -d' ' -f1 | grep -xFf <(echo "$unoptimized"); then
        echo "the FMU would hold the crates above, which Cargo.toml compiles unoptimized" >&2
        exit 1
    fi
    # The bridge's network engine stays out of the FMU and its packager.
    if cargo tree -p fmu-src -p build-fmu -e normal,build --prefix none | grep -qE '^(zenoh|rfm-bridge) '; then
        echo "zenoh or rfm-bridge is in the dependency tree of fmu-src or build-fmu" >&2
        exit 1
    fi
fi

# The release tools in one build (one package set: cargo resolves the same
# features for all, and nothing is built twice), run from target/release/
# hereafter, never with `cargo run -p` (a set of one). The FMU is packaged
# before the tests, which load it.
step package "build-fmu: package target/fmu/rfm_attitude.fmu (linux64 + win64) and verify it, and its FMI 3.0 face (target/fmu/fmi3/rfm_attitude.fmu, the same binary)"
cargo build --release -p build-fmu -p rfm2g-sim -p rfmctl -p artefact-tests -p module-cycles
target/release/build-fmu --platform linux64,win64 --glibc 2.28
target/release/build-fmu --fmi 3 --from target/fmu/rfm_attitude.fmu --out target/fmu/fmi3/rfm_attitude.fmu

# The workspace's tests with cargo-nextest: each test its own process, two at a
# time across all the test binaries (cargo test runs one binary after another,
# so one long binary left a core idle); the doctests with cargo test, which
# nextest does not run. The quick profile (.config/nextest.toml) leaves out the
# few tests that take minutes. rfm-bridge's and rfm-bench's tests run in
# release below, where those crates are built anyway (rfm-bench's two in dev
# cost a dev build of iceoryx2's tree, which nothing else here needs). The
# emulator the tests load is built first, so that their nested
# `cargo build -p rfm2g-sim` finds it current. Every dev test command names
# the same package set (dev_tests), so none rebuilds what another built.
dev_tests=(--workspace --exclude rfm-bridge --exclude rfm-bench)
step tests "cargo nextest (workspace$([ "$mode" = quick ] && echo ", the quick profile"), including the fmi-crate master on the packaged .fmu; rfm-bridge's and rfm-bench's in release below), doctests"
cargo build -p rfm2g-sim
cargo nextest run "${dev_tests[@]}" --cargo-quiet --profile "$([ "$mode" = quick ] && echo quick || echo default)"
# The tests that fill a filesystem of their own in a private mount namespace:
# ignored in a plain run (the runner reports them skipped where unshare is
# refused), run here, where CI is root; they fail, never pass, when refused.
cargo nextest run "${dev_tests[@]}" --cargo-quiet --run-ignored only \
    -E 'test(a_full_dev_shm_is_an_error_at_open_never_a_sigbus) | test(a_recording_onto_a_full_disk_counts_and_tells_the_loss_as_it_happens)'
cargo test --doc "${dev_tests[@]}" --quiet

# The import-circle check, with the release tools: it parses every source
# file with syn, which unoptimized took 47 s on one core.
step module-cycles "no import circle between the modules of any crate of the workspace, no crate re-exporting another's items (module-cycles)"
target/release/module-cycles

# The book: built, every link and anchor checked, the Guide's snippets run as
# written, the Reference checked against the programs' own lists.
step book "the book: mdbook build, its links and anchors (LinkChecker), the Guide's snippets as written and the Reference against the programs (tests/python/test_book.py)"
scripts/book.sh
.venv/bin/pytest -q tests/python/test_book.py

if [ "$mode" = quick ]; then
    step fmpy "FMPy 0.3.32 on the packaged .fmu (validate, two instances, simulate, win64 exports), and on its FMI 3.0 face (validate, two FMI 3.0 instances, an FMI 3.0 node with an FMI 2.0 node, a lab's struct read and written back exact: uint64 past 2^53, floats, uint8 arrays; signals declared of C types and as arrays, each its own type and an array one variable, between FMI 3.0 and FMI 2.0 nodes; fmi-sim 0.7 as a third FMI 3.0 master: the attitude pair and the three-rate lab, a process a node)"
    .venv/bin/pytest -q tests/python/test_fmpy.py tests/python/test_fmi3.py tests/python/test_fmi3_struct.py \
        tests/python/test_fmi3_signals.py tests/python/test_fmi_sim.py
    # The lab tool reads every FMU's variables: a new variable it does not
    # know fails here, not only in the full run.
    step lab-quick "an interface's three FMUs in three processes in lockstep over shm: (lab, 2,000 steps)"
    target/release/build-fmu --interface tests/interfaces/mixed.toml --node all \
        --from target/fmu/rfm_attitude.fmu --out target/fmu/mixed > /dev/null
    target/release/lab --dir target/fmu/mixed --interface mixed \
        --nodes cockpit,visual,ios --steps 2000
    shm_left
    steps_passed "quick checks passed (scripts/test.sh runs every check)"
    exit 0
fi

step full-shm "liveness: a full /dev/shm in a private mount namespace (fails, saying why, if unshare is refused)"
# Built and run by the tests above; again with its output (the same package
# set: nothing is rebuilt).
cargo nextest run "${dev_tests[@]}" --cargo-quiet --run-ignored only -E 'binary(full_shm)' --no-capture

step wine-shm "Windows under Wine: shm: (named file mappings) through the conformance suite, and its security and size refusals"
wine_setup
cargo test -p rfm-memory -p rfm-frames --target x86_64-pc-windows-gnu --test conformance --test windows_shm
# loopback: across two copies of the library: the file mapping Local\rfm-loopback.PID.HASH
cargo test -p rfm-memory --target x86_64-pc-windows-gnu --lib backend::loopback

step wine-fmu "Windows under Wine: the packaged win64 FMU in a Windows master (LoadLibrary): self-loop, two instances at lag 1, two processes in lockstep over shm:, and over two emulated RFM2g boards through rfm2gdll_stdc_64.dll (spin, event), and on redundant rings (shm:A+shm:B, \\\\.\\rfm2g0+\\\\.\\rfm2g1); its FMI 3.0 face in a Windows FMI 3.0 master: two instances at lag 1, two at lag 0 in one thread through early returns, two processes over shm: and over the emulated ring"
# The emulator and rfmctl for Windows in one build (one package set).
cargo build --release -p rfm2g-sim -p rfmctl --target x86_64-pc-windows-gnu
tests/windows/run.sh target/fmu/rfm_attitude.fmu \
    target/x86_64-pc-windows-gnu/release/rfm2g.dll 100000
tests/windows/run3.sh target/fmu/fmi3/rfm_attitude.fmu \
    target/x86_64-pc-windows-gnu/release/rfm2g.dll 20000

step wine-article "Windows under Wine: the article's sender and receiver, built with MinGW as C and as C++ against rfm2gdll_stdc_64.dll, on two emulated boards (poll, event); the outputs match line for line"
tests/windows/article.sh target/x86_64-pc-windows-gnu/release/rfm2g.dll 500

step wine-rfmctl "Windows under Wine: rfmctl.exe, each subcommand on emulated \\\\.\\rfm2gN boards and on shm:"
tests/windows/rfmctl.sh target/x86_64-pc-windows-gnu/release/rfmctl.exe \
    target/x86_64-pc-windows-gnu/release/rfm2g.dll
step simulators "two simulator processes on two emulated RFM2g boards (rfm2g-sim), through the packaged .fmu"
target/release/simulators target/fmu/rfm_attitude.fmu \
    --steps 20000 --rfm2g-sim "$PWD/target/release/librfm2g.so"

step redundant "redundant rings: the attitude pair on two emulated rings (/dev/rfm2g0+/dev/rfm2g1), its board of ring A cut at step 3,000 and mended at 6,000, of ring B cut at 8,000 (rfm2g-sim's cut): every value exact, the frames from each ring and the failovers as the cuts say, no step with a cut 10 ms longer than one without; both rings cut: the timeout error within timeout"
target/release/simulators target/fmu/rfm_attitude.fmu --steps 10000 \
    --rfm2g-sim "$PWD/target/release/librfm2g.so" --redundant --cut a:3000..6000 --cut b:8000..
target/release/simulators target/fmu/rfm_attitude.fmu --steps 10000 \
    --rfm2g-sim "$PWD/target/release/librfm2g.so" --redundant --cut a:3000.. --cut b:3000.. \
    --expect-timeout 3000 --timeout 0.5

step recordings "recordings: two simulator processes record 10,000 lockstep steps over shm:; rfmctl show, export --csv, plot and diff read them, the two sides' recordings agree, and each aircraft replayed alone against either recording gets every peer attitude exact"
rm -rf target/record
target/release/simulators target/fmu/rfm_attitude.fmu \
    --steps 10000 --record "$PWD/target/record"
target/release/rfmctl show target/record/aircraft0.rec
target/release/rfmctl export target/record/aircraft1.rec --csv > target/record/aircraft1.csv
test "$(wc -l < target/record/aircraft1.csv)" = 20002 # a header and 20,001 frames
target/release/rfmctl plot target/record/aircraft0.rec --signals slot0.roll,slot1.roll \
    --out target/record/attitude.png
test -s target/record/attitude.png
target/release/rfmctl diff target/record/aircraft0.rec target/record/aircraft1.rec
# A third-party recorder on a running coupling: it reads every node's frames
# and counts the ones it missed.
target/release/simulators target/fmu/rfm_attitude.fmu \
    --steps 20000000 --device "shm:rfm-test-record-$$" > target/record/coupling.log &
coupling=$!
# Recorded once watch sees it live, not after a fixed pause (which raced a fast
# machine's coupling to its end).
for _ in $(seq 120); do
    target/release/rfmctl watch "shm:rfm-test-record-$$" --once 2>/dev/null | grep -q live && break
    sleep 0.5
done
target/release/rfmctl record "shm:rfm-test-record-$$" --out target/record/third-party.rec --overwrite --seconds 1
wait "$coupling"
rm -f "/dev/shm/rfm-test-record-$$"
target/release/rfmctl show target/record/third-party.rec
# Each aircraft alone against the other's recording (replay:), then its own:
# every peer attitude exact and no divergence; with its roll changed on ten
# steps, ten.
for me in 0 1; do
    for file in aircraft$((1 - me)).rec aircraft$me.rec; do
        target/release/simulators target/fmu/rfm_attitude.fmu \
            --steps 10000 --node $me --replay "target/record/$file" --expect-divergence 0
    done
done
target/release/simulators target/fmu/rfm_attitude.fmu \
    --steps 10000 --replay target/record/aircraft1.rec --change-steps 4000..4010 \
    --expect-divergence 10

step interfaces "interfaces: every node's FMU of three interface files, packed from the released binaries with no compiler on the PATH; three processes in lockstep over shm:, two nodes of 1,000 Reals over emulated RFM2g boards"
mkdir -p target/interfaces
python3 scripts/reals_interface.py 1000 > target/interfaces/reals1000.toml
python3 scripts/reals_interface.py 100 > target/interfaces/reals100.toml
for iface in tests/interfaces/mixed.toml target/interfaces/reals1000.toml target/interfaces/reals100.toml; do
    name=$(basename "$iface" .toml)
    env CARGO=/bin/false PATH=/nonexistent target/release/build-fmu --interface "$iface" \
        --node all --from target/fmu/rfm_attitude.fmu --out "target/fmu/$name"
done
target/release/lab --dir target/fmu/mixed --interface mixed \
    --nodes cockpit,visual,ios --steps 10000
target/release/lab --dir target/fmu/reals1000 --interface reals1000 \
    --nodes a,b --steps 10000 --rfm2g-sim "$PWD/target/release/librfm2g.so"

step lab "time and rates: the lab at 1 kHz, 1/60 s and 10 Hz in three processes over shm:, 10 s of simulated time, every value checked against the rule on time (lags 0 and 1/2/0, random delays), the instructor station paused 3 s, killed (found dead within timeout), free-running beside two lockstep nodes, and on two emulated redundant rings with ring A cut and mended and ring B cut"
for iface in examples/lab.toml tests/interfaces/freeios.toml; do
    name=$(basename "$iface" .toml)
    target/release/build-fmu --interface "$iface" --node all --from target/fmu/rfm_attitude.fmu \
        --out "target/fmu/$name"
done
lab() {
    target/release/lab --nodes cockpit,visual,ios --stop 10 \
        --periods 0.001,1/60,0.1 "$@"
}
lab --dir target/fmu/lab --interface lab --free visual:ios --jitter 200
lab --dir target/fmu/lab --interface lab --free visual:ios --lags 1,2,0 --jitter 200
lab --dir target/fmu/lab --interface lab --free visual:ios --pause ios:30:3 --jitter 200
lab --dir target/fmu/lab --interface lab --free visual:ios --kill ios:30
# On two emulated redundant rings, the cockpit's board of ring A cut at its
# step 3,000 and mended at 6,000, of ring B cut at 8,000.
lab --dir target/fmu/lab --interface lab --free visual:ios --rfm2g-sim "$PWD/target/release/librfm2g.so" \
    --redundant --cut a:3000..6000 --cut b:8000..
# A node the FMU refuses: the master prints what the FMU told its logger.
if lab --dir target/fmu/lab --interface lab --device shm:a/b,shm:a/b,shm:a/b 2> target/lab-refused.log; then
    echo "lab ran on a device every node refuses" >&2
    exit 1
fi
grep -E '^cockpit \[Error, logStatusError\]: fmi2SetString: parameter device = .*not allowed' target/lab-refused.log ||
    { cat target/lab-refused.log >&2; exit 1; }
lab --dir target/fmu/freeios --interface freeios --free visual:ios,cockpit:ios --sync ios=free \
    --real-time-factor 0.2

step serve "rfmctl serve in a real browser (Debian's headless Chromium through Playwright): the three-rate lab on two emulated redundant rings beside a C program writing its big-endian struct to both (fmu-src/tests/c/lab_writer.c), every node live with its period, its own step and wait times and its peers' latency, the struct moving with every field of one write, a picked signal and a picked struct field plotted and moving, ring A cut with rfmctl cut shown open at the cut board within a second and whole after the mend, both in the event timeline, no error in the browser's console (tests/python/test_serve.py; the page in target/serve.png)"
.venv/bin/pytest -q tests/python/test_serve.py

step ring-faults "ring cuts and mends at moments nobody chose: the three-rate lab (real time) and the attitude pair alternating on two emulated redundant rings, 30 runs, each a board of one ring cut 0-1.5 s after the start for 50-400 ms; every value by the rule, no run failing (scripts/ring-faults.sh, seed $RING_FAULTS_SEED: SEED=$RING_FAULTS_SEED replays it)"
SEED=$RING_FAULTS_SEED RUNS=30 bash scripts/ring-faults.sh

step formation "a real flight model in the loop: two JSBSim aircraft (pythonfmu FMUs) with their autopilots, each simulator a process with its node's coupling FMU over shm:, flown as scripts/demo.sh formation flies it (its picture written), then in FMPy at lags 0 and 2 and from each simulator's SSP in libcosim (lags 0, 2) and ecos: every leader value by the rule, the wingman's trajectory bit for bit a one-process reference (and not one of the wrong lag), the slot held (tests/python/test_formation.py); the three-rate lab with a JSBSim cockpit at 1 kHz in three libcosim processes, the instructor station's wind reaching it by the rule and changing its flight (tests/python/test_jsbsim_lab.py)"
scripts/formation.sh fly --no-cargo --out target/formation
test -s target/formation/formation.png
.venv/bin/pytest -q tests/python/test_formation.py tests/python/test_jsbsim_lab.py

step reuse "one memory, many couplings: 30 rounds alternating the three-node lab and the attitude pair on one shm: name, then on one emulated RFM2g ring, nodes started 0-50 ms apart; a two-node interface of its own after the pair, slot 1 first, 20 times; every value checked (scripts/reuse-test.sh)"
target/release/build-fmu --interface tests/interfaces/motion.toml --node all \
    --from target/fmu/rfm_attitude.fmu --out target/fmu/motion
bash scripts/reuse-test.sh

step bridge "PCs without cards: rfm-bridge joins shm: memories over 127.0.0.1 and over a veth pair between two network namespaces: the attitude pair at lags 0 and 1, the three-rate lab on three memories, 20 simultaneous claims of one slot from two hosts, a killed and a restarted bridge, rfmctl watch, bad input"
# The bridge's binaries and its tests from one package set: rfm-bridge alone
# (no dev-dependencies), so zenoh's tree is compiled once. (Built together with
# rfmctl and the test binaries, cargo unified other features into zenoh's
# dependencies and compiled the whole tree a second time for the tests.)
cargo build --release -p rfm-bridge --bins --examples
cargo test --release -p rfm-bridge
bash scripts/bridge-test.sh loopback
bash scripts/bridge-test.sh netns

step soak "rfm-bench's tests; soak: two processes, 10^6 lockstep steps, every value checked, over shm: and on two emulated redundant rings with a board of one ring cut every 10^5 steps and mended 5*10^4 later (scripts/soak.sh runs 10^8)"
# The soak and the benchmark are one crate's binaries: one build, whose
# package set its tests share (rfm-bench has no dev-dependencies).
cargo build --release -p rfm-bench
cargo test --release -p rfm-bench
target/release/soak --steps 1000000 --fmu target/fmu/rfm_attitude.fmu
target/release/soak --steps 1000000 --fmu target/fmu/rfm_attitude.fmu \
    --device A+B --faults 100000 --library "$PWD/target/release/librfm2g.so"

step asan "AddressSanitizer: the hostile master, bad parameters and corruption tests"
# (The emulator those tests load is the one built for the tests above, not
# instrumented: a nested build cannot reuse the sanitizer flags.)
RFM2G_SIM_LIBRARY="$PWD/target/debug/librfm2g.so" RUSTFLAGS="-Zsanitizer=address" \
    cargo +nightly test -p fmu-src --test hostile --test errors --test corruption \
    --target x86_64-unknown-linux-gnu --target-dir target/asan

step fuzz "fuzzing: 15 s per target from the committed corpus (fuzz/corpus), two targets at a time"
# Every target is built in one build, then two run at once, each 15 s on a
# core of its own as before: the same corpus and time per target, in half the
# wall time. Each run's output is kept, and shown when it fails.
(cd fuzz && cargo +nightly fuzz build)
fuzz_run() {
    (cd fuzz && cargo +nightly fuzz run "$1" -- -max_total_time=15 -timeout=10) \
        > "target/fuzz-$1.log" 2>&1
}
# One or two targets at once, each on a core of its own.
fuzz_pair() {
    local status=0 pids=() t
    for t in "$@"; do
        fuzz_run "$t" &
        pids+=("$!")
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { status=$?; tail -40 "target/fuzz-${@:i+1:1}.log" >&2; }
    done
    for t in "$@"; do
        echo "$t: $(grep -E '^Done [0-9]+ runs' "target/fuzz-$t.log" || echo 'no summary')"
    done
    return "$status"
}
fuzz_pair framed_decode seed_decode
fuzz_pair fmi_calls interface_parse
fuzz_pair resources recording_read
fuzz_pair packed

step fmpy "FMPy 0.3.32 on the packaged .fmu (validate, two instances, simulate, win64 exports), and on its FMI 3.0 face (validate, two FMI 3.0 instances, an FMI 3.0 node with an FMI 2.0 node, a lab's struct read and written back exact: uint64 past 2^53, floats, uint8 arrays; signals declared of C types and as arrays, each its own type and an array one variable, between FMI 3.0 and FMI 2.0 nodes; fmi-sim 0.7 as a third FMI 3.0 master: the attitude pair and the three-rate lab, a process a node)"
.venv/bin/pytest -q tests/python --ignore=tests/python/test_book.py \
    --ignore=tests/python/test_serve.py

step bench "the benchmark command runs end to end (a short smoke run: timing is for scripts/bench.sh)"
# On the FMUs packed above (scripts/bench.sh packs its own into target/bench/fmu).
target/release/coupling --steps 10000 --out target/bench-smoke \
    --fmu target/fmu/rfm_attitude.fmu --reals target/fmu \
    --rfm2g-sim "$PWD/target/release/librfm2g.so"
test -s target/bench-smoke/coupling.json && test -s target/bench-smoke/coupling.png

step ab-gate "the FMU's own step against the baseline revision in bench/ab-baseline.env: both packed alike, cases 5, 2 and 7b side by side, case 5's instructions per step by callgrind within the stated margin (scripts/bench.sh --against REV is the long form)"
# shellcheck source=bench/ab-baseline.env
source bench/ab-baseline.env
source scripts/ab.sh
baseline=$(ab_build "$AB_BASELINE")
target/release/coupling --against "$baseline" --label "baseline $(ab_sha "$AB_BASELINE" | cut -c1-12)" \
    --fmu target/fmu/rfm_attitude.fmu --reals target/fmu --rounds 1 --steps 100000 --gate "$AB_GATE_PERCENT" --out target/bench-ab

step miri "Miri: region, frame codecs, seqlock, loopback backend, torn-read stress; the emulator's memory access"
# The emulator's bounded memory access and its configuration parser. Its copies use
# word and byte atomics on the same bytes, which Miri's weak-memory store buffers
# cannot represent (Miri panics); these tests are single-threaded, so turning the
# emulation off loses nothing.
miri_sim() { MIRIFLAGS="-Zmiri-disable-weak-memory-emulation" cargo +nightly miri test -p rfm2g-sim --lib "$@"; }
# Built first, then interpreted in two streams, one a core: the conformance
# suite (half the interpreting) beside the rest. Cargo holds no lock while
# tests run, and each stream's package set is the build's, so nothing is
# rebuilt. (cargo-nextest under Miri, a process a test, took longer: 166 s
# against 91 s one after another.)
miri_core=(-p rfm-memory -p rfm-frames -p rfm-interface -p rfm-thread -p rfm-record -p rfm-core)
cargo +nightly miri test "${miri_core[@]}" --lib --test conformance --test torn_reads --no-run
miri_sim --no-run
cargo +nightly miri test "${miri_core[@]}" --test conformance > target/miri-conformance.log 2>&1 &
conformance=$!
cargo +nightly miri test "${miri_core[@]}" --lib --test torn_reads
miri_sim
wait "$conformance" || { cat target/miri-conformance.log >&2; exit 1; }
cat target/miri-conformance.log

shm_left
steps_passed "all checks passed"
