#!/usr/bin/env bash
# Capture: builds that need a piece no one installed. This machine has the CUDA 13.0 toolkit but no
# TensorRT (no NvInfer.h, no libnvinfer*), and a fresh venv without torch:
#  * g++ compiling a file that includes NvInfer.h / NvOnnxParser.h (TensorRT headers);
#  * g++ linking with -lnvinfer -lnvinfer_plugin -lnvonnxparser (TensorRT libraries);
#  * CMake's find_package(TensorRT REQUIRED) without a TensorRTConfig.cmake;
#  * DS_BUILD_OPS=1 pip install of the DeepSpeed 0.15.1 sdist with no torch: in pip's isolated build
#    environment ("Getting requirements to build wheel") and with --no-build-isolation (the venv itself);
#    pip wheel of deepspeed 0.14.4 from the index (isolated) with DS_BUILD_OPS=1 exported; and
#    python setup.py bdist_wheel in the unpacked 0.15.1 source (no pip at all).
# The DeepSpeed sdist is downloaded once with pip download (no build runs then).
#
#   WORK=/path/to/scratch
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CASE="python3 $HERE/env_capture.py"
: "${WORK:?set WORK to a scratch folder}"
CUDA=/usr/local/cuda-13.0
D="$WORK/trt-probe"
rm -rf "$D"; mkdir -p "$D/src" "$D/build" "$D/cm"
cat > "$D/src/engine.cpp" <<'CPP'
#include <NvInfer.h>
#include <NvOnnxParser.h>

int main() { return 0; }
CPP
cat > "$D/src/main.cpp" <<'CPP'
int main() { return 0; }
CPP
cat > "$D/cm/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(trt_infer LANGUAGES CXX)
find_package(TensorRT REQUIRED)
add_executable(trt_infer ../src/engine.cpp)
target_link_libraries(trt_infer TensorRT::nvinfer)
CMAKE

$CASE --slug gxx-compile-include-nvinfer-h-no-tensorrt --cwd "$D" \
    --title "g++ compiling a source that includes NvInfer.h on a machine with CUDA 13.0 but no TensorRT" \
    --cmd "g++ -std=c++17 -I$CUDA/include -c src/engine.cpp -o build/engine.o" \
    --gcc --cause cuda_toolkit_incomplete \
    --key "src/engine.cpp:1:10: fatal error: NvInfer.h: No such file or directory" \
    --fix "install TensorRT's development files (libnvinfer-dev, or the TensorRT tar's include/ folder on CPATH) and compile again" \
    --notes "TensorRT is not installed here; CUDA's own include folder is on the command line"

$CASE --slug gxx-link-lnvinfer-plugin-onnxparser-no-tensorrt --cwd "$D" \
    --title "g++ linking with -lnvinfer -lnvinfer_plugin -lnvonnxparser where TensorRT is not installed" \
    --cmd "g++ -std=c++17 src/main.cpp -o build/trt_infer -L$CUDA/lib64 -lnvinfer -lnvinfer_plugin -lnvonnxparser -lcudart" \
    --gcc --cause cuda_toolkit_incomplete \
    --key "/usr/bin/ld: cannot find -lnvinfer: No such file or directory" \
    --fix "install TensorRT's libraries (libnvinfer-dev libnvinfer-plugin-dev libnvonnxparsers-dev, or the tar's lib/ folder on LIBRARY_PATH) and link again" \
    --notes "libcudart is found in CUDA's lib64; only the three TensorRT libraries are missing"

$CASE --slug cmake-find-package-tensorrt-no-config --cwd "$D" \
    --title "cmake configure of a project calling find_package(TensorRT REQUIRED) where TensorRT is not installed" \
    --cmd "cmake -S cm -B cm/build" \
    --cause cuda_toolkit_incomplete \
    --key "Could not find a package configuration file provided by \"TensorRT\" with any" \
    --fix "install TensorRT and point CMake at it (-DTensorRT_DIR=... or CMAKE_PREFIX_PATH=<TensorRT root>), then configure again" \
    --notes "CMake's own message for a missing package configuration file"

V="$WORK/venv-no-torch"
[ -x "$V/bin/python" ] || python3 -m venv "$V"
SD="$WORK/sdists"
mkdir -p "$SD"
[ -f "$SD/deepspeed-0.15.1.tar.gz" ] || "$V/bin/pip" download -q --no-deps --no-binary :all: deepspeed==0.15.1 -d "$SD"

$CASE --slug deepspeed-ds-build-ops-isolated-build-no-torch --cwd "$SD" \
    --title "DS_BUILD_OPS=1 pip install of the DeepSpeed 0.15.1 sdist: pip's isolated build environment has no torch" \
    --cmd "DS_BUILD_OPS=1 $V/bin/pip install deepspeed-0.15.1.tar.gz" \
    --python "$V/bin/python" --cause build_isolation_missing_torch \
    --key "AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting to pre-compile ops." \
    --fix "install torch in the environment first, then DS_BUILD_OPS=1 pip install --no-build-isolation deepspeed" \
    --notes "the setup runs in pip-build-env-*/overlay (Getting requirements to build wheel), where no torch is"

$CASE --slug deepspeed-ds-build-ops-no-build-isolation-torch-not-installed --cwd "$SD" \
    --title "DS_BUILD_OPS=1 pip install --no-build-isolation of the DeepSpeed 0.15.1 sdist into a venv without torch" \
    --cmd "DS_BUILD_OPS=1 $V/bin/pip install --no-build-isolation deepspeed-0.15.1.tar.gz" \
    --python "$V/bin/python" --cause missing_build_dependency \
    --key "AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting to pre-compile ops." \
    --fix "install torch into the venv (the CUDA build you need), then run the same command again" \
    --notes "no isolation: the setup imports torch from the venv itself, where it is not installed"

$CASE --slug deepspeed-0-14-4-pip-wheel-export-ds-build-ops-isolated-no-torch --cwd "$SD" \
    --title "export DS_BUILD_OPS=1, then pip wheel --no-deps deepspeed==0.14.4 from the index in a venv without torch (isolated build)" \
    --cmd "export DS_BUILD_OPS=1" --cmd "$V/bin/pip wheel --no-deps -w $SD/dist deepspeed==0.14.4" \
    --python "$V/bin/python" --cause build_isolation_missing_torch \
    --key "AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting to pre-compile ops." \
    --fix "install torch into the venv, then DS_BUILD_OPS=1 pip wheel --no-build-isolation --no-deps deepspeed==0.14.4" \
    --notes "pip wheel builds in the same isolated environment as pip install; the variable is exported a line above"

rm -rf "$SD/deepspeed-0.15.1" && tar -xzf "$SD/deepspeed-0.15.1.tar.gz" -C "$SD"
$CASE --slug deepspeed-setup-py-bdist-wheel-ds-build-ops-torch-not-installed --cwd "$SD/deepspeed-0.15.1" \
    --title "DS_BUILD_OPS=1 python setup.py bdist_wheel in the DeepSpeed 0.15.1 source, in a venv without torch" \
    --cmd "DS_BUILD_OPS=1 $V/bin/python setup.py bdist_wheel" \
    --python "$V/bin/python" --cause missing_build_dependency \
    --key "AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting to pre-compile ops." \
    --fix "install torch into the venv (the CUDA build you need), then run setup.py again" \
    --notes "setup.py run directly by the venv's python: no pip, no isolation"
