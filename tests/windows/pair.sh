# shellcheck shell=bash
# Sourced by tests/windows/run.sh and run3.sh.
# Two processes: node 0 in the background, node 1 here (`node` is the
# sourcing script's: node ME DEVICE ARGS...); both must succeed.
pair() {
    node 0 "$@" &
    local first=$! status=0
    node 1 "$@" || status=$?
    wait "$first" || status=$?
    return "$status"
}
