#!/usr/bin/env bash
# Capture: second (and first) genuine logs for detection rules that had fewer than two corpus logs.
#
# Each case is a different shape from the log the rule already had (another package, tool path,
# torch or toolkit): see the title of each case. Runs with env_capture.py (see its docstring):
# a terminal-like transcript, registry hosts replaced, key lines checked before the case is written.
#
#   SCRATCH=/some/dir TOOLCHAINS=/path/to/toolchains corpus/capture/thin_rules.sh
#   CAPTURE_ONLY="slug ..." corpus/capture/thin_rules.sh      # some cases only
#
# Needs: the local torch wheels (2.14.1 CUDA 13.0 build, 2.13.0 CPU build), network access to the
# package index (flash-attn sdist, xformers 0.0.29.post3 wheel, numpy's release list), root for the
# private mount namespaces that hide the toolkit or ninja for one run, and from the other scripts:
#   $TOOLCHAINS/cuda-11.8, $TOOLCHAINS/cuda-13.2       (assemble_toolkits.sh)
#   $TOOLCHAINS/venv-cu124 (torch 2.5.1+cu124)         (cuda_mismatch.py creates it)
# NVIDIA apex is taken from $APEX_SRC (a checkout; cloned from GitHub when missing).
# Venvs made here (under $SCRATCH): venv-cu130 (torch 2.14.1 + wheel/packaging; xformers is added
# by its case), venv-cpu (torch 2.13.0+cpu), venv-notorch (build tools, no torch), venv-bare (a
# fresh venv), venv-uv (uv). About 7 GB; remove $SCRATCH afterwards.
set -u
export SCRATCH="${SCRATCH:-/work/scratch/thin}"
. "$(dirname "$0")/env_lib.sh"
TOOLCHAINS="${TOOLCHAINS:-/work/scratch/toolchain}"
CUDA_11_8="$TOOLCHAINS/cuda-11.8"
CUDA_13_2="$TOOLCHAINS/cuda-13.2"
VENV_CU124="$TOOLCHAINS/venv-cu124"
APEX_SRC="${APEX_SRC:-$SCRATCH/src/apex}"
VENV_NOTORCH="$SCRATCH/venv-notorch"
T="$SCRATCH/pkgs-thin"          # the small projects written below
EXT="$SCRATCH/torch_extensions"  # JIT build folder, emptied before each JIT case

ensure_torch_venvs
"$VENV_CU/bin/python" -c "import wheel, packaging" 2>/dev/null || ensure_venv "$VENV_CU" wheel packaging
ensure_uv
ensure_pkgs
[ -x "$VENV_BARE/bin/python" ] || fresh_venv "$VENV_BARE"
[ -d "$APEX_SRC/.git" ] || git clone -q --depth 1 https://github.com/NVIDIA/apex "$APEX_SRC"

