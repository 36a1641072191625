#!/usr/bin/env bash
# Capture: CUDA extensions built against a CPU-only torch ($TORCH_CPU+cpu in $VENV_CPU).
#
# The CUDA 13.0 toolkit is installed and (in some cases) CUDA_HOME is exported; torch still
# reports "CUDA_HOME environment variable is not set", because a CPU build of torch never
# looks for a toolkit. MAX_JOBS is set inline where flash-attn would otherwise import psutil.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_uv
ensure_pkgs
V="$VENV_CPU/bin"
PY_ARGS=(--python "$V/python")
FIX="torch in this venv is a CPU-only build ($TORCH_CPU+cpu): install a CUDA build matching the toolkit (pip install torch==$TORCH_CUDA --index-url https://index.example/whl/cu130), then rebuild."
clean() { rm -rf "$PKGS/tinyext/build" "$PKGS/tinyext/"*.egg-info "$PKGS/tinyext/"*.so; }
clean

$CASE --slug tinyext-cpu-torch-cuda-home-exported --cwd "$PKGS/tinyext" \
    --title "CUDAExtension with torch 2.13.0+cpu while CUDA_HOME is exported and nvcc works" \
    --cmd "export CUDA_HOME=/usr/local/cuda-13.0" \
    --cmd "\$CUDA_HOME/bin/nvcc --version" \
    --cmd "$V/python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'" \
    --cmd "MAX_JOBS=1 $V/pip install --no-build-isolation ." \
    "${PY_ARGS[@]}" --nvcc "$NVCC" --cause cpu_only_torch \
    --key "2.13.0+cpu None False" \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX"
clean

$CASE --slug tinyext-cpu-torch-setup-py-build-ext --cwd "$PKGS/tinyext" \
    --title "python setup.py build_ext --inplace for a CUDAExtension with torch 2.13.0+cpu (CUDA_HOME unset)" \
    --cmd "MAX_JOBS=1 $V/python setup.py build_ext --inplace" \
    "${PY_ARGS[@]}" --nvcc "$NVCC" --cause cuda_home_missing \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX" \
    --notes "The torch in this run is a CPU-only build, but nothing in the log says so (no version is printed and CUDA_HOME is unset), so the answer the log supports is a missing toolkit; the fix buildlog gives names a CPU-only torch as the other reason for this message. The sibling cases that print the torch version or set CUDA_HOME are labelled cpu_only_torch."
clean

$CASE --slug flash-attn-cpu-torch --cwd "$SCRATCH" \
    --title "pip install --no-build-isolation flash-attn against torch 2.13.0+cpu with CUDA_HOME set" \
    --cmd "CUDA_HOME=/usr/local/cuda-13.0 MAX_JOBS=1 $V/pip install --no-build-isolation flash-attn==$FLASH_ATTN" \
    "${PY_ARGS[@]}" --nvcc "$NVCC" --cause cpu_only_torch \
    --key "torch.__version__  = 2.13.0+cpu" \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX"

$CASE --slug tinyext-cpu-torch-uv --cwd "$PKGS/tinyext" \
    --title "uv pip install --no-build-isolation . (CUDAExtension) into a venv with torch 2.13.0+cpu" \
    --cmd "CUDA_HOME=/usr/local/cuda-13.0 MAX_JOBS=1 $UV pip install --python $V/python --no-build-isolation ." \
    "${PY_ARGS[@]}" --uv "$UV" --nvcc "$NVCC" --cause cpu_only_torch \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX"
clean

$CASE --slug cpu-torch-tensor-cuda-assertion --cwd "$SCRATCH" \
    --title "moving a tensor to CUDA with torch 2.13.0+cpu" \
    --cmd "$V/python -c 'import torch; print(torch.__version__); x = torch.ones(3).cuda()'" \
    "${PY_ARGS[@]}" --cause cpu_only_torch \
    --key "AssertionError: Torch not compiled with CUDA enabled" \
    --fix "$FIX"

$CASE --slug xformers-sdist-force-cuda-cpu-torch --cwd "$SCRATCH" \
    --title "pip install --no-build-isolation --no-binary xformers xformers with FORCE_CUDA=1 against torch 2.13.0+cpu" \
    --cmd "CUDA_HOME=/usr/local/cuda-13.0 FORCE_CUDA=1 MAX_JOBS=1 $V/pip install --no-build-isolation --no-binary xformers xformers==0.0.35" \
    "${PY_ARGS[@]}" --nvcc "$NVCC" --cause cpu_only_torch \
    --key "CUDA_HOME environment variable is not set" \
    --fix "$FIX"
