#!/usr/bin/env bash
# Re-captures the dependency_conflict cases: requirements that exclude each other, with pip and uv.
#
# Needs network access to the package index (only metadata is fetched: every command is a dry run
# or fails while resolving). Logs and sidecars are written to corpus/cases/.
set -u
WORK=${WORK:-/work/scratch/lead}
VENV=$WORK/conflict-venv
CASES=$(cd "$(dirname "$0")/../cases" && pwd)
TODAY=$(date +%F)

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q uv >/dev/null 2>&1

sanitize() {  # registry host names -> index.example; nothing else is touched
    sed -E -e 's#files\.pythonhosted\.org#index.example#g' -e 's#(^|[^.a-z])pypi\.org#\1index.example#g' \
        -e 's#download\.pytorch\.org#index.example#g'
}

# capture SLUG TITLE KEYLINE COMMAND: run COMMAND in $VENV, keep its output as a terminal paste.
capture() {
    local slug=$1 title=$2 key=$3 cmd=$4 log
    log=$(mktemp)
    printf '$ %s\n' "$cmd" >"$log"
    (cd "$WORK" && PATH="$VENV/bin:$PATH" bash -c "$cmd") >>"$log" 2>&1
    sanitize <"$log" >"$CASES/$slug.log"
    rm -f "$log"
    cat >"$CASES/$slug.toml" <<TOML
title = "$title"
provenance = "captured"
date = "$TODAY"
command = "$(printf '%s' "$cmd" | sed 's/"/\\"/g')"
tools = { python = "$("$VENV/bin/python" -c 'import platform; print(platform.python_version())')", pip = "$("$VENV/bin/pip" --version | cut -d' ' -f2)", uv = "$("$VENV/bin/uv" --version | cut -d' ' -f2)" }
outcome = "failure"
causes = ["dependency_conflict"]
key_lines = ["$key"]
fix = "Relax one of the conflicting pins, or choose versions that agree."
TOML
}

capture pip-two-numpy-ranges-conflict "pip asked for two numpy ranges that exclude each other" \
    "these package versions have conflicting dependencies" \
    "pip install --dry-run 'numpy<2' 'numpy>=2'"
capture pip-torchvision-pins-other-torch "torchvision 0.29.1 beside torch 2.13.0 (it pins torch 2.14.1)" \
    "these package versions have conflicting dependencies" \
    "pip install --dry-run torch==2.13.0 torchvision==0.29.1"
capture pip-vllm-pins-older-torch "vllm 0.6.3 beside torch 2.5.1 (it pins torch 2.4.0)" \
    "these package versions have conflicting dependencies" \
    "pip install --dry-run vllm==0.6.3 torch==2.5.1"
capture uv-vllm-pins-older-torch "uv: vllm 0.6.3 beside torch 2.5.1 (it pins torch 2.4.0)" \
    "No solution found when resolving dependencies" \
    "uv pip install --dry-run --python $VENV/bin/python vllm==0.6.3 torch==2.5.1"
capture uv-two-numpy-ranges-conflict "uv: two numpy ranges that exclude each other" \
    "No solution found when resolving dependencies" \
    "uv pip install --dry-run --python $VENV/bin/python 'numpy<2' 'numpy>=2'"
