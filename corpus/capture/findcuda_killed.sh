#!/usr/bin/env bash
# Capture: a CMake project built with the old FindCUDA module (find_package(CUDA), cuda_add_library),
# whose nvcc front end (cicc) is sent SIGKILL while it compiles, as the kernel's OOM killer does to the
# largest process. nvcc 13.0 runs each stage through "sh -c", so the shell prints a bare "Killed";
# FindCUDA's per-file script (<target>_generated_<file>.cu.o[.<Config>].cmake) then stops with
# "CMake Error at ...cmake:280 (message): Error generating file ..." and make reports "Error 1" --
# no line names memory, signal 9 or status 137. The machine has no cgroup for the build, so a
# watcher sends the SIGKILL (as corpus/capture/oom_reaper.sh does for the other OOM captures); it
# prints nothing into the log.
#
#   WORK=/path/to/scratch corpus/capture/findcuda_killed.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?set WORK to a scratch folder}"
. "$HERE/lib.sh"
P=$WORK/findcuda-oom

make_project() {
    rm -rf "$P"; mkdir -p "$P"
    # a kernel whose full unroll keeps cicc busy for about a second, long enough to be caught
    cat >"$P/unroll.cu" <<'CU'
#include <cuda_runtime.h>
__global__ void k(float* y) {
  float x = y[threadIdx.x];
#pragma unroll
  for (int i = 0; i < 30000; ++i) x = x * 1.0001f + sinf(x + i);
  y[threadIdx.x] = x;
}
CU
    cat >"$P/scale.cu" <<'CU'
#include <cuda_runtime.h>
__global__ void scale(float* y, float a) { y[threadIdx.x] *= a; }
void launch_scale(float* y, float a) { scale<<<1, 32>>>(y, a); }
CU
    cat >"$P/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(unroll_ops CXX)
find_package(CUDA REQUIRED)
set(CUDA_NVCC_FLAGS "-O3;-gencode=arch=compute_90,code=sm_90")
cuda_add_library(unroll_ops SHARED scale.cu unroll.cu)
CM
}

# kill_cicc SRC: SIGKILL the first cicc whose command line names SRC (within 60 s)
kill_cicc() {
    local i p
    for i in $(seq 1 6000); do
        for p in $(pgrep -x cicc); do
            if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "$1"; then
                kill -9 "$p" && echo "SIGKILL cicc ($p)" >>"$RAW/findcuda-killer.txt"
                return 0
            fi
        done
        sleep 0.01
    done
}

case_run() {   # $1 slug, then the commands
    local slug=$1; shift; local log=$RAW/$slug.log
    rm -f "$log"; make_project
    kill_cicc "$P/unroll.cu" &
    local kp=$!
    run_seq "$log" "$@"
    wait "$kp"
    grep -qx 'Killed' "$log" || { echo "$slug: no bare Killed line (cicc not caught)" >&2; return 1; }
    publish "$log" "$slug"
}

# Release build, one job: "Killed" right above FindCUDA's error.
case_run findcuda-make-release-cicc-killed-bare \
    "cd $P" "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release" "cmake --build build"
# No build type, make -j2: the other source's job runs beside it.
case_run findcuda-make-j2-no-build-type-cicc-killed \
    "cd $P" "cmake -S . -B build" "make -C build -j2"
