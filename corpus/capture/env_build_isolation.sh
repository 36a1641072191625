#!/usr/bin/env bash
# Capture: packages whose setup imports torch, built in pip's / uv's isolated build environment
# (which has setuptools but not the torch installed in the venv): "No module named 'torch'".
#
# Uses $VENV_CU (torch $TORCH_CUDA installed) so the torch that the build cannot see is right
# there; the failure happens while the build backend is asked for its requirements, before any
# compiler runs. Needs the packages from env_make_pkgs.sh.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_uv
ensure_pkgs
"$VENV_CU/bin/python" -c "import build" 2>/dev/null || "$VENV_CU/bin/pip" install -q build
V="$VENV_CU/bin"
PY_ARGS=(--python "$V/python")
FIX="torch is installed in the venv but not in the isolated build env: install the build tools (setuptools, wheel, packaging, ninja, psutil) into the venv and rerun with --no-build-isolation."
FIX_OWN="Add torch to [build-system] requires (pinned to the torch you run), or install build tools into the venv and build with --no-build-isolation."

$CASE --slug flash-attn-pip-isolated-build-no-torch --cwd "$SCRATCH" \
    --title "pip install flash-attn into a venv with torch 2.14.1: the isolated build env has no torch" \
    --cmd "$V/pip install flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --cause build_isolation_missing_torch \
    --key "Getting requirements to build wheel did not run successfully." \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "$FIX"

$CASE --slug flash-attn-pip-verbose-isolated-build-no-torch --cwd "$SCRATCH" \
    --title "pip -v install flash-attn: verbose log of the isolated build env lacking torch" \
    --cmd ". $VENV_CU/bin/activate" \
    --cmd "python -m pip install -v flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --cause build_isolation_missing_torch \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "$FIX"

$CASE --slug flash-attn-uv-isolated-build-no-torch --cwd "$SCRATCH" \
    --title "uv pip install flash-attn into a venv with torch: uv's isolated build env has no torch" \
    --cmd "$UV pip install --python $V/python flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --uv "$UV" --cause build_isolation_missing_torch \
    --key "No module named 'torch'" \
    --key "depends on \`torch\`, but doesn't declare it as a build dependency" \
    --fix "uv pip install --python VENV/bin/python setuptools wheel packaging ninja psutil, then uv pip install --python VENV/bin/python --no-build-isolation flash-attn (or declare torch as an extra build dependency: [tool.uv.extra-build-dependencies] flash-attn = [\"torch\"])."

$CASE --slug tinyext-pyproject-without-torch-pip-install --cwd "$PKGS/tinyext-pep517" \
    --title "pip install . for a torch CUDAExtension whose pyproject build requires omit torch" \
    --cmd "cat pyproject.toml" \
    --cmd "$V/pip install ." \
    "${PY_ARGS[@]}" --cause build_isolation_missing_torch \
    --key "Getting requirements to build wheel did not run successfully." \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "$FIX_OWN"

$CASE --slug tinyext-pyproject-without-torch-python-m-build --cwd "$PKGS/tinyext-pep517" \
    --title "python -m build --wheel for a CUDAExtension whose build requires omit torch" \
    --cmd "$V/python -m build --wheel" \
    "${PY_ARGS[@]}" --cause build_isolation_missing_torch \
    --key "No module named 'torch'" \
    --key "ERROR Backend subprocess exited when trying to invoke get_requires_for_build_wheel" \
    --fix "$FIX_OWN (python -m build --no-isolation --wheel)"

$CASE --slug tinyext-pyproject-without-torch-uv --cwd "$PKGS/tinyext-pep517" \
    --title "uv pip install . for a CUDAExtension whose build requires omit torch" \
    --cmd "$UV pip install --python $V/python ." \
    "${PY_ARGS[@]}" --uv "$UV" --cause build_isolation_missing_torch \
    --key "No module named 'torch'" \
    --fix "$FIX_OWN (uv pip install --no-build-isolation .)"

$CASE --slug tinyext-setup-py-only-pip-isolated --cwd "$PKGS/tinyext" \
    --title "pip install . for a setup.py-only CUDAExtension: pip still builds it in isolation" \
    --cmd "ls" \
    --cmd "$V/pip install ." \
    "${PY_ARGS[@]}" --cause build_isolation_missing_torch \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "$FIX" \
    --notes "No pyproject.toml: pip 23.2.1 uses setuptools.build_meta:__legacy__ in an isolated env because the venv has no 'wheel' package."
