#!/usr/bin/env bash
# A stand-in for the kernel's OOM killer, for machines where the build cannot be
# put in its own memory cgroup. It watches the compiler processes of one build and,
# when their summed resident memory passes a budget, sends SIGKILL to the largest
# one -- which is what the OOM killer does. The compilers then print their own
# genuine "killed" messages; nothing of this script appears in the build log.
#
# Usage: oom_reaper.sh BUDGET_MB MARKER [MAX_KILLS] [NAMES]
#   MARKER     only processes with an ancestor whose command line contains MARKER
#              (e.g. the build directory) are counted, so other builds are left alone
#   MAX_KILLS  stop after this many kills (default 1)
#   NAMES      extended regex of process names (default cc1plus|cicc|ptxas|cudafe\+\+)
# Prints one line per kill on stdout.
set -u
BUDGET_KB=$(( $1 * 1024 ))
MARKER=$2
MAX_KILLS=${3:-1}
NAMES=${4:-'cc1plus|cicc|ptxas|cudafe\+\+'}

is_ours() {   # walk up to 8 ancestors looking for MARKER in a command line
    local p=$1 i
    for i in 1 2 3 4 5 6 7 8; do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$MARKER" && return 0
        p=$(awk '/^PPid:/{print $2}' "/proc/$p/status" 2>/dev/null)
        [ -n "$p" ] && [ "$p" -gt 1 ] || return 1
    done
    return 1
}

kills=0
while [ "$kills" -lt "$MAX_KILLS" ]; do
    total=0 big=0 bigpid=
    for pid in $(pgrep "^($NAMES)\$"); do
        rss=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null)
        [ -n "$rss" ] || continue
        is_ours "$pid" || continue
        total=$(( total + rss ))
        if [ "$rss" -gt "$big" ]; then big=$rss; bigpid=$pid; fi
    done
    if [ -n "$bigpid" ] && [ "$total" -gt "$BUDGET_KB" ]; then
        name=$(cat "/proc/$bigpid/comm" 2>/dev/null)
        kill -9 "$bigpid" 2>/dev/null &&
            echo "reaper: total ${total} kB > budget ${BUDGET_KB} kB: SIGKILL $name ($bigpid, ${big} kB)"
        kills=$(( kills + 1 ))
    fi
    sleep 0.2
done
