#!/usr/bin/env bash
# The article's sender and receiver (rfm2g-sim/c) as Windows programs under
# Wine: each built with MinGW as C and as C++ against rfm2g_api.h and the
# emulator under the vendor's DLL name, rfm2gdll_stdc_64.dll, then run on two
# boards of one emulated ring (nodes 1 and 2, each program opening \\.\rfm2g0
# as on two PCs), the receiver polling and then woken by network interrupts.
# The two programs' outputs must match line for line.
# Usage: tests/windows/article.sh RFM2G_DLL [COUNT]
# (from the repository root, after scripts/wine.sh's wine_setup).
set -euo pipefail
emulator=$1
count=${2:-500}
out=target/wine/article
rm -rf "$out"
mkdir -p "$out"
cp "$emulator" "$out/rfm2gdll_stdc_64.dll"

# The import library a program links with, as the vendor's SDK ships one: the
# DLL's exports under the DLL's vendor name.
{
    echo "LIBRARY rfm2gdll_stdc_64.dll"
    echo "EXPORTS"
    x86_64-w64-mingw32-objdump -p "$emulator" |
        awk '/\[Ordinal\/Name Pointer\] Table/ { on = 1; next } on && NF == 0 { on = 0 } on { print $NF }'
} > "$out/rfm2gdll_stdc_64.def"
x86_64-w64-mingw32-dlltool -d "$out/rfm2gdll_stdc_64.def" -l "$out/librfm2gdll_stdc_64.a"

for lang in c c++; do
    std=-std=c11
    extra=()
    if [ "$lang" = c++ ]; then
        std=-std=c++17
        extra=(-static-libstdc++ -static-libgcc)
    fi
    for program in sender receiver; do
        x86_64-w64-mingw32-gcc -x "$lang" "$std" -O2 -Wall -Wextra -pedantic -Werror \
            -I rfm2g-sys/include -I rfm2g-sim/c "rfm2g-sim/c/$program.c" -x none \
            -L "$out" -lrfm2gdll_stdc_64 "${extra[@]}" -o "$out/$program-$lang.exe"
    done
done

board() { echo "\\\\.\\rfm2g0 ring=article-$$-$1 node=$2 size=64K"; }
# The C receiver with the C++ sender, then the other way round.
for run in "c c++ poll" "c++ c event"; do
    read -r rx tx mode <<< "$run"
    ring="${rx/++/pp}-$mode"
    RFM2G_SIM_DEVICES="$(board "$ring" 2)" wine "$out/receiver-$rx.exe" '\\.\rfm2g0' "$count" "$mode" \
        > "$out/$ring.received" 2> "$out/$ring.receiver-log" &
    receiver=$!
    status=0
    RFM2G_SIM_DEVICES="$(board "$ring" 1)" wine "$out/sender-$tx.exe" '\\.\rfm2g0' "$count" \
        > "$out/$ring.sent" 2> "$out/$ring.sender-log" || status=$?
    wait "$receiver" || status=$?
    cat "$out/$ring.receiver-log" "$out/$ring.sender-log"
    if [ "$status" != 0 ]; then
        echo "article: the $tx sender and $rx receiver ($mode) failed" >&2
        exit 1
    fi
    if ! cmp -s "$out/$ring.sent" "$out/$ring.received" || [ "$(wc -l < "$out/$ring.sent")" != "$count" ]; then
        echo "article: the $rx receiver ($mode) printed other lines than the $tx sender:" >&2
        diff "$out/$ring.sent" "$out/$ring.received" | head >&2
        exit 1
    fi
    echo "article: $count packets from the $tx sender to the $rx receiver ($mode), the same $count lines on both sides"
done
