#!/usr/bin/env bash
# Sourced: `wine_setup` prepares this shell to run the Windows (win64) tests
# under Wine: a private prefix in target/wine/prefix, no Wine debug chatter, and
# cargo's runner for x86_64-pc-windows-gnu set to wine.
#
# Wine 8.0 lacks bcryptprimitives.dll, whose ProcessPrng every Rust program and
# DLL (std >= 1.78) imports: the stand-in in tests/windows/bcryptprimitives.c is
# built into target/wine/dlls and put on Wine's DLL path. Test harness only; a
# real Windows has the function, and nothing shipped carries the stand-in.

wine_setup() {
    local root=$PWD/target/wine
    mkdir -p "$root/dlls"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$root/dlls/bcryptprimitives.dll" \
        tests/windows/bcryptprimitives.c -ladvapi32
    export WINEPREFIX=$root/prefix
    export WINEDEBUG=-all
    export WINEDLLOVERRIDES="mscoree,mshtml=" # no Mono or Gecko installer prompts
    export WINEPATH="Z:${root//\//\\}\\dlls"
    export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
    if [ ! -d "$WINEPREFIX" ]; then
        echo "==> creating the Wine prefix $WINEPREFIX"
        wineboot --init >/dev/null 2>&1 || true
        wineserver --wait
    fi
}
