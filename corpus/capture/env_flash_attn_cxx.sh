#!/usr/bin/env bash
# Capture: flash-attn's sdist built with everything in place (torch 2.14.1+cu130, CUDA 13.0,
# --no-build-isolation, MAX_JOBS set): it compiles with -std=c++17 and torch 2.14's headers
# need C++20. Found while preparing the build_interrupted cases; the failure comes within
# a minute or two, at the first object (flash_api.cpp).
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs

$CASE --slug flash-attn-pip-verbose-torch-2-14-needs-cxx20 --cwd "$SCRATCH" \
    --title "pip -v install --no-build-isolation flash-attn 2.8.3.post2 against torch 2.14.1+cu130: ATen needs C++20" \
    --cmd "CUDA_HOME=$CUDA_DIR FLASH_ATTN_CUDA_ARCHS=90 MAX_JOBS=1 $VENV_CU/bin/pip install -v --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause cxx_standard_mismatch \
    --key "#error C++20 or later compatible compiler is required to use ATen." \
    --key "‘strong_ordering’ in namespace ‘std’ does not name a type" \
    --fix "flash-attn $FLASH_ATTN compiles with -std=c++17, which torch $TORCH_CUDA's headers reject: use a flash-attn release built for this torch (or its prebuilt wheel), or a torch release that still accepts C++17." \
    --notes "The GitHub prebuilt-wheel lookup in flash-attn's setup.py fails first (no network to GitHub from the capture machine: 'Precompiled wheel not found. Building from source...'), which is expected."
