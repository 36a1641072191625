#!/usr/bin/env bash
# Capture: CUDA_HOME set PATH-style, so torch runs nvcc from a path with a colon in it: while it was
# empty (`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda` gives `:/usr/local/cuda/bin/nvcc`), and as a
# list of toolkit folders (`/usr/local/cuda:/usr/local/cuda-13.0/bin/nvcc`, as the same export leaves
# it when CUDA_HOME was already set). The toolkit itself is installed (CUDA 13.0).
# torch is a CUDA build (2.14.1+cu130) with ninja; the project is fixtures/tiny_cuda_ext, copied to $WORK.
# No GPU on the capture machine, so TORCH_CUDA_ARCH_LIST names one architecture.
#
#   VENV=/path/to/venv   (python -m venv, then pip install torch==2.14.1 setuptools wheel ninja)
#   WORK=/path/to/scratch
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CASE="python3 $HERE/env_capture.py"
: "${VENV:?set VENV to a venv with torch 2.14.1 (CUDA 13.0 build) and ninja}"
: "${WORK:?set WORK to a scratch folder}"
V="$VENV/bin"
EXT="$WORK/tiny_cuda_ext"
rm -rf "$EXT" "$HOME/.cache/torch_extensions"
cp -r "$HERE/fixtures/tiny_cuda_ext" "$EXT"
FIX="CUDA_HOME began with a colon: export CUDA_HOME=/usr/local/cuda (the folder alone), then rebuild."

$CASE --slug jit-build-cuda-home-leading-colon --cwd "$EXT" --unset CUDA_HOME \
    --title "torch.utils.cpp_extension.load() after export CUDA_HOME=\$CUDA_HOME:/usr/local/cuda with CUDA_HOME empty" \
    --cmd 'export CUDA_HOME=$CUDA_HOME:/usr/local/cuda' \
    --cmd "TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 $V/python jit_build.py" \
    --python "$V/python" --nvcc /usr/local/cuda-13.0/bin/nvcc --cause cuda_home_missing \
    --key "/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found" \
    --fix "$FIX"

rm -rf "$EXT/build" "$EXT/"*.egg-info
$CASE --slug pip-build-cuda-home-leading-colon --cwd "$EXT" --unset CUDA_HOME \
    --title "pip install --no-build-isolation . after export CUDA_HOME=\$CUDA_HOME:/usr/local/cuda with CUDA_HOME empty" \
    --cmd 'export CUDA_HOME=$CUDA_HOME:/usr/local/cuda' \
    --cmd "TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 $V/pip install --no-build-isolation ." \
    --python "$V/python" --nvcc /usr/local/cuda-13.0/bin/nvcc --cause cuda_home_missing \
    --key "error: nvcc not found at ':/usr/local/cuda/bin/nvcc'" \
    --fix "$FIX"
rm -rf "$EXT/build" "$EXT/"*.egg-info "$HOME/.cache/torch_extensions"
FIX="CUDA_HOME was a colon-joined list: export CUDA_HOME=/usr/local/cuda-13.0 (one toolkit folder), then rebuild."

$CASE --slug jit-build-cuda-home-path-list --cwd "$EXT" --unset CUDA_HOME \
    --title "torch.utils.cpp_extension.load() with CUDA_HOME=/usr/local/cuda:/usr/local/cuda-13.0 (a PATH-style list)" \
    --cmd 'export CUDA_HOME=/usr/local/cuda:/usr/local/cuda-13.0' \
    --cmd "TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 $V/python jit_build.py" \
    --python "$V/python" --nvcc /usr/local/cuda-13.0/bin/nvcc --cause cuda_home_missing \
    --key "/bin/sh: 1: /usr/local/cuda:/usr/local/cuda-13.0/bin/nvcc: not found" \
    --fix "$FIX"

rm -rf "$EXT/build" "$EXT/"*.egg-info
$CASE --slug pip-build-cuda-home-path-list --cwd "$EXT" --unset CUDA_HOME \
    --title "pip install --no-build-isolation . after export CUDA_HOME=\$CUDA_HOME:/usr/local/cuda-13.0 with CUDA_HOME=/usr/local/cuda" \
    --cmd 'export CUDA_HOME=/usr/local/cuda' \
    --cmd 'export CUDA_HOME=$CUDA_HOME:/usr/local/cuda-13.0' \
    --cmd "TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 $V/pip install --no-build-isolation ." \
    --python "$V/python" --nvcc /usr/local/cuda-13.0/bin/nvcc --cause cuda_home_missing \
    --key "error: nvcc not found at '/usr/local/cuda:/usr/local/cuda-13.0/bin/nvcc'" \
    --fix "$FIX"
rm -rf "$EXT"
