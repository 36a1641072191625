#!/usr/bin/env bash
# Capture: an incomplete CUDA toolkit, nvcc's bin folder copied on its own (nvcc, nvcc.profile, ptxas,
# cudafe++, ...) without the toolkit's nvvm/ folder, so nvcc cannot run its front end cicc. A trivial .cu
# is compiled with that nvcc directly, and through a small CMake project (Makefile generator, make).
# The complete toolkit is CUDA 13.0 in /usr/local/cuda-13.0; include/ and lib64/ are linked in.
#
#   WORK=/path/to/scratch
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
CASE="python3 $HERE/env_capture.py"
: "${WORK:?set WORK to a scratch folder}"
SRC=/usr/local/cuda-13.0
TK="$WORK/cuda-copy"
rm -rf "$TK" "$WORK/cicc-direct" "$WORK/cicc-cmake"
mkdir -p "$TK" "$WORK/cicc-direct" "$WORK/cicc-cmake"
cp -r "$SRC/bin" "$TK/bin"
ln -s "$SRC/include" "$TK/include"
ln -s "$SRC/lib64" "$TK/lib64"
ln -s "$SRC/targets" "$TK/targets"
printf '__global__ void fill(float *x) { x[threadIdx.x] = 1.0f; }\nint main() { return 0; }\n' > "$WORK/cicc-direct/fill.cu"
cp "$WORK/cicc-direct/fill.cu" "$WORK/cicc-cmake/fill.cu"
cat > "$WORK/cicc-cmake/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(fill LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
add_custom_command(OUTPUT fill.o
  COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -arch=sm_80 -c ${CMAKE_SOURCE_DIR}/fill.cu -o fill.o
  DEPENDS ${CMAKE_SOURCE_DIR}/fill.cu)
add_custom_target(fill ALL DEPENDS fill.o)
CM
FIX="nvcc's toolkit has no nvvm/bin/cicc (only its bin folder was copied): use a complete CUDA toolkit (nvvm/bin/cicc present), e.g. export CUDA_HOME=/usr/local/cuda-13.0 and PATH=\$CUDA_HOME/bin:\$PATH, then rebuild."

$CASE --slug nvcc-copied-bin-folder-no-nvvm-cicc-not-found --cwd "$WORK/cicc-direct" \
    --title "nvcc from a copied bin folder (no nvvm/) compiles a trivial .cu: cicc not found" \
    --cmd "$TK/bin/nvcc -arch=sm_80 -c fill.cu -o fill.o" \
    --nvcc "$SRC/bin/nvcc" --cause cuda_toolkit_incomplete \
    --key "sh: 1: $TK/bin/../nvvm/bin/cicc: not found" \
    --fix "$FIX"

$CASE --slug cmake-make-nvcc-copied-bin-no-nvvm-cicc-not-found --cwd "$WORK/cicc-cmake" \
    --title "CMake + make project whose nvcc comes from a copied bin folder without nvvm/: cicc not found" \
    --env "PATH=$TK/bin:/usr/bin:/bin" --unset CUDA_HOME --unset CUDA_PATH \
    --cmd "cmake -S . -B build -DCUDAToolkit_ROOT=$TK" --cmd "make -C build" \
    --nvcc "$SRC/bin/nvcc" --cause cuda_toolkit_incomplete \
    --key "sh: 1: $TK/bin/../nvvm/bin/cicc: not found" \
    --fix "$FIX"
