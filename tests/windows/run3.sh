#!/usr/bin/env bash
# The FMI 3.0 face of the packaged win64 FMU (build-fmu --fmi 3: its binary
# under binaries/x86_64-windows) in a Windows FMI 3.0 master
# (tests/windows/master3.c, built with MinGW, loading the DLL with
# LoadLibrary) under Wine, every value checked bit for bit: two instances at
# lag 1 in one process; two at lag 0 stepped by one thread through early
# returns (each 0.1 s of waiting, so few steps); two processes in lockstep
# lag 0 over shm:, and on two boards of an emulated RFM2g ring through the
# vendor's DLL name, rfm2gdll_stdc_64.dll (rfm2g-sim).
# Usage: tests/windows/run3.sh FMU3 RFM2G_DLL [STEPS]
# (from the repository root, after scripts/wine.sh's wine_setup).
set -euo pipefail
fmu=$1
emulator=$2
steps=${3:-100000}
out=target/wine
dir=$out/fmu3/$(basename "$fmu" .fmu)
rm -rf "$dir"
mkdir -p "$out"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$fmu" "$dir"
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -o "$out/master3.exe" tests/windows/master3.c
windows_dir="Z:${PWD//\//\\}\\${dir//\//\\}"
# shellcheck source=tests/windows/pair.sh
source tests/windows/pair.sh

wine "$out/master3.exe" "$windows_dir" pair "$steps"
wine "$out/master3.exe" "$windows_dir" early 20

# Node ME of two processes; with RING set, its \\.\rfm2g0 is board ME + 1 of
# that emulated ring.
node() {
    local me=$1 device=$2
    shift 2
    RFM2G_SIM_DEVICES="\\\\.\\rfm2g0 ring=${RING:-none} node=$((me + 1)) size=1M" \
        wine "$out/master3.exe" "$windows_dir" node "$me" "$steps" "$device" "$@"
}
pair "shm:wine-master3-$$"
# The master finds the DLL by its vendor name next to it, as Windows searches
# the program's folder first.
cp "$emulator" "$out/rfm2gdll_stdc_64.dll"
RING="wine3-$$" pair '\\.\rfm2g0'
