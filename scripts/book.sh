#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into target/book and checks every link and
# anchor in it with LinkChecker, offline. scripts/setup.sh installs both
# (`setup test`: mdbook pinned from crates.io, linkchecker in .venv).
set -euo pipefail
cd "$(dirname "$0")/.."

# Its progress lines are INFO; warnings and errors still show, and a failed
# build fails this script (an earlier build's pages are never checked instead).
RUST_LOG=warn mdbook build docs

# LinkChecker run as root drops to the user nobody, who may not read a
# checkout under a private home: it checks a world-readable copy. print.html
# is mdBook's every page in one, whose links are the pages' own.
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
chmod 755 "$copy"
cp -r target/book "$copy/book"
chmod -R a+rX "$copy/book"
.venv/bin/linkchecker --config docs/linkcheckerrc --no-status --no-robots \
    --ignore-url 'print\.html' "$copy/book/index.html"
