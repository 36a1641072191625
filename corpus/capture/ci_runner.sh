#!/usr/bin/env bash
# A CI-shaped runner: runs steps the way a GitHub Actions job prints them, for the session captures.
# Each step prints `##[group]Run <script>`, the script, its shell and env, `##[endgroup]`, then the
# step's output, every line stamped with the time as Actions does; a step that fails prints
# `##[error]Process completed with exit code N.` and, being `continue-on-error`, the job goes on.
#   ci_runner.sh 'VAR=value ...' 'step script' ['VAR=value ...' 'step script' ...]
# (the env part may be empty: '').
set -u
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%7NZ)" "$line"; done; }
{
    echo "##[group]Run actions/checkout@v4"
    echo "##[endgroup]"
} | stamp
while [ $# -ge 2 ]; do
    envs=$1 script=$2; shift 2
    {
        echo "##[group]Run $script"
        echo "$script"
        echo "shell: /usr/bin/bash -e {0}"
        if [ -n "$envs" ]; then
            echo "env:"
            for kv in $envs; do echo "  ${kv%%=*}: ${kv#*=}"; done
        fi
        echo "##[endgroup]"
    } | stamp
    ( for kv in $envs; do export "$kv"; done; bash -e -c "$script" ) 2>&1 | stamp
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then echo "##[error]Process completed with exit code $rc." | stamp; fi
done
