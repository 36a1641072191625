#!/usr/bin/env bash
# Re-capture the heavy-build cases: C++ standard mismatches (flash-attn's -std=c++17
# against torch headers that require C++20), long verbose flash-attn builds, and
# compiler out-of-memory failures under a memory cap or a kill -9 of a compiler.
#
# Usage: heavy_builds.sh [case ...]     (no argument: list the cases)
#
# Machine these were captured on: Debian 12, 2 cores, 24 GB RAM, no swap,
# Python 3.11.7, pip 23.2.1, gcc 12.2.0, nvcc 13.0.88 (a toolkit without the
# math-library headers: cusparse.h etc. come from the torch wheel's nvidia/cu13).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

VENV=$WORK/venv            # torch 2.14.1+cu130 (needs C++20), numpy packaging ninja psutil einops
VENV213=$WORK/venv213      # torch 2.13.0+cu130 (still accepts C++17), same helpers
PKGS=$WORK/pkgs            # the tiny CUDAExtension lives here (see make_scale_ext)
NVIDIA_INC=lib/python3.11/site-packages/nvidia/cu13/include

setup_envs() {
    [ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" &&
        "$VENV/bin/pip" install torch==2.14.1 numpy packaging ninja psutil einops; }
    # torch 2.13.0 from the public index (the +cpu wheel on local disk would win otherwise)
    [ -x "$VENV213/bin/python" ] || { python3 -m venv "$VENV213" &&
        PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= "$VENV213/bin/pip" install \
            torch==2.13.0 numpy packaging ninja psutil einops wheel; }
    # session.sh removes psutil from $VENV; the cases here expect the helpers present.
    "$VENV/bin/pip" install -q packaging psutil >/dev/null 2>&1
    make_scale_ext
}

# A minimal CUDA extension: one .cpp binding and one .cu kernel, built with
# torch's BuildExtension (ninja). STD=c++17 makes the variant that forces C++17.
make_scale_ext() {
    local d=$PKGS/scale_ext
    mkdir -p "$d/csrc" "$d/scale_ext"
    echo 'from . import _C  # noqa: F401' >"$d/scale_ext/__init__.py"
    cat >"$d/csrc/scale.cpp" <<'CPP'
#include <torch/extension.h>

torch::Tensor scale_cuda(torch::Tensor x, double alpha);

torch::Tensor scale(torch::Tensor x, double alpha) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
  return scale_cuda(x.contiguous(), alpha);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale", &scale, "Multiply a tensor by a scalar (CUDA)");
}
CPP
    cat >"$d/csrc/scale_kernel.cu" <<'CU'
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_kernel(const float* x, float* y, float alpha, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}

