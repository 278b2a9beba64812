#!/usr/bin/env bash
# Every check of the project, from a fresh Debian machine with Rust (stable + nightly).
# Installs what it needs itself: libclang (the bindings check runs bindgen), a C
# compiler (the fake vendor library of the RFM2g tests), Miri.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    step "installing Miri (nightly)"
    rustup component add miri rust-src --toolchain nightly
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "rustdoc (broken intra-doc links are errors)"
RUSTDOCFLAGS="-D rustdoc::broken_intra_doc_links" cargo doc --workspace --no-deps --quiet

step "rfm-core builds for Windows (the win64 FMU needs it)"
rustup target add x86_64-pc-windows-gnu >/dev/null
cargo clippy -p rfm-core --target x86_64-pc-windows-gnu -- -D warnings

step "cargo test (workspace)"
cargo test --workspace

step "Miri: region, frame codecs, seqlock, loopback backend, torn-read stress"
cargo +nightly miri test -p rfm-core --lib --test conformance --test torn_reads

step "all checks passed"
