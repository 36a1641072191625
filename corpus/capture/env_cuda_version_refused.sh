#!/usr/bin/env bash
# Capture: a prebuilt or configured CUDA version refused because the CUDA here is another one.
#  * onnxruntime-gpu 1.17.0 from the public index (its wheel is built for CUDA 11.8 and cuDNN 8) run
#    on this machine's CUDA 13.0: its CUDA execution provider library cannot load libcublasLt.so.11.
#    Once without CUDA_PATH (onnxruntime logs the failure and falls back to the CPU; the script then
#    checks the providers and stops), once with CUDA_PATH set (onnxruntime raises "CUDA_PATH is set
#    but CUDA wasnt able to be loaded", its Linux spelling).
#  * CMake 3.25's FindCUDA asked for an exact CUDA 10.0 (as an installed OpenCVConfig.cmake of an
#    OpenCV built with CUDA 10.0 does) and finding 13.0; FindCUDAToolkit asked for at least 13.1.
# Nothing is downloaded but the onnxruntime-gpu and onnx wheels from the configured index.
set -u
export SCRATCH="${SCRATCH:-/work/scratch/f20a}"
. "$(dirname "$0")/env_lib.sh"
V="$SCRATCH/venv-ort"
ensure_venv "$V"
B="$V/bin"
"$B/pip" install -q "onnxruntime-gpu==1.17.0" "onnx" "numpy<2" >/dev/null 2>&1
W="$SCRATCH/ort"
mkdir -p "$W"
"$B/python" - "$W/relu.onnx" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
PY
cat >"$W/infer.py" <<'PY'
import onnxruntime as ort
print("onnxruntime", ort.__version__, ort.get_available_providers())
sess = ort.InferenceSession("relu.onnx", providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
print("providers in use:", sess.get_providers())
assert "CUDAExecutionProvider" in sess.get_providers(), "the CUDA execution provider was not used"
PY

$CASE --slug onnxruntime-gpu-1-17-cuda-11-wheel-on-cuda-13-libcublaslt-so-11 --cwd "$W" --unset CUDA_PATH \
    --title "onnxruntime-gpu 1.17.0 (a CUDA 11.8 wheel) asked for CUDAExecutionProvider on a CUDA 13.0 machine" \
    --cmd "$B/python -c \"import onnxruntime; print(onnxruntime.__version__)\"" \
    --cmd "$NVCC --version | tail -2" \
    --cmd "$B/python infer.py" \
    --python "$B/python" --nvcc "$NVCC" --cause cuda_version_mismatch \
    --key "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file" \
    --fix "onnxruntime-gpu 1.17.0 from the public index is built for CUDA 11.8 and this machine has CUDA 13.0: install an onnxruntime-gpu built for the CUDA here (on the public index 1.19 to 1.26 are CUDA 12 builds, 1.27 and newer CUDA 13), or CUDA 11 and cuDNN 8 libraries (pip install nvidia-cublas-cu11 nvidia-cudnn-cu11) on LD_LIBRARY_PATH." \
    --notes "onnxruntime logs the failure and falls back to the CPU; infer.py then checks the providers it got."

$CASE --slug onnxruntime-gpu-1-17-cuda-path-set-cuda-wasnt-able-to-be-loaded --cwd "$W" \
    --env CUDA_PATH=/usr/local/cuda-13.0 \
    --title "onnxruntime-gpu 1.17.0 with CUDA_PATH=/usr/local/cuda-13.0: CUDA_PATH is set but CUDA wasnt able to be loaded" \
    --cmd "echo \$CUDA_PATH" \
    --cmd "$B/python infer.py" \
    --python "$B/python" --nvcc "$NVCC" --cause cuda_version_mismatch \
    --key "CUDA_PATH is set but CUDA wasnt able to be loaded" \
    --fix "onnxruntime-gpu 1.17.0 (public index) needs CUDA 11 and cuDNN 8, and CUDA_PATH names a CUDA 13.0 toolkit: install an onnxruntime-gpu build for the installed CUDA major, or CUDA 11.8 with cuDNN 8." \
    --notes "With CUDA_PATH set, onnxruntime raises instead of falling back to the CPU."

P="$SCRATCH/findcuda-exact"
rm -rf "$P"; mkdir -p "$P/cvlike/lib/cmake/visionkit"
# a package config like OpenCVConfig.cmake of an OpenCV built with CUDA 10.0
cat >"$P/cvlike/lib/cmake/visionkit/VisionKitConfig.cmake" <<'CM'
set(VisionKit_CUDA_VERSION "10.0")
find_package(CUDA ${VisionKit_CUDA_VERSION} EXACT REQUIRED)
set(VisionKit_FOUND TRUE)
CM
cat >"$P/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(detector CXX)
find_package(VisionKit REQUIRED)
CM
$CASE --slug cmake-findcuda-exact-10-0-from-package-config-finds-13-0 --cwd "$P" \
    --title "cmake configure: a package config (like OpenCVConfig.cmake) calls find_package(CUDA 10.0 EXACT) and FindCUDA finds CUDA 13.0" \
    --cmd "cmake -S . -B build -DVisionKit_DIR=$P/cvlike/lib/cmake/visionkit" \
    --nvcc "$NVCC" --tool cmake=3.25.1 --cause cuda_version_mismatch \
    --key "Could NOT find CUDA: Found unsuitable version \"13.0\", but required is exact" \
    --fix "The installed package was built against CUDA 10.0 and asks for exactly that version: install CUDA 10.0 beside 13.0 and point FindCUDA at it (-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda-10.0), or rebuild the package against CUDA 13.0." \
    --notes "VisionKitConfig.cmake stands in for an OpenCVConfig.cmake of an OpenCV built with CUDA 10.0."

P="$SCRATCH/findcudatoolkit-min"
rm -rf "$P"; mkdir -p "$P"
cat >"$P/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(kernels LANGUAGES CXX)
find_package(CUDAToolkit 13.1 REQUIRED)
CM
$CASE --slug cmake-find-package-cudatoolkit-13-1-finds-13-0 --cwd "$P" \
    --title "cmake configure: find_package(CUDAToolkit 13.1 REQUIRED) with CUDA 13.0 installed" \
    --cmd "cmake -S . -B build" \
    --nvcc "$NVCC" --tool cmake=3.25.1 --cause cuda_too_old \
    --key "Could NOT find CUDAToolkit: Found unsuitable version \"13.0.88\", but" \
    --fix "The project needs CUDA 13.1 or newer and CUDA 13.0 is installed: install CUDA 13.1 or newer and point CMake at it (-DCUDAToolkit_ROOT=/usr/local/cuda-13.1)." \
    --notes "CMake wraps the message: \"required is at least\" is on the next line."

P="$SCRATCH/findcuda-exact-project"
rm -rf "$P"; mkdir -p "$P"
cat >"$P/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(tracker CXX)
find_package(CUDA 12.4 EXACT REQUIRED)
CM
$CASE --slug cmake-project-find-package-cuda-12-4-exact-finds-13-0 --cwd "$P" \
    --title "cmake configure: the project's own find_package(CUDA 12.4 EXACT REQUIRED) with only CUDA 13.0 installed" \
    --cmd "cmake -S . -B build" \
    --nvcc "$NVCC" --tool cmake=3.25.1 --cause cuda_version_mismatch \
    --key "Could NOT find CUDA: Found unsuitable version \"13.0\", but required is exact" \
    --fix "The project asks for exactly CUDA 12.4 and CUDA 13.0 is installed: install CUDA 12.4 and point FindCUDA at it (-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda-12.4), or drop EXACT if the project builds with 13.0." \
    --notes ""
