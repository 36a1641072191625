#!/usr/bin/env bash
# A GitLab-CI-shaped job: each script line is echoed as GitLab does (`$ cmd` in bold green, inside
# section markers) and run in one bash, stopping at the first failing line, then the job's end line.
#   gitlab_runner.sh 'line 1' 'line 2' ...
set -u
printf '\033[0KRunning with gitlab-runner 17.5.0 (shell executor)\n'
printf 'section_start:%s:step_script\r\033[0K\033[0K\033[36;1mExecuting "step_script" stage of the job script\033[0;m\n' "$(date +%s)"
script=""
for line in "$@"; do
    q=$(printf '%q' "$line")
    script+="printf '\\033[32;1m\$ %s\\033[0;m\\n' $q"$'\n'"$line"$'\n'
done
bash -e -c "$script"
rc=$?
printf 'section_end:%s:step_script\r\033[0K\n' "$(date +%s)"
if [ $rc -eq 0 ]; then printf '\033[32;1mJob succeeded\033[0;m\n'; else printf '\033[31;1mERROR: Job failed: exit status %s\033[0;m\n' "$rc"; fi
