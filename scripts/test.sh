#!/usr/bin/env bash
# Every check of the project, from a fresh Debian machine with Rust (stable and
# nightly); installs what it needs itself (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/wine.sh
setup test

# Each step's title with the minutes since the start: where the run's time goes.
step() { printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Every build here is made once, so cargo's incremental caches would only take
# disk (about 1 GB of target/debug). A whole run from a clean checkout took
# 6.6 GB at its peak (target/, fuzz/target, the Wine prefix).
export CARGO_INCREMENTAL=0
NEED_GB=7
free_gb=$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')
if [ "$free_gb" -lt "$NEED_GB" ]; then
    printf 'warning: %s GB free where target/ lives; a whole run takes about %s GB, and a build\n' "$free_gb" "$NEED_GB"
    printf '         that runs out fails with "No space left on device": free some, or cargo clean\n'
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings (workspace, and for Windows: rfm-core, the FMU, the emulator, rfmctl)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p rfm-core --target x86_64-pc-windows-gnu --lib --test conformance --test windows_shm -- -D warnings
cargo clippy -p fmu-src -p rfm2g-sim -p rfmctl --target x86_64-pc-windows-gnu -- -D warnings

step "no import circle between the modules of any crate of the workspace (module-cycles)"
cargo run -q -p module-cycles

step "rustdoc (broken intra-doc links are errors)"
RUSTDOCFLAGS="-D rustdoc::broken_intra_doc_links" cargo doc --workspace --no-deps --quiet

step "the FMU and build-fmu build with cargo alone: nothing in their tree runs bindgen; the FMU is built without rfm-core's counts"
if cargo tree -p fmu-src -p build-fmu -e normal,build --prefix none | grep -qE '^(bindgen|clang-sys) '; then
    echo "bindgen or clang-sys is in the dependency tree of fmu-src or build-fmu" >&2
    exit 1
fi
# build-fmu builds `-p fmu-src` alone: the features cargo resolves for it are
# these, and the counting hooks must be empty there.
if cargo tree -p fmu-src -e features -i rfm-core --prefix none | grep -q 'rfm-core feature "counts"'; then
    echo "the FMU would be built with rfm-core's counts feature" >&2
    exit 1
fi
# The bridge's network engine stays out of the FMU and its packager.
if cargo tree -p fmu-src -p build-fmu -e normal,build --prefix none | grep -qE '^(zenoh|rfm-bridge) '; then
    echo "zenoh or rfm-bridge is in the dependency tree of fmu-src or build-fmu" >&2
    exit 1
fi

step "build-fmu: package target/fmu/rfm_attitude.fmu (linux64 + win64) and verify it"
cargo run --release -p build-fmu -- --platform linux64,win64

step "Windows under Wine: shm: (named file mappings) through rfm-core's conformance suite, and its security and size refusals"
wine_setup
cargo test -p rfm-core --target x86_64-pc-windows-gnu --test conformance --test windows_shm
# loopback: across two copies of the library: the file mapping Local\rfm-loopback.PID.HASH
cargo test -p rfm-core --target x86_64-pc-windows-gnu --lib backend::loopback

step "Windows under Wine: the packaged win64 FMU in a Windows master (LoadLibrary): self-loop, two instances at lag 1, two processes in lockstep over shm:, and over two emulated RFM2g boards through rfm2gdll_stdc_64.dll (spin, event)"
cargo build --release -p rfm2g-sim --target x86_64-pc-windows-gnu
tests/windows/run.sh target/fmu/rfm_attitude.fmu \
    target/x86_64-pc-windows-gnu/release/rfm2g.dll 100000

step "Windows under Wine: the article's sender and receiver, built with MinGW as C and as C++ against rfm2gdll_stdc_64.dll, on two emulated boards (poll, event); the outputs match line for line"
tests/windows/article.sh target/x86_64-pc-windows-gnu/release/rfm2g.dll 500

step "Windows under Wine: rfmctl.exe, each subcommand on emulated \\\\.\\rfm2gN boards and on shm:"
cargo build --release -p rfmctl --target x86_64-pc-windows-gnu
tests/windows/rfmctl.sh target/x86_64-pc-windows-gnu/release/rfmctl.exe \
    target/x86_64-pc-windows-gnu/release/rfm2g.dll

step "cargo test (workspace, including the fmi-crate master on the packaged .fmu; rfm-bridge's in release, with its test below)"
cargo test --workspace --exclude rfm-bridge

step "liveness: a full /dev/shm in a private mount namespace (prints why, if unshare is refused)"
cargo test -q -p rfm-core --test full_shm -- --nocapture

step "two simulator processes on two emulated RFM2g boards (rfm2g-sim), through the packaged .fmu"
cargo build --release -p rfm2g-sim
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu \
    --steps 20000 --rfm2g-sim "$PWD/target/release/librfm2g.so"

step "recordings: two simulator processes record 10,000 lockstep steps over shm:; rfmctl show, export --csv, plot and diff read them, the two sides' recordings agree, and each aircraft replayed alone against either recording gets every peer attitude exact"
rm -rf target/record
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu \
    --steps 10000 --record "$PWD/target/record"
cargo build --release -p rfmctl
target/release/rfmctl show target/record/aircraft0.rec
target/release/rfmctl export target/record/aircraft1.rec --csv > target/record/aircraft1.csv
test "$(wc -l < target/record/aircraft1.csv)" = 20002 # a header and 20,001 frames
target/release/rfmctl plot target/record/aircraft0.rec --signals slot0.roll,slot1.roll \
    --out target/record/attitude.png
test -s target/record/attitude.png
target/release/rfmctl diff target/record/aircraft0.rec target/record/aircraft1.rec
# A third-party recorder on a running coupling: it reads every node's frames
# and counts the ones it missed.
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu \
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
target/release/rfmctl show target/record/third-party.rec
# Each aircraft alone against the other's recording (replay:), then its own:
# every peer attitude exact and no divergence; with its roll changed on ten
# steps, ten.
for me in 0 1; do
    for file in aircraft$((1 - me)).rec aircraft$me.rec; do
        cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu \
            --steps 10000 --node $me --replay "target/record/$file" --expect-divergence 0
    done
done
cargo run --release -p artefact-tests --bin simulators -- target/fmu/rfm_attitude.fmu \
    --steps 10000 --replay target/record/aircraft1.rec --change-steps 4000..4010 \
    --expect-divergence 10

step "interfaces: every node's FMU of three interface files, packed from the released binaries with no compiler on the PATH; three processes in lockstep over shm:, two nodes of 1,000 Reals over emulated RFM2g boards"
mkdir -p target/interfaces
python3 scripts/reals_interface.py 1000 > target/interfaces/reals1000.toml
python3 scripts/reals_interface.py 100 > target/interfaces/reals100.toml
for iface in tests/interfaces/mixed.toml target/interfaces/reals1000.toml target/interfaces/reals100.toml; do
    name=$(basename "$iface" .toml)
    env CARGO=/bin/false PATH=/nonexistent target/release/build-fmu --interface "$iface" \
        --node all --from target/fmu/rfm_attitude.fmu --out "target/fmu/$name"
done
cargo run --release -p artefact-tests --bin lab -- --dir target/fmu/mixed --interface mixed \
    --nodes cockpit,visual,ios --steps 10000
cargo run --release -p artefact-tests --bin lab -- --dir target/fmu/reals1000 --interface reals1000 \
    --nodes a,b --steps 10000 --rfm2g-sim "$PWD/target/release/librfm2g.so"

step "time and rates: the lab at 1 kHz, 1/60 s and 10 Hz in three processes over shm:, 10 s of simulated time, every value checked against the rule on time (lags 0 and 1/2/0, random delays), the instructor station paused 3 s, killed (found dead within timeout), free-running beside two lockstep nodes"
for iface in examples/lab.toml tests/interfaces/freeios.toml; do
    name=$(basename "$iface" .toml)
    target/release/build-fmu --interface "$iface" --node all --from target/fmu/rfm_attitude.fmu \
        --out "target/fmu/$name"
done
lab() {
    cargo run --release -p artefact-tests --bin lab -- --nodes cockpit,visual,ios --stop 10 \
        --periods 0.001,1/60,0.1 "$@"
}
lab --dir target/fmu/lab --interface lab --free visual:ios --jitter 200
lab --dir target/fmu/lab --interface lab --free visual:ios --lags 1,2,0 --jitter 200
lab --dir target/fmu/lab --interface lab --free visual:ios --pause ios:30:3 --jitter 200
lab --dir target/fmu/lab --interface lab --free visual:ios --kill ios:30
lab --dir target/fmu/freeios --interface freeios --free visual:ios,cockpit:ios --sync ios=free \
    --real-time-factor 0.2

step "PCs without cards: rfm-bridge joins shm: memories over 127.0.0.1 and over a veth pair between two network namespaces: the attitude pair at lags 0 and 1, the three-rate lab on three memories, a killed and a restarted bridge, rfmctl watch, bad input"
cargo build --release -p rfm-bridge -p rfmctl -p artefact-tests
cargo test --release -p rfm-bridge
bash scripts/bridge-test.sh loopback
bash scripts/bridge-test.sh netns

step "soak: two processes, 10^6 lockstep steps, every value checked (scripts/soak.sh runs 10^8)"
cargo run --release -p rfm-bench --bin soak -- --steps 1000000

step "AddressSanitizer: the hostile master, bad parameters and corruption tests"
# (The emulator those tests load is the one `cargo test` built above, not
# instrumented: a nested build cannot reuse the sanitizer flags.)
RFM2G_SIM_LIBRARY="$PWD/target/debug/librfm2g.so" RUSTFLAGS="-Zsanitizer=address" \
    cargo +nightly test -p fmu-src --test hostile --test errors --test corruption \
    --target x86_64-unknown-linux-gnu --target-dir target/asan

step "fuzzing: 15 s per target from the committed corpus (fuzz/corpus)"
for target in framed_decode seed_decode fmi_calls interface_parse resources recording_read; do
    (cd fuzz && cargo +nightly fuzz run "$target" -- -max_total_time=15 -timeout=10)
done

step "FMPy 0.3.32 on the packaged .fmu (validate, two instances, simulate, win64 exports)"
.venv/bin/pytest -q tests/python

step "the benchmark command runs end to end (a short smoke run: timing is for scripts/bench.sh)"
cargo run --release -p rfm-bench --bin coupling -- --steps 10000 --out target/bench-smoke \
    --rfm2g-sim "$PWD/target/release/librfm2g.so"
test -s target/bench-smoke/coupling.json && test -s target/bench-smoke/coupling.png

step "Miri: region, frame codecs, seqlock, loopback backend, torn-read stress; the emulator's memory access"
cargo +nightly miri test -p rfm-core --lib --test conformance --test torn_reads
# The emulator's bounded memory access and its configuration parser. Its copies use
# word and byte atomics on the same bytes, which Miri's weak-memory store buffers
# cannot represent (Miri panics); these tests are single-threaded, so turning the
# emulation off loses nothing.
MIRIFLAGS="-Zmiri-disable-weak-memory-emulation" cargo +nightly miri test -p rfm2g-sim --lib

step "all checks passed"