# --- small projects ------------------------------------------------------------------------
write_thin_pkgs() {
    rm -rf "$T"; mkdir -p "$T"

    # load_inline scripts: C++ only, and with a CUDA kernel
    mkdir -p "$T/inline"
    cat > "$T/inline/inline_cpp.py" <<'EOF'
from torch.utils.cpp_extension import load_inline

src = """
torch::Tensor scaled_add(torch::Tensor a, torch::Tensor b, double alpha) {
  return a + alpha * b;
}
"""
mod = load_inline(name="scaled_add_inline", cpp_sources=[src], functions=["scaled_add"], verbose=True)
print(mod.scaled_add)
EOF
    cat > "$T/inline/inline_cuda.py" <<'EOF'
from torch.utils.cpp_extension import load_inline

cuda_src = """
__global__ void square_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

torch::Tensor square(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  square_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
cpp_src = "torch::Tensor square(torch::Tensor x);"
mod = load_inline(name="square_inline", cpp_sources=[cpp_src], cuda_sources=[cuda_src],
                  functions=["square"], verbose=True)
print(mod.square)
EOF

    # capext: setup.py picks the -gencode from the GPU of the building machine
    mkdir -p "$T/capext/csrc"
    cp "$PKGS/tinyext/csrc/tinyext.cpp" "$T/capext/csrc/capext.cpp"
    cp "$PKGS/tinyext/csrc/tinyext_kernel.cu" "$T/capext/csrc/capext_kernel.cu"
    cat > "$T/capext/setup.py" <<'EOF'
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# build for the GPU of this machine only (keeps the build short)
major, minor = torch.cuda.get_device_capability()
arch = f"{major}{minor}"

setup(
    name="capext",
    version="0.1.0",
    ext_modules=[
        CUDAExtension(
            name="capext",
            sources=["csrc/capext.cpp", "csrc/capext_kernel.cu"],
            extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2", f"-gencode=arch=compute_{arch},code=sm_{arch}"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
EOF

    # roiops: CUDAExtension when a GPU (or FORCE_CUDA=1) is there, else CppExtension with the
    # same sources, .cu included (a pattern of detection-toolbox setup.py files)
    mkdir -p "$T/roiops/csrc"
    cp "$PKGS/tinyext/csrc/tinyext.cpp" "$T/roiops/csrc/roi_scale.cpp"
    cp "$PKGS/tinyext/csrc/tinyext_kernel.cu" "$T/roiops/csrc/roi_scale_kernel.cu"
    cat > "$T/roiops/setup.py" <<'EOF'
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension


def make_ext(name, sources):
    if torch.cuda.is_available() or os.getenv("FORCE_CUDA", "0") == "1":
        return CUDAExtension(name, sources, define_macros=[("WITH_CUDA", None)])
    print(f"Compiling {name} without CUDA")
    return CppExtension(name, sources)


setup(
    name="roi_ops",
    version="0.1.0",
    ext_modules=[make_ext("roi_ops_ext", ["csrc/roi_scale.cpp", "csrc/roi_scale_kernel.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
EOF

    # cutk: a C++ project that links the CUDA runtime through find_package(CUDAToolkit)
    mkdir -p "$T/cutk"
    cat > "$T/cutk/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(devinfo LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
add_executable(devinfo devinfo.cpp)
target_link_libraries(devinfo PRIVATE CUDA::cudart)
EOF
    cat > "$T/cutk/devinfo.cpp" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  std::printf("%d device(s): %s\n", n, cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
EOF
}
[ -d "$T/cutk" ] || write_thin_pkgs

V="$VENV_CU/bin"
NO_TORCH_FIX="Install torch into the venv that builds first (pip install torch), then rerun with --no-build-isolation; or drop --no-build-isolation only where the package's own build requirements include torch."

# --- no-torch-without-isolation --------------------------------------------------------------
# A fresh venv each time: uv's run below upgrades its setuptools while resolving flash-attn's deps.
if [ -z "${CAPTURE_SIDECAR_ONLY:-}" ]; then
    rm -rf "$VENV_NOTORCH"; ensure_venv "$VENV_NOTORCH" packaging wheel setuptools ninja psutil einops
fi
$CASE --slug flash-attn-pip-no-build-isolation-venv-without-torch --cwd "$SCRATCH" \
    --title "pip install --no-build-isolation flash-attn in a venv that has the build tools but no torch" \
    --cmd "$VENV_NOTORCH/bin/pip list" \
    --cmd "$VENV_NOTORCH/bin/pip install --no-build-isolation flash-attn" \
    --python "$VENV_NOTORCH/bin/python" --setuptools --cause missing_build_dependency \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "$NO_TORCH_FIX"

$CASE --slug flash-attn-uv-no-build-isolation-venv-without-torch --cwd "$SCRATCH" \
    --title "uv pip install --no-build-isolation flash-attn==2.8.3.post2 into a venv without torch" \
    --cmd "$UV pip install --python $VENV_NOTORCH/bin/python --no-build-isolation flash-attn==$FLASH_ATTN" \
    --python "$VENV_NOTORCH/bin/python" --uv "$UV" --cause missing_build_dependency \
    --key "ModuleNotFoundError: No module named 'torch'" \
    --fix "$NO_TORCH_FIX" \
    --notes "uv resolves torch as a runtime dependency of flash-attn and starts downloading it, but builds flash-attn in the venv as it is, without torch (it only replaced the venv's setuptools 65.5.0 with 84.2.1 first)."

# --- bdist-wheel-missing ---------------------------------------------------------------------
rm -rf "$PKGS/plainext/build" "$PKGS/plainext/"*.egg-info
$CASE --slug plainext-pip-no-build-isolation-fresh-venv-no-wheel --cwd "$PKGS/plainext" \
    --title "pip install --no-build-isolation . (setup.py only) in a fresh venv: setuptools 65.5 without the wheel package" \
    --cmd "$VENV_BARE/bin/pip list" \
    --cmd "$VENV_BARE/bin/pip install --no-build-isolation ." \
    --python "$VENV_BARE/bin/python" --setuptools --cause missing_build_dependency \
    --key "error: invalid command 'bdist_wheel'" \
    --fix "pip install wheel into the venv (or upgrade setuptools to 70.1+, which has bdist_wheel), then rerun." \
    --notes "pip fails already while preparing metadata: setuptools 65.5's dist_info command needs bdist_wheel."
rm -rf "$PKGS/plainext/build" "$PKGS/plainext/"*.egg-info

# --- pip-requires-python ---------------------------------------------------------------------
$CASE --slug numpy-2-5-range-on-python-3-11 --cwd "$SCRATCH" \
    --title "pip install 'numpy>=2.5' on Python 3.11 (every numpy 2.5 release needs Python >= 3.12)" \
    --cmd "$VENV_BARE/bin/pip install 'numpy>=2.5'" \
    --python "$VENV_BARE/bin/python" --cause no_matching_distribution \
    --key "ERROR: Ignored the following versions that require a different python version" \
    --fix "Use Python 3.12 or newer for numpy 2.5, or stay on numpy 2.4.x with Python 3.11 (pip install 'numpy<2.5')."

# --- ninja-required --------------------------------------------------------------------------
rm -rf "$EXT"
$CASE --slug load-inline-torch-2-14-without-ninja --cwd "$T/inline" --hide /usr/bin/ninja \
    --title "torch.utils.cpp_extension.load_inline (C++ only) with torch 2.14.1+cu130 and no ninja" \
    --cmd "TORCH_EXTENSIONS_DIR=$EXT $V/python inline_cpp.py" \
    --python "$V/python" --cause missing_build_dependency \
    --key "RuntimeError: Ninja is required to load C++ extensions" \
    --fix "pip install ninja into the venv (or apt install ninja-build) so that 'ninja --version' works on PATH." \
    --notes "/usr/bin/ninja was hidden for this run (bind mount of /dev/null) and the venv has no ninja package."

# --- keyboard-interrupt ----------------------------------------------------------------------
rm -rf "$EXT"
$CASE --slug load-inline-ctrl-c-while-ninja-compiles --cwd "$T/inline" --interrupt-after 20 \
    --title "Ctrl-C while torch.utils.cpp_extension.load_inline waits for ninja (torch 2.14.1+cu130)" \
    --cmd "TORCH_EXTENSIONS_DIR=$EXT $V/python inline_cpp.py" \
    --python "$V/python" --gcc --cause build_interrupted \
    --key "ninja: build stopped: interrupted by user." \
    --key "KeyboardInterrupt" \
    --fix "Nothing is broken: the build was stopped from outside. Rerun it and let it finish." \
    --notes "SIGINT went to the whole process group after 20 s, as a terminal's Ctrl-C does; Python was waiting in subprocess.run for ninja."

# --- nvcc-too-old-for-torch-std --------------------------------------------------------------
rm -rf "$EXT"
$CASE --slug load-inline-cuda-nvcc-11-8-first-on-path-torch-2-14 --cwd "$T/inline" \
    --title "load_inline with a CUDA kernel, torch 2.14.1+cu130, CUDA 11.8's nvcc first on PATH (CUDA_HOME unset)" \
    --cmd "$V/python -c 'import torch; print(torch.__version__, torch.version.cuda)'" \
    --cmd "export PATH=$CUDA_11_8/bin:\$PATH" \
    --cmd "which nvcc && nvcc --version | tail -2" \
    --cmd "TORCH_EXTENSIONS_DIR=$EXT TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 $V/python inline_cuda.py" \
    --unset CUDA_HOME --unset CUDA_PATH \
    --python "$V/python" --nvcc "$CUDA_11_8/bin/nvcc" --gcc --cause cuda_version_mismatch \
    --key "nvcc fatal   : Value 'c++20' is not defined for option 'std'" \
    --fix "Put CUDA 13.x first on PATH (or export CUDA_HOME=/usr/local/cuda-13.0) to match torch 2.14.1+cu130, or install a torch build for the toolkit's CUDA." \
    --notes "torch takes CUDA_HOME from the first nvcc on PATH; load_inline runs no CUDA version check, so nvcc 11.8 meets the -std=c++20 torch 2.14 passes."
rm -rf "$EXT"

# --- torch-not-compiled-with-cuda ------------------------------------------------------------
rm -rf "$T/capext/build" "$T/capext/"*.egg-info
$CASE --slug capext-setup-py-device-capability-cpu-torch --cwd "$T/capext" \
    --title "pip install --no-build-isolation . whose setup.py asks torch.cuda for the GPU's capability, with torch 2.13.0+cpu" \
    --cmd "$VENV_CPU/bin/pip install --no-build-isolation ." \
    --python "$VENV_CPU/bin/python" --cause cpu_only_torch \
    --key "AssertionError: Torch not compiled with CUDA enabled" \
    --fix "torch in this venv is a CPU-only build (2.13.0+cpu): install a CUDA build (pip install torch==2.14.1 --index-url https://index.example/whl/cu130), then rebuild."

# --- torch-cuda-not-found-on-system ----------------------------------------------------------
NOTFOUND_FIX="Install the CUDA toolkit matching torch's CUDA and export CUDA_HOME=/usr/local/cuda-X.Y (and PATH=\$CUDA_HOME/bin:\$PATH) before building; the extension has .cu sources."
rm -rf "$T/roiops/build" "$T/roiops/"*.egg-info "$T/roiops/"*.so
$CASE --slug roiops-pip-cpp-extension-cu-sources-no-toolkit-torch-2-14 --cwd "$T/roiops" --hide /usr/local \
    --title "pip install --no-build-isolation . : CppExtension fallback with a .cu source, torch 2.14.1+cu130, no GPU and no CUDA toolkit" \
    --cmd "$V/python -c 'import torch; print(torch.__version__, torch.version.cuda)'" \
    --cmd "$V/pip install --no-build-isolation ." \
    --python "$V/python" --gcc --cause cuda_home_missing \
    --key "CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATH" \
    --fix "$NOTFOUND_FIX" \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run. setup.py falls back to CppExtension without a GPU, but keeps the .cu file, so torch still needs nvcc."
rm -rf "$T/roiops/build" "$T/roiops/"*.egg-info "$T/roiops/"*.so

$CASE --slug roiops-setup-build-ext-no-toolkit-torch-2-5-1 --cwd "$T/roiops" --hide /usr/local \
    --title "python setup.py build_ext --inplace (CppExtension fallback with a .cu source), torch 2.5.1+cu124, no CUDA toolkit" \
    --cmd "$VENV_CU124/bin/python -c 'import torch; print(torch.__version__, torch.version.cuda)'" \
    --cmd "$VENV_CU124/bin/python setup.py build_ext --inplace" \
    --python "$VENV_CU124/bin/python" --setuptools --gcc --cause cuda_home_missing \
    --key "CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATH" \
    --fix "$NOTFOUND_FIX" \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run. torch 2.5 words the message over three lines."
rm -rf "$T/roiops/build" "$T/roiops/"*.egg-info "$T/roiops/"*.so

# --- cmake-no-cuda-compiler ------------------------------------------------------------------
rm -rf "$SCRATCH/cutk-build"
$CASE --slug cxx-project-find-package-cudatoolkit-no-toolkit --cwd "$T/cutk" --hide /usr/local \
    --title "cmake configure of a C++ project with find_package(CUDAToolkit REQUIRED) on a machine without the toolkit" \
    --cmd "cmake -S . -B $SCRATCH/cutk-build" \
    --gcc --tool "cmake=$(cmake --version | head -1 | awk '{print $3}')" --cause cuda_home_missing \
    --key "Could not find nvcc, please set CUDAToolkit_ROOT." \
    --fix "Install the CUDA toolkit and point CMake at it: -DCUDAToolkit_ROOT=/usr/local/cuda-13.0 (or put its bin folder with nvcc on PATH)." \
    --notes "/usr/local (toolkit and nvcc wrappers) was hidden for this run."
rm -rf "$SCRATCH/cutk-build"

# --- apex-cuda-mismatch ----------------------------------------------------------------------
APEX_REV=$(git -C "$APEX_SRC" rev-parse --short HEAD)
rm -rf "$APEX_SRC/build" "$APEX_SRC/"*.egg-info
$CASE --slug apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130 --cwd "$APEX_SRC" \
    --title "NVIDIA apex from source (APEX_CPP_EXT=1 APEX_CUDA_EXT=1 pip install -v --no-build-isolation .) with CUDA 13.2 against torch 2.14.1+cu130" \
    --cmd "export CUDA_HOME=$CUDA_13_2 PATH=$CUDA_13_2/bin:\$PATH" \
    --cmd "APEX_CPP_EXT=1 APEX_CUDA_EXT=1 $V/pip install -v --no-build-isolation ." \
    --python "$V/python" --nvcc "$CUDA_13_2/bin/nvcc" --gcc --cause cuda_version_mismatch \
    --key "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 13.0." \
    --fix "apex refuses any difference, even a minor one: build with the CUDA 13.0 toolkit (export CUDA_HOME=/usr/local/cuda-13.0 PATH=\$CUDA_HOME/bin:\$PATH)." \
    --notes "apex at commit $APEX_REV. torch itself would only warn about 13.2 vs 13.0 (a minor mismatch); apex's own check compares the full version."
rm -rf "$APEX_SRC/build" "$APEX_SRC/"*.egg-info

# --- xformers-built-for-other-torch ----------------------------------------------------------
"$V/pip" uninstall -q -y xformers >/dev/null 2>&1
$CASE --slug xformers-0-0-29-post3-no-deps-into-torch-2-14 --cwd "$SCRATCH" \
    --title "pip install --no-deps xformers==0.0.29.post3 (built for torch 2.6.0+cu124) into a torch 2.14.1+cu130 venv, imported with XFORMERS_MORE_DETAILS=1" \
    --cmd "$V/pip install --no-deps xformers==0.0.29.post3" \
    --cmd "XFORMERS_MORE_DETAILS=1 $V/python -c 'import torch, xformers, xformers.ops; print(torch.__version__, xformers.__version__)'" \
    --expect any --python "$V/python" --tool xformers=0.0.29.post3 --cause abi_mismatch \
    --key "xFormers can't load C++/CUDA extensions. xFormers was built for:" \
    --key "PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.14.1+cu130)" \
    --fix "Install the xformers release built for the installed torch (or pin torch to 2.6.0 for xformers 0.0.29.post3); --no-deps kept pip from noticing the mismatch." \
    --notes "A warning, not an exception: the import succeeds without the C++/CUDA kernels. The underlying load error is libcudart.so.12 missing next to torch's CUDA 13 runtime."
"$V/pip" uninstall -q -y xformers >/dev/null 2>&1
