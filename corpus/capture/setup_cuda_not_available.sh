#!/usr/bin/env bash
# Capture: a setup.py that builds its CUDA ops only where torch sees a GPU, run on a machine
# without one (the capture machine has no GPU, like a `docker build` step).
#
# The project is Deformable-DETR's models/ops (its own setup.py and make.sh, unchanged), which
# many detection projects vendor. torch is a CUDA build (2.14.1+cu130) and CUDA 13.0 is installed,
# so torch prints "No CUDA runtime is found, using CUDA_HOME=..." and the setup.py's
# `torch.cuda.is_available() and CUDA_HOME is not None` check fails on the GPU alone.
#
#   DETR_OPS=/path/to/Deformable-DETR/models/ops  (a checkout at 11169a60; only models/ops is used)
#   VENV=/path/to/venv                            (python -m venv, then pip install torch==2.14.1 setuptools wheel)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CASE="python3 $HERE/env_capture.py"
: "${DETR_OPS:?set DETR_OPS to the models/ops folder of Deformable-DETR}"
: "${VENV:?set VENV to a venv with torch 2.14.1 (CUDA 13.0 build)}"
V="$VENV/bin"
FIX="No GPU is visible where the build runs: build inside a container started with --gpus all, or name the architectures (TORCH_CUDA_ARCH_LIST) and let the setup.py build the CUDA ops without the torch.cuda.is_available() check."
clean() { rm -rf "$DETR_OPS/build" "$DETR_OPS/"*.egg-info "$DETR_OPS/dist"; }

clean
$CASE --slug deformable-detr-ops-make-sh-no-gpu --cwd "$DETR_OPS" \
    --title "Deformable-DETR models/ops: sh make.sh with torch 2.14.1+cu130 and CUDA 13.0 on a machine without a GPU" \
    --cmd ". $VENV/bin/activate" \
    --cmd "sh ./make.sh" \
    --python "$V/python" --nvcc /usr/local/cuda-13.0/bin/nvcc --cause no_gpu_visible \
    --key "NotImplementedError: Cuda is not availabel" \
    --fix "$FIX" \
    --notes "Deformable-DETR at 11169a60, models/ops unchanged; the capture machine has no GPU."

clean
$CASE --slug deformable-detr-ops-pip-verbose-no-gpu --cwd "$DETR_OPS" \
    --title "Deformable-DETR models/ops: pip install -v --no-build-isolation . with a CUDA torch and no GPU" \
    --cmd "$V/python -c 'import torch; print(torch.__version__, torch.cuda.is_available())'" \
    --cmd "$V/pip install -v --no-build-isolation ." \
    --python "$V/python" --nvcc /usr/local/cuda-13.0/bin/nvcc --cause no_gpu_visible \
    --key "NotImplementedError: Cuda is not availabel" \
    --fix "$FIX" \
    --notes "Deformable-DETR at 11169a60, models/ops unchanged; the capture machine has no GPU."
clean
