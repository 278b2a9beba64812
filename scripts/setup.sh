#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine with Rust (stable and
# nightly). Sourced by demo.sh (`setup demo`), test.sh (`setup test`), bench.sh and soak.sh; safe to
# run again: everything already there is skipped.
#   build: binutils (build-fmu strips the binaries) and a venv (.venv-build)
#         with zig and cargo-zigbuild pinned in scripts/build-requirements.txt
#         (the linux64 binary is linked against glibc 2.28); every set below
#         includes it
#   demo: libclang-dev (the fmi crate's bindgen, for the demo master); the
#         build venv made in the background (build_venv_wait)
#   formation: the Python venv below (.venv), for scripts/formation.sh
#   bench: fonts-dejavu-core (text in the latency histogram), valgrind
#         (callgrind counts the FMU's own step's instructions: --against)
#   test: the above, gcc, MinGW-w64 (C and C++) and the x86_64-pc-windows-gnu
#         target (win64 FMU), wine64 (runs the Windows tests), cargo-nextest
#         (the test runner), Miri, cargo-fuzz 0.13.2 (fuzzing; AddressSanitizer needs nothing
#         more than nightly), iproute2 (`ip netns`: the bridge test's two
#         network namespaces), mdbook 0.4.52 (the book), and a Python venv
#         (.venv) with FMPy 0.3.32, LinkChecker and pytest pinned in
#         tests/python/requirements.txt

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "==> installing ${missing[*]}"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    fi
}

# The packages of the build set: binutils (build-fmu strips the binaries),
# and python3-venv for the build venv.
BUILD_PACKAGES=(binutils python3-venv)

# The build venv: zig and cargo-zigbuild, which build-fmu finds in .venv-build.
build_venv_ready() {
    [ -x .venv-build/bin/cargo-zigbuild ] && cmp -s scripts/build-requirements.txt .venv-build/.requirements
}

build_venv() {
    local req=scripts/build-requirements.txt stamp=.venv-build/.requirements
    if ! build_venv_ready; then
        echo "==> creating the build venv .venv-build ($req)"
        python3 -m venv .venv-build
        .venv-build/bin/pip install -q --disable-pip-version-check -r "$req"
        cp "$req" "$stamp"
    fi
}

# Waits for the build venv `setup demo` makes in the background; shows its
# log if making it failed.
build_venv_wait() {
    if ! wait "$BUILD_VENV_PID"; then
        cat target/build-venv.log >&2
        echo "==> making the build venv .venv-build failed (above)" >&2
        return 1
    fi
}

setup() {
    local what=$1
    # Every script that packages the FMU (build-fmu strips it and links it
    # against glibc 2.28): binutils and the build venv.
    if [ "$what" = build ]; then
        apt_install "${BUILD_PACKAGES[@]}"
        build_venv
        return
    fi
    # The demo: the build venv is wanted only once build-fmu packs the FMU,
    # after cargo's build, so it is made beside that build (8 s of a first
    # run); demo.sh waits for it with build_venv_wait.
    if [ "$what" = demo ]; then
        apt_install libclang-dev "${BUILD_PACKAGES[@]}"
        mkdir -p target
        build_venv_ready ||
            echo "==> creating the build venv .venv-build in the background (target/build-venv.log)"
        build_venv > target/build-venv.log 2>&1 &
        BUILD_VENV_PID=$!
        return
    fi
    # The formation (scripts/formation.sh, scripts/demo.sh formation): the
    # packaged FMU and the venv its masters and aircraft run in.
    if [ "$what" = formation ]; then
        setup build
        python_venv
        return
    fi
    if [ "$what" = bench ]; then
        apt_install fonts-dejavu-core valgrind
        setup build
        return
    fi
    # libtbb12: the ecos engine (ecospy) runs its simulators on TBB.
    # chromium: the browser `rfmctl serve`'s page is tested in (Playwright
    # drives it: tests/python/test_serve.py).
    apt_install libclang-dev gcc binutils-mingw-w64-x86-64 gcc-mingw-w64-x86-64 \
        g++-mingw-w64-x86-64 wine64 fonts-dejavu-core iproute2 libtbb12 valgrind chromium
    setup build
    if ! rustup target list --installed | grep -q x86_64-pc-windows-gnu; then
        echo "==> adding the Rust target x86_64-pc-windows-gnu"
        rustup target add x86_64-pc-windows-gnu
    fi
    if ! cargo +nightly miri --version >/dev/null 2>&1; then
        echo "==> installing Miri (nightly)"
        rustup component add miri rust-src --toolchain nightly
    fi
    # The test runner: the machine's image has it; elsewhere it is built.
    if ! cargo nextest --version >/dev/null 2>&1; then
        echo "==> installing cargo-nextest"
        cargo install cargo-nextest --locked
    fi
    # The book (scripts/book.sh): mdBook without its server and search, whose
    # dependencies the build alone does not need (1.5 minutes on 2 cores).
    if ! mdbook --version 2>/dev/null | grep -q "v0.4.52"; then
        echo "==> installing mdbook 0.4.52"
        cargo install mdbook --version 0.4.52 --locked --no-default-features
    fi
    # A third FMI 3.0 master (tests/python/test_fmi_sim.py): fmi-sim, the Rust
    # counterpart of the Reference FMUs' fmusim (which no registry here
    # carries). Unoptimized: 1.5 minutes on 2 cores against 9 optimized, and
    # the tests' runs take seconds either way.
    # (`fmi-sim --version` says it on stderr and exits 1.)
    if ! { fmi-sim --version 2>&1 || true; } | grep -q "fmi-sim 0.7.0"; then
        echo "==> installing fmi-sim 0.7.0 (debug build)"
        cargo install fmi-sim --version 0.7.0 --locked --debug
    fi
    if ! cargo +nightly fuzz --version 2>/dev/null | grep -q "0.13.2"; then
        echo "==> installing cargo-fuzz 0.13.2"
        cargo install cargo-fuzz --version 0.13.2 --locked
    fi
    python_venv
}

# The Python venv (.venv): the masters (FMPy, libcosimpy, ecospy), JSBSim and
# pythonfmu, matplotlib, pytest, all pinned in tests/python/requirements.txt.
python_venv() {
    local req=tests/python/requirements.txt stamp=.venv/.requirements
    if [ ! -x .venv/bin/python ] || ! cmp -s "$req" "$stamp"; then
        echo "==> creating the Python venv .venv ($req)"
        python3 -m venv .venv
        .venv/bin/pip install -q --disable-pip-version-check -r "$req"
        cp "$req" "$stamp"
    fi
}
