#!/usr/bin/env bash
# Capture: builds stopped from outside while compiling (Ctrl-C, `timeout`, a CI job's SIGTERM).
#
# "Ctrl-C" is a SIGINT sent to the whole process group of the command after N seconds
# (env_capture.py --interrupt-after), as a terminal does; no "^C" echo appears because the
# output is not a terminal. The SIGTERM case signals only the ninja process, as a CI runner
# cancelling a job step can. Builds use copies of the test packages under $SCRATCH/intpkgs.
set -u
. "$(dirname "$0")/env_lib.sh"
ensure_torch_venvs
ensure_uv
ensure_pkgs
P="$SCRATCH/intpkgs"
rm -rf "$P"; mkdir -p "$P"; cp -r "$PKGS/tinyext" "$PKGS/tinycpp" "$P/"; rm -rf "$P"/*/build "$P"/*/dist
FIX="Nothing is broken: the build was stopped from outside. Rerun it (with enough time: a CI timeout needs raising, or cache/prebuild the wheel)."
CU_ENV="CUDA_HOME=$CUDA_DIR TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=1"

# flash-attn 2.8.3.post2 stops by itself at its first object against torch 2.14 (see
# env_flash_attn_cxx.sh), so the Ctrl-C comes early: while setup.py runs / g++ compiles flash_api.cpp.
$CASE --slug flash-attn-pip-verbose-ctrl-c-early-in-build --cwd "$SCRATCH" --interrupt-after 45 \
    --title "pip -v install --no-build-isolation flash-attn interrupted with Ctrl-C early in the build" \
    --cmd "CUDA_HOME=$CUDA_DIR FLASH_ATTN_CUDA_ARCHS=90 MAX_JOBS=1 $VENV_CU/bin/pip install -v --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause build_interrupted \
    --key "ninja: build stopped: interrupted by user." \
    --fix "$FIX"

$CASE --slug tinyext-pip-timeout-sigint --cwd "$P/tinyext" \
    --title "timeout -s INT 45 pip install --no-build-isolation . (CUDAExtension) stops the build" \
    --cmd "$CU_ENV timeout -s INT 45 $VENV_CU/bin/pip install --no-build-isolation ." \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause build_interrupted \
    --key "ERROR: Operation cancelled by user" \
    --fix "$FIX"
rm -rf "$P/tinyext/build"

$CASE --slug tinyext-setup-py-ninja-sigterm --cwd "$P/tinyext" --interrupt-after 25 \
    --interrupt-signal TERM --interrupt-pattern "^ninja " \
    --title "python setup.py build_ext with ninja terminated (SIGTERM) mid-build" \
    --cmd "$CU_ENV $VENV_CU/bin/python setup.py build_ext --inplace" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause build_interrupted \
    --key "ninja: build stopped: interrupted by user." \
    --fix "$FIX" \
    --notes "Only ninja received SIGTERM (as a CI runner cancelling the step might send it); torch then reports 'Error compiling objects for extension', which is a symptom."
rm -rf "$P/tinyext/build"

$CASE --slug tinycpp-jit-load-ctrl-c --cwd "$P/tinycpp" --interrupt-after 20 \
    --title "torch.utils.cpp_extension.load(verbose=True) interrupted with Ctrl-C" \
    --cmd "MAX_JOBS=1 $VENV_CPU/bin/python -c \"from torch.utils.cpp_extension import load; m = load(name='tinycpp', sources=['tinycpp.cpp'], verbose=True)\"" \
    --python "$VENV_CPU/bin/python" --gcc --cause build_interrupted \
    --key "ninja: build stopped: interrupted by user." \
    --fix "$FIX"

$CASE --slug tinyext-uv-ctrl-c --cwd "$P/tinyext" --interrupt-after 40 \
    --title "uv pip install --no-build-isolation . (CUDAExtension) interrupted with Ctrl-C" \
    --cmd "$CU_ENV $UV pip install --python $VENV_CU/bin/python --no-build-isolation ." \
    --python "$VENV_CU/bin/python" --uv "$UV" --nvcc "$NVCC" --gcc --cause build_interrupted \
    --key "ninja: build stopped: interrupted by user." \
    --fix "$FIX"
rm -rf "$P/tinyext/build"

# Ctrl-C a few seconds after start, while setup.py is still importing torch (Python code, so
# Python itself raises KeyboardInterrupt rather than ninja reporting the interruption).
$CASE --slug tinyext-setup-py-ctrl-c-while-importing-torch --cwd "$P/tinyext" --interrupt-after 2 \
    --title "python setup.py bdist_wheel interrupted with Ctrl-C right after start" \
    --cmd "$CU_ENV $VENV_CU/bin/python setup.py bdist_wheel" \
    --python "$VENV_CU/bin/python" --nvcc "$NVCC" --gcc --cause build_interrupted \
    --key "KeyboardInterrupt" \
    --fix "$FIX"
rm -rf "$P"
