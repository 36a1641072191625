# Shared settings for the env_*.sh capture scripts (packaging / environment failures).
# Source it, do not run it. Run one env_*.sh script at a time: they share the venvs and
# the test packages under $PKGS. CAPTURE_ONLY="slug other-slug" limits a script to those cases.
#
# The machine these were captured on: Debian 12 (PEP 668 /usr/bin/python3 3.11.2, python3-pip
# 23.0.1), pyenv python3 3.11.7 (pip 23.2.1), CUDA 13.0 at /usr/local/cuda-13.0 (nvcc
# wrappers in /usr/local/bin), gcc 12.2, 2 cores. torch 2.14.1 (cu130) and 2.13.0 (+cpu) come
# from local wheel dirs configured for pip; a site pip.conf adds a constraint torch<=2.14.1.

set -u

CAPTURE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CASE="python3 $CAPTURE_DIR/env_capture.py"   # runs one case: see its docstring

# Scratch area outside the repository: venvs, unpacked sdists, test packages, tiny mounts.
SCRATCH="${SCRATCH:-/work/scratch/envfail}"
PYENV_PY="${PYENV_PY:-$(command -v python3)}"      # the default python3 (not PEP 668 managed)
SYS_PY="${SYS_PY:-/usr/bin/python3}"               # Debian's externally managed interpreter
CUDA_DIR="${CUDA_DIR:-/usr/local/cuda-13.0}"
NVCC="$CUDA_DIR/bin/nvcc"
TORCH_CUDA="${TORCH_CUDA:-2.14.1}"                 # CUDA 13.0 build from the local wheel dir
TORCH_CPU="${TORCH_CPU:-2.13.0}"                   # CPU-only build from the local wheel dir
FLASH_ATTN="${FLASH_ATTN:-2.8.3.post2}"
unset MAX_JOBS   # builds show MAX_JOBS inline where they set it

VENV_CU="$SCRATCH/venv-cu130"     # torch $TORCH_CUDA only (as pip installs it: no numpy, psutil, einops, wheel)
VENV_CPU="$SCRATCH/venv-cpu"      # torch $TORCH_CPU (+cpu) only
VENV_BARE="$SCRATCH/venv-bare"    # a fresh venv: pip + setuptools only
VENV_UV="$SCRATCH/venv-uv"        # holds the uv binary
UV="$VENV_UV/bin/uv"
PKGS="$SCRATCH/pkgs"              # small test packages written by env_make_pkgs.sh

mkdir -p "$SCRATCH" "$PKGS"

# ensure_venv DIR [pip install args...]: create DIR with the pyenv python if missing, then install.
ensure_venv() {
    local dir="$1"; shift
    [ -x "$dir/bin/python" ] || "$PYENV_PY" -m venv "$dir"
    if [ $# -gt 0 ]; then nice "$dir/bin/pip" install -q "$@"; fi
}

ensure_uv() {
    [ -x "$UV" ] || ensure_venv "$VENV_UV" uv
}

# The torch venvs as the capture scripts expect them (idempotent; torch comes from the local wheel dirs).
ensure_torch_venvs() {
    "$VENV_CU/bin/python" -c "import torch" 2>/dev/null || ensure_venv "$VENV_CU" "torch==$TORCH_CUDA"
    "$VENV_CPU/bin/python" -c "import torch" 2>/dev/null || ensure_venv "$VENV_CPU" "torch==$TORCH_CPU"
}

# fresh_venv DIR: recreate DIR as a brand-new venv (pip + setuptools as bundled with python).
fresh_venv() {
    rm -rf "$1"; "$PYENV_PY" -m venv "$1"
}

# ensure_pkgs: write the test packages once (rewriting them under a running build breaks it).
ensure_pkgs() {
    [ -d "$PKGS/cmakecu" ] || bash "$CAPTURE_DIR/env_make_pkgs.sh" >/dev/null
}
