#!/usr/bin/env bash
# Capture: CUDA extension builds on a machine (or in a shell) where no CUDA toolkit is found.
#
# Two ways to lose the toolkit, both faithful to what users hit:
#  * CUDA_HOME points at a directory without the toolkit (a typo, a removed version);
#  * no toolkit at all: the capture hides /usr/local (where the toolkit and the nvcc wrappers
#    live on the capture machine) for that run with an empty mount (--hide /usr/local), so
#    torch finds neither nvcc on PATH nor /usr/local/cuda.
# torch is the CUDA 13.0 build in $VENV_CU. MAX_JOBS is set inline where flash-attn needs it.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_uv
ensure_pkgs
V="$VENV_CU/bin"
PY_ARGS=(--python "$V/python")
FIX="Install the CUDA toolkit matching torch's CUDA (torch $TORCH_CUDA was built with CUDA 13.0), then export CUDA_HOME=/usr/local/cuda-13.0 and PATH=\$CUDA_HOME/bin:\$PATH before building."
rm -rf "$PKGS/tinyext/build" "$PKGS/tinyext/"*.egg-info

$CASE --slug tinyext-cuda-home-points-to-missing-dir --cwd "$PKGS/tinyext" \
    --title "pip install --no-build-isolation . with CUDA_HOME pointing at a directory without nvcc" \
    --cmd "CUDA_HOME=/nonexistent/cuda MAX_JOBS=1 $V/pip install --no-build-isolation ." \
    "${PY_ARGS[@]}" --cause cuda_home_missing \
    --key "error: nvcc not found at '/nonexistent/cuda/bin/nvcc'. Ensure CUDA path '/nonexistent/cuda' is correct." \
    --fix "$FIX"

$CASE --slug tinyext-no-cuda-toolkit-cuda-home-not-set --cwd "$PKGS/tinyext" --hide /usr/local \
    --title "pip install --no-build-isolation . with torch cu130 on a machine without a CUDA toolkit" \
    --cmd "$V/python -c 'import torch; print(torch.__version__, torch.version.cuda)'" \
    --cmd "MAX_JOBS=1 $V/pip install -v --no-build-isolation ." \
    "${PY_ARGS[@]}" --cause cuda_home_missing \
    --key "CUDA_HOME environment variable is not set. Please set it to your CUDA install root." \
    --fix "$FIX" \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run, so the machine has no toolkit; torch itself is a CUDA build (2.14.1+cu130)."

$CASE --slug flash-attn-no-cuda-toolkit --cwd "$SCRATCH" --hide /usr/local \
    --title "pip install --no-build-isolation flash-attn with torch cu130 and no CUDA toolkit installed" \
    --cmd "MAX_JOBS=1 $V/pip install --no-build-isolation flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --cause cuda_home_missing \
    --key "flash_attn was requested, but nvcc was not found." \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX" \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run."

$CASE --slug flash-attn-uv-cuda-home-points-to-missing-dir --cwd "$SCRATCH" \
    --title "uv pip install --no-build-isolation flash-attn with CUDA_HOME set to a directory without nvcc" \
    --cmd "CUDA_HOME=/nonexistent/cuda MAX_JOBS=1 $UV pip install --python $V/python --no-build-isolation flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --uv "$UV" --cause cuda_home_missing \
    --key "No such file or directory: '/nonexistent/cuda/bin/nvcc'" \
    --fix "$FIX"

$CASE --slug nvcc-command-not-found-then-setup-py --cwd "$PKGS/tinyext" --hide /usr/local \
    --title "nvcc --version says command not found; python setup.py bdist_wheel then fails on CUDA_HOME" \
    --mode seq \
    --cmd "nvcc --version" \
    --cmd "MAX_JOBS=1 $V/python setup.py bdist_wheel" \
    "${PY_ARGS[@]}" --cause cuda_home_missing \
    --key "nvcc: command not found" \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX" \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run."

$CASE --slug makefile-nvcc-not-found --cwd "$PKGS/makecu" --hide /usr/local \
    --title "make for a CUDA Makefile without nvcc: make's exec error and /bin/sh's 'not found'" \
    --mode seq \
    --cmd "make saxpy" \
    --cmd "make saxpy_dbg" \
    --gcc --cause cuda_home_missing \
    --key "make: nvcc: No such file or directory" \
    --key "/bin/sh: 1: nvcc: not found" \
    --fix "Install the CUDA toolkit and put its bin directory on PATH (export PATH=/usr/local/cuda-13.0/bin:\$PATH), or pass NVCC=/usr/local/cuda-13.0/bin/nvcc to make." \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run."

rm -rf "$SCRATCH/cmake-build"
$CASE --slug cmake-no-cuda-compiler-found --cwd "$PKGS/cmakecu" --hide /usr/local \
    --title "cmake configure of a CUDA-language project without a CUDA toolkit" \
    --cmd "cmake -S . -B $SCRATCH/cmake-build" \
    --gcc --tool "cmake=$(cmake --version | head -1 | awk '{print $3}')" --cause cuda_home_missing \
    --key "Failed to find nvcc." \
    --key "Compiler requires the CUDA toolkit.  Please set the CUDAToolkit_ROOT" \
    --fix "Install the CUDA toolkit and point CMake at it: -DCMAKE_CUDA_COMPILER=/usr/local/cuda-13.0/bin/nvcc (or export CUDACXX / put its bin on PATH)." \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run."
rm -rf "$SCRATCH/cmake-build" "$PKGS/tinyext/build" "$PKGS/tinyext/"*.egg-info

# xformers' setup.py asks nvcc for its version through PATH when FORCE_CUDA=1 and no toolkit is found.
$CASE --slug xformers-sdist-force-cuda-no-toolkit --cwd "$SCRATCH" --hide /usr/local \
    --title "pip install --no-build-isolation --no-binary xformers xformers with FORCE_CUDA=1 and no CUDA toolkit" \
    --cmd "FORCE_CUDA=1 MAX_JOBS=1 $V/pip install --no-build-isolation --no-binary xformers xformers==0.0.35" \
    "${PY_ARGS[@]}" --cause cuda_home_missing \
    --key "FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'" \
    --fix "$FIX" \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run."
