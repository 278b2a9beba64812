#!/usr/bin/env bash
# The coupling benchmarks (release build, a few minutes): packages the FMU, then
# runs every case in one run; writes target/bench/coupling.json and coupling.png
# and prints the table. Extra arguments go to the benchmark (e.g. --steps 200000).
#
#   scripts/bench.sh --against REV [--rounds N] [--steps N] [--gate PERCENT]
#
# compares this tree with revision REV in one run instead: REV is checked out
# in a worktree (target/ab/SHA/src) and its FMUs packed by its own build-fmu
# (target/ab/SHA/fmu); then cases 5, 2 and 7b run on both sides interleaved,
# round after round, and case 5's instructions per step are counted with
# callgrind. Writes target/bench-ab/ab.json; --gate fails when this tree's
# count exceeds REV's by more than PERCENT.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
setup bench

against=
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --against)
            [ $# -ge 2 ] || { echo "scripts/bench.sh: --against REV (a commit, tag or branch)" >&2; exit 2; }
            against=$2
            shift 2
            ;;
        *)
            args+=("$1")
            shift
            ;;
    esac
done

# The packager and the benchmark, in one release build.
cargo build --release -p build-fmu --bin build-fmu -p rfm-bench --bin coupling
# The FMUs the cases load, in their own folder (rfm_bench::fmu::PACKED):
# linux64 only, what the benchmark runs, replacing nothing build-fmu made in
# target/fmu (linux64 and win64).
fmus=target/bench/fmu
target/release/build-fmu --platform linux64 --glibc 2.28 --out $fmus/rfm_attitude.fmu
# The 100- and 1,000-Real cases' FMUs, from the same binary.
mkdir -p target/interfaces
for n in 100 1000; do
    python3 scripts/reals_interface.py $n > target/interfaces/reals$n.toml
    target/release/build-fmu --interface target/interfaces/reals$n.toml --node all \
        --from $fmus/rfm_attitude.fmu --out $fmus/reals$n
done

if [ -n "$against" ]; then
    # shellcheck source=scripts/ab.sh
    source scripts/ab.sh
    base=$(ab_build "$against")
    exec target/release/coupling --against "$base" --label "$against ($(ab_sha "$against"))" \
        --out target/bench-ab "${args[@]}"
fi

# Cases 9 and 10: three nodes of every type, and the three-rate lab.
for iface in tests/interfaces/mixed.toml examples/lab.toml; do
    target/release/build-fmu --interface "$iface" --node all \
        --from $fmus/rfm_attitude.fmu --out "$fmus/$(basename "$iface" .toml)"
done
# The emulated RFM2g library (cases 6 and 11) and the bridge with Zenoh's own
# ping-pong (case 12): a build of their own, without the benchmark's
# rfm-core/counts (a feature of one build is every crate's in it), as a lab
# runs them.
cargo build --release -p rfm2g-sim --lib -p rfm-bridge --bins
exec target/release/coupling "${args[@]}"
