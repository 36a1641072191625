#!/usr/bin/env bash
# Capture: multi-attempt sessions, one log each, where a user retries after each error.
# Every `$` line in these logs is one attempt (numbered from 1 in [[incidents]]).
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_pkgs
SYSPATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"$VENV_CU/bin/pip" uninstall -q -y psutil 2>/dev/null

$CASE --slug session-flash-attn-system-pip-then-venv-then-no-isolation --cwd "$SCRATCH" --mode seq \
    --title "flash-attn install session: Debian pip3, then the torch venv's pip, then --no-build-isolation" \
    --cmd "PATH=$SYSPATH pip3 install flash-attn==$FLASH_ATTN" \
    --cmd "$VENV_CU/bin/pip install flash-attn==$FLASH_ATTN" \
    --cmd "$VENV_CU/bin/pip install --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$VENV_CU/bin/python" \
    --cause missing_build_dependency --cause build_isolation_missing_torch --cause externally_managed_pip \
    --key "error: externally-managed-environment" \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --key "ModuleNotFoundError: No module named 'psutil'" \
    --incident "externally_managed_pip:1:2:interpreter" \
    --incident "build_isolation_missing_torch:2:3:isolation" \
    --incident "missing_build_dependency:3:0:packages" \
    --fix "pip install psutil (or set MAX_JOBS) in the venv, then rerun with --no-build-isolation." \
    --notes "Attempt 1 ran Debian's pip3 (python 3.11.2, pip 23.0.1); attempts 2-3 the venv with torch 2.14.1+cu130."

rm -rf "$PKGS/tinyext/build" "$PKGS/tinyext/"*.egg-info
$CASE --slug session-tinyext-cpu-torch-cuda-home-retry --cwd "$PKGS/tinyext" --mode seq \
    --title "CUDAExtension against torch 2.13.0+cpu: the CUDA_HOME error persists after exporting CUDA_HOME" \
    --cmd "MAX_JOBS=1 $VENV_CPU/bin/pip install --no-build-isolation ." \
    --cmd "CUDA_HOME=$CUDA_DIR MAX_JOBS=1 $VENV_CPU/bin/pip install --no-build-isolation ." \
    --python "$VENV_CPU/bin/python" --nvcc "$NVCC" \
    --cause cpu_only_torch \
    --key "CUDA_HOME environment variable is not set" \
    --incident "cpu_only_torch:1,2:0:CUDA_HOME" \
    --fix "Install a CUDA build of torch (torch==$TORCH_CUDA, CUDA 13.0) in the venv; CUDA_HOME is not the problem." \
    --notes "The venv's torch is 2.13.0+cpu; setting CUDA_HOME in attempt 2 changes nothing."
rm -rf "$PKGS/tinyext/build" "$PKGS/tinyext/"*.egg-info
