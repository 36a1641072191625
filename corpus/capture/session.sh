#!/usr/bin/env bash
# Re-capture the multi-attempt debugging session: installing a small CUDA extension
# (fused-scale, written below) into a venv that has torch 2.14.1+cu130. The steps
# (attempts are the four fused-scale installs; step 3 only installs a helper):
#
#   1. pip install ./fused_scale                        isolated build: no torch there
#   2. pip install --no-build-isolation ./fused_scale   setup.py needs 'psutil'
#   3. pip install psutil
#   4. MAX_JOBS=8 pip install --no-build-isolation      all four sources at once, over the
#                                                       memory budget: a compiler SIGKILLed
#   5. MAX_JOBS=1 pip install --no-build-isolation      one compiler at a time: success
#
# The memory budget: the build cannot get its own cgroup here, so oom_reaper.sh plays
# the kernel's OOM killer for this build's compilers only (budget BUDGET_MB: above the
# largest single compiler's peak -- cicc, ~3.2 GB for this kernel with torch's
# headers -- and below what three cc1plus (~1.6 GB each) and nvcc's front end take
# together). Its own messages go to
# $RAW/reaper.txt, not into the log.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

VENV=$WORK/venv
PKG=$WORK/pkgs/fused_scale
BUDGET_MB=${BUDGET_MB:-4000}
SLUG=session-fused-scale-isolation-packaging-oom-max-jobs
LOG=$RAW/$SLUG.log

# The package: a CUDA extension with three C++ sources and one CUDA source; like
# flash-attn's, its setup.py imports psutil to pick a job count when MAX_JOBS is unset.
make_pkg() {
    mkdir -p "$PKG/csrc" "$PKG/fused_scale"
    echo 'from . import _C  # noqa: F401' >"$PKG/fused_scale/__init__.py"
    cat >"$PKG/csrc/bindings.cpp" <<'CPP'
#include <torch/extension.h>

torch::Tensor scale_cuda(torch::Tensor x, double alpha);
torch::Tensor scale_cpu(torch::Tensor x, double alpha);
torch::Tensor clamp_cpu(torch::Tensor x, double lo, double hi);

torch::Tensor scale(torch::Tensor x, double alpha) {
  return x.is_cuda() ? scale_cuda(x.contiguous(), alpha) : scale_cpu(x, alpha);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale", &scale, "Multiply a tensor by a scalar");
  m.def("clamp", &clamp_cpu, "Clamp a CPU tensor");
}
CPP
    cat >"$PKG/csrc/scale_cpu.cpp" <<'CPP'
#include <torch/extension.h>

torch::Tensor scale_cpu(torch::Tensor x, double alpha) {
  TORCH_CHECK(!x.is_cuda(), "scale_cpu takes a CPU tensor");
  return x * alpha;
}
CPP
    cat >"$PKG/csrc/clamp_cpu.cpp" <<'CPP'
#include <torch/extension.h>

torch::Tensor clamp_cpu(torch::Tensor x, double lo, double hi) {
  TORCH_CHECK(lo <= hi, "lo must not exceed hi");
  return x.clamp(lo, hi);
}
CPP
    cat >"$PKG/csrc/scale_kernel.cu" <<'CU'
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_kernel(const float* x, float* y, float alpha, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}

torch::Tensor scale_cuda(torch::Tensor x, double alpha) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
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
    cat >"$PKG/setup.py" <<'PY'
import os

from packaging.version import Version
from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

if Version(torch.__version__.split("+")[0]) < Version("2.4"):
    raise RuntimeError("fused-scale needs torch >= 2.4")

# Like flash-attn: without MAX_JOBS, size the parallel build from cores and free memory.
if not os.environ.get("MAX_JOBS"):
    import psutil

    free_gb = psutil.virtual_memory().available / 2**30
    os.environ["MAX_JOBS"] = str(max(1, min(os.cpu_count() or 1, int(free_gb / 4))))

setup(
    name="fused-scale",
    version="0.1.0",
    packages=["fused_scale"],
    ext_modules=[
        CUDAExtension(
            name="fused_scale._C",
            sources=[
                "csrc/bindings.cpp",
                "csrc/scale_cpu.cpp",
                "csrc/clamp_cpu.cpp",
                "csrc/scale_kernel.cu",
            ],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
PY
}
make_pkg

# Start state: torch installed, the build helper 'psutil' not, no earlier build.
# ('packaging' is importable through setuptools' vendored copy, so it cannot be the
# missing module here.)
"$VENV/bin/pip" uninstall -y -q psutil fused-scale >/dev/null 2>&1
rm -rf "$PKG/build" "$PKG"/*.egg-info "$PKG"/fused_scale/*.so
rm -f "$LOG"
cd "$WORK" || exit 1

"$HERE/oom_reaper.sh" "$BUDGET_MB" "$PKG" 99 'cc1plus|cicc|cudafe\+\+' >>"$RAW/reaper.txt" 2>&1 &
REAPER=$!

run_seq "$LOG" \
    "source $VENV/bin/activate" \
    "python -c \"import torch; print(torch.__version__, torch.version.cuda)\"" \
    "export CUDA_HOME=$CUDA13 TORCH_CUDA_ARCH_LIST=\"9.0\" CPATH=$VENV/lib/python3.11/site-packages/nvidia/cu13/include" \
    "pip install ./pkgs/fused_scale" \
    "pip install --no-build-isolation ./pkgs/fused_scale" \
    "pip install psutil" \
    "MAX_JOBS=8 pip install --no-build-isolation ./pkgs/fused_scale" \
    "MAX_JOBS=1 pip install --no-build-isolation ./pkgs/fused_scale" \
    "python -c \"import torch, fused_scale; print('fused_scale imported with torch', torch.__version__)\""

kill "$REAPER" 2>/dev/null
publish "$LOG" "$SLUG"
