#!/usr/bin/env bash
# The packaged win64 FMU in a Windows master (tests/windows/master.c, built
# with MinGW, loading the DLL with LoadLibrary) under Wine, every value checked
# bit for bit: a self-loop (also pinned to a core at a real-time priority), two instances at lag 1 in one process, two processes
# in lockstep lag 0 over shm: (waitStrategy spin, yield and sleep), and the same
# two processes on two boards of an emulated RFM2g ring through the vendor's DLL
# name, rfm2gdll_stdc_64.dll (rfm2g-sim), with spin and event.
# Usage: tests/windows/run.sh FMU RFM2G_DLL [STEPS]
# (from the repository root, after scripts/wine.sh's wine_setup).
set -euo pipefail
fmu=$1
emulator=$2
steps=${3:-100000}
out=target/wine
dir=$out/fmu/$(basename "$fmu" .fmu)
rm -rf "$dir"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$fmu" "$dir"
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -o "$out/master.exe" tests/windows/master.c
windows_dir="Z:${PWD//\//\\}\\${dir//\//\\}"
# shellcheck source=tests/windows/pair.sh
source tests/windows/pair.sh

wine "$out/master.exe" "$windows_dir" self "$steps"
# The real-time step on Windows: cpuAffinity and realtimePriority hold the
# stepping thread (SetThreadAffinityMask, time-critical) and are put back.
RFM_MASTER_CPU=1 wine "$out/master.exe" "$windows_dir" self 2000
wine "$out/master.exe" "$windows_dir" pair "$steps"

# Node ME of two processes: with RING set, its \\.\rfm2g0 is board ME + 1 of that
# emulated ring, as each of two PCs has its own card on one fibre; with RING_B
# set too, its \\.\rfm2g1 is board ME + 1 of a second ring (a redundant pair).
node() {
    local me=$1 device=$2
    shift 2
    local boards="\\\\.\\rfm2g0 ring=${RING:-none} node=$((me + 1)) size=1M"
    if [ -n "${RING_B-}" ]; then
        boards="$boards; \\\\.\\rfm2g1 ring=$RING_B node=$((me + 1)) size=1M"
    fi
    RFM2G_SIM_DEVICES="$boards" \
        wine "$out/master.exe" "$windows_dir" node "$me" "${STEPS:-$steps}" "$device" "$@"
}

pair "shm:wine-master-$$"
# The other wait strategies: yield (SwitchToThread) and sleep (a high-resolution
# waitable timer, through std::thread::sleep), fewer steps for sleep's ~0.5 ms.
STEPS=20000 pair "shm:wine-master-$$-yield" yield
STEPS=2000 pair "shm:wine-master-$$-sleep" sleep

# The DLL is found by its vendor name next to the master, as Windows searches
# the program's folder first.
cp "$emulator" "$out/rfm2gdll_stdc_64.dll"
for wait in spin event; do
    RING="wine-$$-$wait" pair '\\.\rfm2g0' "$wait"
done
# Redundant rings: every store on both, each peer's frame from ring A (shm: and
# two emulated rings through the DLL).
STEPS=20000 pair "shm:wine-master-$$-a+shm:wine-master-$$-b"
STEPS=20000 RING="wine-$$-a" RING_B="wine-$$-b" pair '\\.\rfm2g0+\\.\rfm2g1'

