#!/usr/bin/env bash
# Capture: multi-attempt sessions typed into an interactive bash in a real pty (pty_session.py),
# in the shell forms people save logs with (2>&1 | tee, &>, > log 2>&1; cat, |&, time, env,
# nohup ... &, bash -x, line continuations) and in a CI-shaped runner (ci_runner.sh, GitHub
# Actions' format; a GitLab-shaped job too), each with checks after its build. Sidecars are
# written by hand from what each transcript shows (see the [[incidents]] in each .toml).
# Needs env_lib.sh's venv-cpu (torch 2.13.0+cpu), venv-bare and the test packages; raw
# transcripts land in $RAW_PTY, published logs in corpus/cases/.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_pkgs
HERE="$CAPTURE_DIR"
RAW_PTY="${RAW_PTY:-$SCRATCH/raw-pty}"
mkdir -p "$RAW_PTY"
PS="root@gpu-box:~/pkgs$ "
clean() {  # a fresh tree and nothing installed, so each session starts where a new user would
    rm -rf "$PKGS/tinycpp/build" "$PKGS/tinycpp/"*.egg-info "$PKGS/tinyext/build" "$PKGS/tinyext/"*.egg-info "$PKGS"/build.log
    "$VENV_CPU/bin/pip" uninstall -q -y tinycpp tinyext >/dev/null 2>&1
}
session() {  # session SLUG CMD...
    local slug=$1; shift
    [ -n "${CAPTURE_ONLY:-}" ] && [[ " $CAPTURE_ONLY " != *" $slug "* ]] && return 0
    clean
    python3 "$HERE/pty_session.py" --out "$RAW_PTY/$slug.log" --cwd "$PKGS" --ps1 "$PS" -- "$@"
    echo "captured $slug" >&2
}

session session-pty-tee-isolation-then-no-isolation-import-check \
    "source $VENV_CPU/bin/activate" \
    "MAX_JOBS=1 pip install ./tinycpp 2>&1 | tee build.log" \
    "MAX_JOBS=1 pip install --no-build-isolation ./tinycpp 2>&1 | tee build.log" \
    "python -c 'import torch, tinycpp; print(torch.__version__, tinycpp.__file__)'"

session session-pty-system-python-redirect-then-venv-amp-redirect \
    "/usr/bin/python3 -m pip install --no-build-isolation ./tinycpp > build.log 2>&1; cat build.log" \
    "source $VENV_CPU/bin/activate" \
    "MAX_JOBS=1 pip install --no-build-isolation ./tinycpp &> build.log; tail -n 4 build.log" \
    "python -c 'import tinycpp'"

session session-pty-cpu-torch-time-pipe-amp-still-failing \
    "source $VENV_CPU/bin/activate" \
    "time MAX_JOBS=1 pip install --no-build-isolation ./tinyext |& tee build.log" \
    "export CUDA_HOME=/usr/local/cuda-13.0" \
    "time MAX_JOBS=1 pip install --no-build-isolation ./tinyext |& tee build.log"

session session-pty-isolation-and-system-python-one-change \
    "$VENV_CPU/bin/pip install ./tinycpp" \
    "/usr/bin/python3 -m pip install --no-build-isolation ./tinycpp" \
    "MAX_JOBS=1 $VENV_CPU/bin/pip install --no-build-isolation ./tinycpp" \
    "$VENV_CPU/bin/python -c 'import torch, tinycpp'"

cat > "$PKGS/build.sh" <<'SH'
export MAX_JOBS=1
pip install ./tinycpp 2>&1 | tee -a build.log
pip install --no-build-isolation ./tinycpp 2>&1 | tee -a build.log
python -c 'import tinycpp; print(tinycpp.__file__)'
SH
session session-pty-bash-x-script-tee-append \
    "source $VENV_CPU/bin/activate" \
    "cat build.sh" \
    "bash -x build.sh"

session session-pty-nohup-background-then-env-python-m-pip \
    "nohup env MAX_JOBS=1 $VENV_CPU/bin/python -m pip install ./tinycpp > build.log 2>&1 &" \
    "#wait 20" \
    "wait; cat build.log" \
    "env MAX_JOBS=1 $VENV_CPU/bin/python -m pip install \\
    --no-build-isolation ./tinycpp 2>&1 | tee build.log" \
    "$VENV_CPU/bin/python -c 'import tinycpp'"

session session-ci-github-actions-steps-tee-isolation-then-flag \
    "bash $HERE/ci_runner.sh '' '$VENV_CPU/bin/python -c \"import torch; print(torch.__version__)\"' 'MAX_JOBS=1' '$VENV_CPU/bin/pip install ./tinycpp 2>&1 | tee build.log' 'MAX_JOBS=1' '$VENV_CPU/bin/pip install --no-build-isolation ./tinycpp 2>&1 | tee build.log' '' '$VENV_CPU/bin/python -c \"import torch, tinycpp\"'"

fresh_venv "$VENV_BARE"
session session-ci-gitlab-job-bare-venv-then-torch-then-build \
    "bash $HERE/gitlab_runner.sh 'source $VENV_BARE/bin/activate' 'MAX_JOBS=1 pip install --no-build-isolation ./tinycpp 2>&1 | tee build.log || true' 'pip install -q torch==$TORCH_CPU' 'MAX_JOBS=1 pip install --no-build-isolation ./tinycpp 2>&1 | tee build.log' 'python -c \"import torch, tinycpp; print(torch.__version__)\"'"
clean
