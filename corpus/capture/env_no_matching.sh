#!/usr/bin/env bash
# Capture: pip / uv finding no release that fits the request, this Python, or the index.
#
# Runs in $VENV_BARE (pip + setuptools only). Nothing large is downloaded: every request is
# refused during resolution. The pip site config of the capture machine caps torch with a
# constraint file (/etc/xdg/pip: torch<=2.14.1); one case keeps that cap (its message is a
# resolver conflict, not "no matching distribution"), the torch case that shows pip's own
# "No matching distribution" message hides /etc/xdg/pip for the run (--hide).
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_venv "$VENV_BARE"
ensure_uv
B="$VENV_BARE/bin"
PY_ARGS=(--python "$B/python")

$CASE --slug flash-attn-version-does-not-exist --cwd "$SCRATCH" \
    --title "pip install flash-attn==2.9.9 (no such release)" \
    --cmd "$B/pip install flash-attn==2.9.9" \
    "${PY_ARGS[@]}" --cause no_matching_distribution \
    --key "Could not find a version that satisfies the requirement flash-attn==2.9.9" \
    --key "No matching distribution found for flash-attn==2.9.9" \
    --fix "Pick a released version (the 'from versions:' list shows them), e.g. flash-attn==$FLASH_ATTN."

$CASE --slug numpy-release-requires-python-312-verbose --cwd "$SCRATCH" \
    --title "pip -v install numpy==2.5.5 on Python 3.11 (the release needs Python >= 3.12)" \
    --cmd "$B/pip install -v numpy==2.5.5" \
    "${PY_ARGS[@]}" --cause no_matching_distribution \
    --key "Ignored the following versions that require a different python version" \
    --key "No matching distribution found for numpy==2.5.5" \
    --fix "Use Python 3.12 or newer for numpy 2.5.x, or stay on numpy 2.4.x with Python 3.11."

$CASE --slug flash-attn-only-binary-no-wheels --cwd "$SCRATCH" \
    --title "pip install --only-binary=:all: flash-attn (the index has only an sdist)" \
    --cmd "$B/pip install --only-binary=:all: flash-attn" \
    "${PY_ARGS[@]}" --cause no_matching_distribution \
    --key "Could not find a version that satisfies the requirement flash-attn (from versions: none)" \
    --fix "Allow the sdist (drop --only-binary) and build it with torch installed and --no-build-isolation, or install a prebuilt wheel from the project's releases that matches torch, CUDA, Python and the C++ ABI."

$CASE --slug torch-local-cuda-tag-not-on-index --cwd "$SCRATCH" \
    --title "pip install torch==2.14.1+cu128 from the default index (local +cu tags live on the PyTorch index)" \
    --cmd "$B/pip install torch==2.14.1+cu128" --hide /etc/xdg/pip \
    "${PY_ARGS[@]}" --cause no_matching_distribution \
    --key "Could not find a version that satisfies the requirement torch==2.14.1+cu128" \
    --key "No matching distribution found for torch==2.14.1+cu128" \
    --fix "Install from the PyTorch index for that CUDA: pip install torch==2.14.1 --index-url https://index.example/whl/cu128" \
    --notes "The capture machine's site pip config (constraint file) was hidden for this run."

$CASE --slug torch-version-above-constraint-cap --cwd "$SCRATCH" \
    --title "pip install torch==2.15.0 where a pip constraint file caps torch<=2.14.1" \
    --cmd "$B/pip install torch==2.15.0" \
    "${PY_ARGS[@]}" --cause dependency_conflict \
    --key "ERROR: Cannot install torch==2.15.0 because these package versions have conflicting dependencies." \
    --key "The user requested (constraint) torch<=2.14.1" \
    --key "ERROR: ResolutionImpossible" \
    --fix "Request a torch allowed by the constraint (torch<=2.14.1) or lift the constraint (PIP_CONSTRAINT / the constraint= line in pip.conf, here /etc/xdg/pip/pip.conf)." \
    --notes "The constraint comes from the site pip.conf (constraint = /etc/xdg/pip/constraints.txt), not from the command line; torch 2.15.0 exists on the index. Proposed cause id dependency_conflict: pip's resolver conflict (ResolutionImpossible), unlike no_matching_distribution where no release exists."

$CASE --slug uv-flash-attn-version-does-not-exist --cwd "$SCRATCH" \
    --title "uv pip install flash-attn==2.9.9 (no such release)" \
    --cmd "$UV pip install --python $B/python flash-attn==2.9.9" \
    "${PY_ARGS[@]}" --uv "$UV" --cause no_matching_distribution \
    --key "No solution found when resolving dependencies" \
    --key "there is no version of flash-attn==2.9.9" \
    --fix "Pick a released version, e.g. flash-attn==$FLASH_ATTN."

$CASE --slug uv-numpy-release-requires-python-312 --cwd "$SCRATCH" \
    --title "uv pip install numpy==2.5.5 into a Python 3.11 venv" \
    --cmd "$UV pip install --python $B/python numpy==2.5.5" \
    "${PY_ARGS[@]}" --uv "$UV" --cause no_matching_distribution \
    --key "No solution found when resolving dependencies" \
    --key "the current Python version (3.11.7) does not satisfy Python>=3.12" \
    --fix "Use Python 3.12 or newer (uv venv --python 3.12) or request numpy<2.5."

$CASE --slug uv-torch-local-cuda-tag --cwd "$SCRATCH" \
    --title "uv pip install torch==2.14.1+cu128 against the default index" \
    --cmd "$UV pip install --python $B/python torch==2.14.1+cu128" \
    "${PY_ARGS[@]}" --uv "$UV" --cause no_matching_distribution \
    --key "No solution found when resolving dependencies" \
    --fix "Add the PyTorch index for that CUDA: uv pip install torch==2.14.1 --index-url https://index.example/whl/cu128 (or --torch-backend cu128)."
