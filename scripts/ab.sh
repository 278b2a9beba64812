#!/usr/bin/env bash
# Sourced by scripts/bench.sh (--against REV) and scripts/test.sh (the gate):
# another revision's FMUs, packed by that revision's own build-fmu.
#
#   ab_sha REV     the commit REV names (fails, saying why, if this clone lacks it)
#   ab_build REV   prints target/ab/SHA/fmu, holding REV's rfm_attitude.fmu and
#                  reals1000/ as target/bench/fmu holds this tree's; built once per
#                  commit (a commit does not change), in a worktree and a
#                  target folder that are removed once the FMUs are packed

ab_sha() {
    local sha
    if ! sha=$(git rev-parse --verify --quiet "$1^{commit}"); then
        echo "scripts/ab.sh: \`$1\` is not a commit of this clone (a shallow clone lacks" \
            "older ones: git fetch --unshallow)" >&2
        return 1
    fi
    echo "$sha"
}

ab_build() {
    local sha dir src reals
    sha=$(ab_sha "$1") || return 1
    dir=$PWD/target/ab/${sha:0:12}
    if [ -f "$dir/fmu/rfm_attitude.fmu" ] && [ -f "$dir/fmu/reals1000/reals1000_a.fmu" ]; then
        echo "$dir/fmu"
        return 0
    fi
    src=$dir/src
    echo "==> packing the FMUs of $1 (${sha:0:12}) with its own build-fmu, in $src" >&2
    rm -rf "$src" "$dir/fmu"
    git worktree prune
    git worktree add --detach "$src" "$sha" >&2
    # Its build-fmu finds cargo-zigbuild in its own .venv-build: this tree's.
    ln -sfn "$PWD/.venv-build" "$src/.venv-build"
    (
        cd "$src"
        export CARGO_TARGET_DIR=$dir/target
        cargo build --release -p build-fmu >&2
        "$dir/target/release/build-fmu" --platform linux64 --out "$dir/fmu/rfm_attitude.fmu" >&2
        # Its own 1,000-Real interface, where it has the script (this tree's otherwise).
        reals=scripts/reals_interface.py
        [ -f "$reals" ] || reals=$OLDPWD/scripts/reals_interface.py
        python3 "$reals" 1000 > "$dir/reals1000.toml"
        "$dir/target/release/build-fmu" --interface "$dir/reals1000.toml" --node all \
            --from "$dir/fmu/rfm_attitude.fmu" --out "$dir/fmu/reals1000" >&2
    )
    git worktree remove --force "$src"
    rm -rf "$dir/target"
    echo "$dir/fmu"
}
