# Shared helpers for the capture scripts (sourced, not run).
#
# A captured log looks like a terminal paste: each command appears as a line
# "$ <exact command>" followed by everything it printed (stdout and stderr).

# Working area outside the repository, and the CUDA toolkit used for the builds.
: "${WORK:=/work/scratch/heavy}"
: "${CUDA13:=/usr/local/cuda-13.0}"
: "${RAW:=$WORK/raw}"            # unsanitised transcripts land here
: "${CASES:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../cases" && pwd)}"

mkdir -p "$RAW"

# run_logged LOG 'command line' -- echo the command, then run it through bash,
# appending its output (both streams, in order) to LOG. Returns its exit code.
run_logged() {
    local log=$1 cmd=$2
    printf '$ %s\n' "$cmd" >>"$log"
    nice -n 10 bash -c "$cmd" >>"$log" 2>&1
    local rc=$?
    return $rc
}

# sanitize SRC DST -- replace package-registry host names with index.example.
# Nothing else in the tools' output is touched.
sanitize() {
    sed -E \
        -e 's#files\.pythonhosted\.org#index.example#g' \
        -e 's#(^|[^.a-z])pypi\.org#\1index.example#g' \
        -e 's#download\.pytorch\.org#index.example#g' \
        -e 's#pypi\.nvidia\.com#index.example#g' \
        "$1" >"$2"
}

# publish RAWLOG SLUG -- sanitise into corpus/cases/SLUG.log, gzip when over ~200 KB.
publish() {
    local src=$1 slug=$2 dst="$CASES/$2.log"
    sanitize "$src" "$dst"
    rm -f "$dst.gz"
    if [ "$(stat -c %s "$dst")" -gt 200000 ]; then
        gzip -9n "$dst"
    fi
}

# run_seq LOG 'cmd1' 'cmd2' ... -- run the commands one after another in ONE
# shell (so ulimit, export and cd carry over, as in a terminal), echoing each as
# "$ cmd" before its output. Every command runs even when an earlier one failed.
run_seq() {
    local log=$1; shift
    local script
    script=$(mktemp)
    {
        for c in "$@"; do
            printf 'printf "%%s\\n" %q\n' "\$ $c"
            printf '%s\n' "$c"
        done
    } >"$script"
    nice -n 10 bash "$script" >>"$log" 2>&1
    local rc=$?
    rm -f "$script"
    return $rc
}
