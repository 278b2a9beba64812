#!/usr/bin/env bash
# The packaged win64 FMU in a Windows master (tests/windows/master.c, built
# with MinGW, loading the DLL with LoadLibrary) under Wine: a self-loop, two
# instances at lag 1 in one process, and two processes in lockstep lag 0 over
# shm:, every value checked bit for bit. Usage: tests/windows/run.sh FMU [STEPS]
# (from the repository root, after scripts/wine.sh's wine_setup).
set -euo pipefail
fmu=$1
steps=${2:-100000}
out=target/wine
dir=$out/fmu/$(basename "$fmu" .fmu)
rm -rf "$dir"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$fmu" "$dir"
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -o "$out/master.exe" tests/windows/master.c
windows_dir="Z:${PWD//\//\\}\\${dir//\//\\}"

wine "$out/master.exe" "$windows_dir" self "$steps"
wine "$out/master.exe" "$windows_dir" pair "$steps"

# Two processes: node 0 in the background, node 1 here; both must succeed.
pair() {
    local device=$1
    shift
    wine "$out/master.exe" "$windows_dir" node 0 "$steps" "$device" "$@" &
    local first=$!
    local status=0
    wine "$out/master.exe" "$windows_dir" node 1 "$steps" "$device" "$@" || status=$?
    wait "$first" || status=$?
    return "$status"
}
pair "shm:wine-master-$$"
