#!/usr/bin/env bash
# Capture: a build-time module or tool is missing from the environment the build runs in
# (packaging, wheel, psutil, setuptools, ninja), usually after --no-build-isolation.
#
# Venvs: $VENV_CU (torch only; setuptools 84 brings vendored packaging/wheel), $VENV_CPU (torch
# +cpu), and throw-away venvs under $SCRATCH/venv-fresh* (python's bundled pip 23.2.1 and
# setuptools 65.5, no wheel, no packaging). The "ninja missing" case hides /usr/bin/ninja for
# that run (--hide): the log is what a machine without ninja prints.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_uv
ensure_pkgs
"$VENV_CU/bin/pip" uninstall -q -y psutil 2>/dev/null
FRESH="$SCRATCH/venv-fresh"
FRESH2="$SCRATCH/venv-fresh-nosetuptools"
UVVENV="$SCRATCH/venv-uv-created"

# flash-attn's setup imports psutil when MAX_JOBS is not set (setup_requires lists it, pip ignores that).
$CASE --slug flash-attn-no-build-isolation-missing-psutil --cwd "$SCRATCH" \
    --title "pip install --no-build-isolation flash-attn in a torch venv without psutil (MAX_JOBS unset)" \
    --cmd "$VENV_CU/bin/pip install --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$VENV_CU/bin/python" --cause missing_build_dependency \
    --key "ModuleNotFoundError: No module named 'psutil'" \
    --fix "pip install psutil ninja packaging wheel into the venv (or set MAX_JOBS, which skips flash-attn's psutil import), then rerun with --no-build-isolation." \
    --notes "torch's cpp_extension warns 'No CUDA runtime is found, using CUDA_HOME=/usr/local' because nvcc is found as /usr/local/bin/nvcc; that is not the failure."

$CASE --slug flash-attn-uv-no-build-isolation-missing-psutil --cwd "$SCRATCH" \
    --title "uv pip install --no-build-isolation flash-attn in a torch venv without psutil" \
    --cmd "$UV pip install --python $VENV_CU/bin/python --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$VENV_CU/bin/python" --uv "$UV" --cause missing_build_dependency \
    --key "No module named 'psutil'" \
    --fix "uv pip install --python VENV/bin/python psutil ninja packaging wheel, then rerun (or set MAX_JOBS)."

fresh_venv "$FRESH"
$CASE --slug flash-attn-no-build-isolation-fresh-venv-missing-packaging --cwd "$SCRATCH" \
    --title "pip -v install --no-build-isolation flash-attn in a fresh venv: setup.py imports packaging first" \
    --cmd "$PYENV_PY -m venv $FRESH" \
    --cmd ". $FRESH/bin/activate" \
    --cmd "pip install -v --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$FRESH/bin/python" --setuptools --cause missing_build_dependency \
    --key "ModuleNotFoundError: No module named 'packaging'" \
    --fix "Install torch and the build tools into the venv first: pip install torch packaging wheel ninja psutil; then pip install --no-build-isolation flash-attn." \
    --notes "torch is not installed either; setup.py stops at its first import (packaging, line 12) before it reaches 'import torch'."

"$FRESH/bin/pip" install -q packaging
$CASE --slug flash-attn-no-build-isolation-missing-wheel --cwd "$SCRATCH" \
    --title "pip install --no-build-isolation flash-attn with setuptools 65 and no 'wheel' package" \
    --cmd "$FRESH/bin/pip list" \
    --cmd "$FRESH/bin/pip install --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$FRESH/bin/python" --setuptools --cause missing_build_dependency \
    --key "ModuleNotFoundError: No module named 'wheel'" \
    --fix "pip install wheel (or setuptools>=70.1) into the venv, plus torch, ninja and psutil, then rerun with --no-build-isolation."

fresh_venv "$FRESH"
$CASE --slug plainext-setup-py-bdist-wheel-without-wheel --cwd "$PKGS/plainext" \
    --title "python setup.py bdist_wheel with setuptools 65.5 and no 'wheel' package installed" \
    --cmd "$FRESH/bin/python setup.py bdist_wheel" \
    --python "$FRESH/bin/python" --setuptools --cause missing_build_dependency \
    --key "error: invalid command 'bdist_wheel'" \
    --fix "pip install wheel (or upgrade to setuptools>=70.1, which ships bdist_wheel), or build with pip wheel . / python -m build."

$CASE --slug tinycpp-jit-load-without-ninja --cwd "$PKGS/tinycpp" --hide /usr/bin/ninja \
    --title "torch.utils.cpp_extension.load() on a machine without ninja" \
    --cmd "$VENV_CPU/bin/python -c \"from torch.utils.cpp_extension import load; m = load(name='tinycpp', sources=['tinycpp.cpp'], verbose=True)\"" \
    --python "$VENV_CPU/bin/python" --cause missing_build_dependency \
    --key "RuntimeError: Ninja is required to load C++ extensions" \
    --fix "pip install ninja into the venv (or apt install ninja-build) so that 'ninja --version' works on PATH." \
    --notes "The capture hid /usr/bin/ninja for this run (bind mount of /dev/null), so the machine looks like one without ninja."

fresh_venv "$FRESH2"
"$FRESH2/bin/pip" uninstall -q -y setuptools
$CASE --slug plainext-pip-no-build-isolation-without-setuptools --cwd "$PKGS/plainext" \
    --title "pip install --no-build-isolation . in a venv without setuptools" \
    --cmd "$FRESH2/bin/pip install --no-build-isolation ." \
    --python "$FRESH2/bin/python" --cause missing_build_dependency \
    --key "ModuleNotFoundError: No module named 'setuptools'" \
    --fix "pip install setuptools wheel into the venv (Python 3.12+ venvs no longer include setuptools), or drop --no-build-isolation."

rm -rf "$UVVENV"
$CASE --slug plainext-uv-venv-no-build-isolation-without-setuptools --cwd "$PKGS/plainext" \
    --title "uv venv + uv pip install --no-build-isolation . (uv venvs have no setuptools)" \
    --cmd "$UV venv --python $PYENV_PY $UVVENV" \
    --cmd "$UV pip install --python $UVVENV/bin/python --no-build-isolation ." \
    --python "$UVVENV/bin/python" --uv "$UV" --cause missing_build_dependency \
    --key "No module named 'setuptools'" \
    --fix "uv pip install setuptools wheel (and the package's other build requirements) into the venv before --no-build-isolation, or drop --no-build-isolation."
rm -rf "$FRESH2" "$UVVENV"