torch::Tensor scale_cuda(torch::Tensor x, double alpha) {
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  scale_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(alpha), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
CU
    # setup.py imports packaging before setuptools, as flash-attn's does.
    cat >"$d/setup.py" <<'PY'
import os

from packaging.version import Version
from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

if Version(torch.__version__.split("+")[0]) < Version("2.4"):
    raise RuntimeError("scale-ext needs torch >= 2.4")

# SCALE_EXT_STD=c++17 pins the language standard for both compilers.
std = os.environ.get("SCALE_EXT_STD")
extra = {"cxx": [f"-std={std}"], "nvcc": [f"-std={std}"]} if std else {}

setup(
    name="scale-ext",
    version="0.1.0",
    packages=["scale_ext"],
    ext_modules=[
        CUDAExtension(
            name="scale_ext._C",
            sources=["csrc/scale.cpp", "csrc/scale_kernel.cu"],
            extra_compile_args=extra,
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
PY
}

# Prints the versions a reader of the log needs, as commands in the log itself.
log_versions() {
    local log=$1 py=$2
    run_logged "$log" "$py -c \"import torch; print(torch.__version__, torch.version.cuda)\""
    run_logged "$log" "nvcc --version"
}

# ---- cxx_standard_mismatch ------------------------------------------------------

# flash-attn pins -std=c++17; torch 2.14.1's ATen.h requires C++20.
case_flash_attn_cpp17() {   # $1 = flash-attn version, $2 = slug, $3 = MAX_JOBS
    local ver=$1 slug=$2 jobs=$3 log=$RAW/$2.log
    rm -f "$log"; export PATH=$VENV/bin:$PATH
    pip cache remove "flash_attn*" >/dev/null 2>&1
    log_versions "$log" python
    run_logged "$log" "CUDA_HOME=$CUDA13 MAX_JOBS=$jobs pip install --no-build-isolation -v flash-attn==$ver"
    publish "$log" "$slug"
}
flash_attn_283_cpp17()  { case_flash_attn_cpp17 2.8.3 flash-attn-2-8-3-cpp17-torch-2-14 1; }
flash_attn_274_cpp17()  { case_flash_attn_cpp17 2.7.4.post1 flash-attn-2-7-4-cpp17-torch-2-14 1; }
# Long logs: many jobs fail at once, each printing its cascade of errors.
flash_attn_283_long()   { case_flash_attn_cpp17 2.8.3 flash-attn-2-8-3-max-jobs-12-long-log 12; }
flash_attn_274_long()   { case_flash_attn_cpp17 2.7.4.post1 flash-attn-2-7-4-max-jobs-16-long-log 16; }

# The tiny extension with SCALE_EXT_STD=c++17: extra_compile_args pins -std=c++17 for
# both g++ and nvcc, against torch 2.14.1's C++20 headers.
scale_ext_cpp17() {
    local slug=scale-ext-extra-compile-args-cpp17-torch-2-14; local log=$RAW/$slug.log d=$PKGS/scale_ext
    rm -f "$log"; rm -rf "$d/build"; cd "$d" || return; export PATH=$VENV/bin:$PATH
    run_seq "$log" "cd $d" \
        "SCALE_EXT_STD=c++17 CPATH=$VENV/$NVIDIA_INC CUDA_HOME=$CUDA13 TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" MAX_JOBS=2 pip install --no-build-isolation -v ."
    publish "$log" "$slug"
}

# ---- success with alarming warnings ---------------------------------------------
scale_ext_success_warnings() {
    local slug=scale-ext-build-ext-success-with-warnings; local log=$RAW/$slug.log d=$PKGS/scale_ext
    rm -f "$log"; rm -rf "$d/build"; cd "$d" || return; export PATH=$VENV/bin:$PATH
    run_seq "$log" "cd $d" \
        "CPATH=$VENV/$NVIDIA_INC CUDA_HOME=$CUDA13 TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" MAX_JOBS=2 nice python setup.py build_ext --inplace"
    publish "$log" "$slug"
}

# ---- no GPU, no TORCH_CUDA_ARCH_LIST, no CUDA_HOME ---------------------------------
scale_ext_no_arch_list() {
    local slug=scale-ext-no-arch-list-no-gpu; local log=$RAW/$slug.log d=$PKGS/scale_ext
    rm -f "$log"; rm -rf "$d/build"; cd "$d" || return; export PATH=$VENV/bin:$PATH
    run_seq "$log" "cd $d" "MAX_JOBS=1 nice python setup.py build_ext"
    publish "$log" "$slug"
}

# ---- compiler_oom: a per-process memory cap (ulimit -v) --------------------------
#
# ulimit -v caps the address space of every process started after it. Python with
# torch imported already maps ~3.2 GB, so a cap low enough to starve the compilers
# also breaks pip/setup.py: these cases call the compilers directly, on the tiny
# extension's sources (the same command lines torch's BuildExtension generates).

TORCH_INC() { local t=$VENV/lib/python3.11/site-packages/torch
    echo "-I$t/include -I$t/include/torch/csrc/api/include -I/root/.pyenv/versions/3.11.7/include/python3.11"; }

# g++ of a file that only includes <torch/extension.h>; $1 = cap in kB, $2 = slug
case_gxx_ulimit() {
    local cap=$1 slug=$2 log=$RAW/$2.log d=$WORK/plain
    rm -f "$log"; mkdir -p "$d"; cd "$d" || return
    printf '#include <torch/extension.h>\n\ntorch::Tensor twice(const torch::Tensor& x) { return x * 2; }\n' >heavy_include.cpp
    run_seq "$log" "cd $d" "ulimit -v $cap" \
        "g++ -std=c++20 -O2 -fPIC $(TORCH_INC) -c heavy_include.cpp -o heavy_include.o"
    publish "$log" "$slug"
}
gxx_ulimit_300m() { case_gxx_ulimit 300000 gxx-torch-extension-h-ulimit-v-300mb; }
gxx_ulimit_600m() { case_gxx_ulimit 600000 gxx-torch-extension-h-ulimit-v-600mb; }

# nvcc of the tiny extension's kernel file under a cap: the EDG front end reports it.
nvcc_ulimit() {
    local slug=nvcc-scale-kernel-ulimit-v-1gb log=$RAW/nvcc-scale-kernel-ulimit-v-1gb.log d=$PKGS/scale_ext
    rm -f "$log"; cd "$d" || return
    run_seq "$log" "cd $d" "export CPATH=$VENV/$NVIDIA_INC" "ulimit -v 1000000" \
        "nvcc -std=c++20 -O3 -Xcompiler -fPIC -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -DTORCH_EXTENSION_NAME=_C -DTORCH_API_INCLUDE_EXTENSION_H $(TORCH_INC) -c csrc/scale_kernel.cu -o scale_kernel.o"
    publish "$log" "$slug"
}

# ---- compiler_oom: the OOM killer's SIGKILL (oom_reaper.sh stands in for it) ------
#
# The reaper only watches processes under this build (marker: the package path) and
# kills the largest compiler once their summed RSS passes the budget. What the log
# shows is what the compiler drivers and ninja print for a SIGKILLed child.

with_reaper() {   # $1 budget MB, $2 marker, $3 max kills, $4 names, then the command to run
    local budget=$1 marker=$2 kills=$3 names=$4; shift 4
    "$HERE/oom_reaper.sh" "$budget" "$marker" "$kills" "$names" >>"$RAW/reaper.txt" 2>&1 &
    local rp=$!
    "$@"; local rc=$?
    kill "$rp" 2>/dev/null; wait "$rp" 2>/dev/null
    return $rc
}

# setup.py build_ext of the tiny extension, both sources at once, budget 700 MB; the
# reaper keeps killing (at most twice) while the build stays over it.
scale_ext_kill_cc1plus() {
    local slug=scale-ext-build-ext-max-jobs-4-cc1plus-killed; local log=$RAW/$slug.log d=$PKGS/scale_ext
    rm -f "$log"; rm -rf "$d/build"; cd "$d" || return; export PATH=$VENV/bin:$PATH
    with_reaper 700 "$d" 2 'cc1plus|cudafe\+\+|cicc' run_seq "$log" "cd $d" \
        "CPATH=$VENV/$NVIDIA_INC CUDA_HOME=$CUDA13 TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" MAX_JOBS=4 python setup.py build_ext --inplace"
    publish "$log" "$slug"
}

# nvcc runs each stage through "sh -c". What the log shows for a SIGKILL depends on
# which process receives it: the stage itself (cicc, as the OOM killer picks the
# largest) -> the shell prints "Killed"; the shell wrapper -> nvcc prints
# "'<tool>' died due to signal 9 (Kill signal)". A kernel with a deep template
# recursion keeps cicc busy long enough to be caught.
make_slow_kernel() {   # $1 = recursion depth (800 keeps cicc busy; 3000 keeps ptxas busy too)
    local d=$WORK/killtest; mkdir -p "$d"
    cat >"$d/unroll.cu" <<CU
#include <cuda_runtime.h>
template <int N> struct Unroll { __device__ static float run(float x) { return Unroll<N-1>::run(x * 1.0001f + 0.5f); } };
template <> struct Unroll<0> { __device__ static float run(float x) { return x; } };
__global__ void k(float* y) { y[threadIdx.x] = Unroll<$1>::run(y[threadIdx.x]); }
CU
}
# kill_when_seen NAME DIR WHO: wait for a NAME process working in DIR (its current
# directory), then SIGKILL it (WHO=self) or its parent shell with it (WHO=parent).
kill_when_seen() {
    local name=$1 dir=$2 who=$3 p q i
    for i in $(seq 1 12000); do
        for q in $(pgrep -x "$name"); do
            [ "$(readlink "/proc/$q/cwd" 2>/dev/null)" = "$dir" ] && p=$q && break
        done
        if [ -n "${p:-}" ]; then
            if [ "$who" = parent ]; then   # shell and stage together, shell first
                kill -9 "$(awk '/^PPid:/{print $2}' "/proc/$p/status")" "$p"
            else
                kill -9 "$p"
            fi
            return 0
        fi
        sleep 0.02
    done
}
case_nvcc_kill() {   # $1 = stage, $2 = self|parent, $3 = depth, $4 = slug
    local stage=$1 who=$2 depth=$3 slug=$4; local log=$RAW/$slug.log d=$WORK/killtest
    rm -f "$log"; make_slow_kernel "$depth"; cd "$d" || return
    kill_when_seen "$stage" "$d" "$who" &
    local flags="-O3"; [ "$depth" -gt 1000 ] && flags="-O3 -ftemplate-depth=5000"
    run_seq "$log" "cd $d" "nvcc $flags -gencode=arch=compute_90,code=sm_90 -c unroll.cu -o unroll.o"
    wait
    publish "$log" "$slug"
}
nvcc_kill_cicc()        { case_nvcc_kill cicc self 800 nvcc-13-cicc-sigkilled-bare-killed; }
nvcc_kill_cicc_shell()  { case_nvcc_kill cicc parent 800 nvcc-13-stage-shell-sigkilled-died-due-to-signal; }
nvcc_kill_ptxas_shell() { case_nvcc_kill ptxas parent 3000 nvcc-13-ptxas-shell-sigkilled-died-due-to-signal; }

# flash-attn 2.8.3 against torch 2.13.0 (which still accepts -std=c++17), so the
# kernels really reach cicc; 4 archs x NVCC_THREADS=4 cicc processes per job.
flash_attn_213_kill_cicc() {
    local slug=flash-attn-2-8-3-torch-2-13-max-jobs-2-cicc-killed; local log=$RAW/$slug.log
    rm -f "$log"; export PATH=$VENV213/bin:$PATH
    pip cache remove "flash_attn*" >/dev/null 2>&1
    log_versions "$log" python
    with_reaper 3000 "$VENV213/" 6 'cicc|ptxas' run_seq "$log" \
        "CPATH=$VENV213/$NVIDIA_INC CUDA_HOME=$CUDA13 MAX_JOBS=2 pip install --no-build-isolation -v flash-attn==2.8.3"
    publish "$log" "$slug"
}

# ---- dispatcher (keep last) -------------------------------------------------------
main() {
    if [ $# -eq 0 ]; then
        echo "cases:"
        declare -F | awk '{print $3}' | grep -v -E \
            '^(case_|main$|setup_envs|make_|log_|run_|sanitize|publish|with_reaper|kill_when_seen|TORCH_INC)' |
            sed 's/^/  /'
        return 0
    fi
    setup_envs
    for c in "$@"; do "$c"; done
}
main "$@"; exit $?   # one line: bash has read it before main runs
