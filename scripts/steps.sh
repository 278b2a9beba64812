#!/usr/bin/env bash
# Sourced by scripts/test.sh: each step's title with the minutes since the
# start, and at the end of the run (passed or failed) a table of each step's
# minutes and the total, so that a step that grew is seen in the log.
#
#   step LABEL TITLE       ends the step before and starts this one
#   steps_passed MESSAGE   the table, then MESSAGE as the run's last line
#                          (the EXIT trap prints the table of a failed run)

step_labels=()
step_seconds=()
step_current=""
step_began=0

step_end() {
    if [ -n "$step_current" ]; then
        step_labels+=("$step_current")
        step_seconds+=($((SECONDS - step_began)))
        step_current=""
    fi
}

step() {
    step_end
    step_current=$1
    step_began=$SECONDS
    printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$2"
}

mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# The table; on an EXIT trap, with the step that failed.
step_table() {
    local status=$1 failed=$step_current i
    step_end
    printf '\n==> steps (minutes:seconds)\n'
    for i in "${!step_labels[@]}"; do
        printf '%8s  %s\n' "$(mmss "${step_seconds[$i]}")" "${step_labels[$i]}"
    done
    if [ "$status" = 0 ]; then
        printf '%8s  total\n' "$(mmss "$SECONDS")"
    else
        printf '%8s  total, FAILED in step "%s" (exit %s)\n' "$(mmss "$SECONDS")" "$failed" "$status"
    fi
}

steps_passed() {
    trap - EXIT
    step_table 0
    printf '\n==> %s\n' "$1"
}
