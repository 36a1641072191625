#!/usr/bin/env bash
# Write the small test packages the capture scripts build, under $PKGS (see env_lib.sh).
#
#   tinyext/           torch CUDAExtension (one .cpp + one .cu), setup.py only (no pyproject.toml)
#   tinyext-pep517/    the same sources with a pyproject.toml whose build requires lack torch
#   tinyext-noisy/     the CUDAExtension with code that draws host and device compiler warnings
#   tinycpp/           torch CppExtension (CPU only) that calls Tensor::cholesky, an op torch 2.14
#                      no longer exports: built against 2.13 and loaded by 2.14 it cannot link
#   plainext/          a plain C extension (no torch) built with setup.py
#   makecu/            a Makefile calling nvcc (one recipe directly, one through /bin/sh)
#   cmakecu/           a CMake project with the CUDA language enabled
set -eu
. "$(dirname "$0")/env_lib.sh"

write_sources() {  # write_sources DIR NAME
    local d="$1" name="$2"
    mkdir -p "$d/csrc"
    cat > "$d/csrc/${name}.cpp" <<'EOF'
#include <torch/extension.h>

torch::Tensor scale_cuda(const torch::Tensor& x, double factor);

torch::Tensor scale(const torch::Tensor& x, double factor) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
  return scale_cuda(x.contiguous(), factor);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale", &scale, "multiply a float32 CUDA tensor by a factor");
}
EOF
    cat > "$d/csrc/${name}_kernel.cu" <<'EOF'
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void scale_kernel(const float* __restrict__ in, float* __restrict__ out, float f, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * f;
}

torch::Tensor scale_cuda(const torch::Tensor& x, double factor) {
  auto out = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = (int)((n + threads - 1) / threads);
  scale_kernel<<<blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), (float)factor, n);
  return out;
}
EOF
}

write_setup() {  # write_setup DIR NAME
    cat > "$1/setup.py" <<EOF
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="$2",
    version="0.1.0",
    ext_modules=[
        CUDAExtension(
            name="$2",
            sources=["csrc/$2.cpp", "csrc/$2_kernel.cu"],
            extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
EOF
}

# tinyext: setup.py only
rm -rf "$PKGS/tinyext"; write_sources "$PKGS/tinyext" tinyext; write_setup "$PKGS/tinyext" tinyext

# tinyext-pep517: build requires without torch (the usual mistake)
rm -rf "$PKGS/tinyext-pep517"; write_sources "$PKGS/tinyext-pep517" tinyext; write_setup "$PKGS/tinyext-pep517" tinyext
cat > "$PKGS/tinyext-pep517/pyproject.toml" <<'EOF'
[build-system]
requires = ["setuptools>=64", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "tinyext"
version = "0.1.0"
requires-python = ">=3.9"
dependencies = ["torch"]
EOF

# tinyext-noisy: compiles, but with warnings from g++ and nvcc
rm -rf "$PKGS/tinyext-noisy"; write_sources "$PKGS/tinyext-noisy" noisyext
cat >> "$PKGS/tinyext-noisy/csrc/noisyext_kernel.cu" <<'EOF'

__global__ void noisy_kernel(float* out, int n) {
  int unused_counter = 0;
  for (int i = 0; i < n; ++i) {
    unsigned u = i;
    if (u < n) out[i] = 0.0f;
  }
}
EOF
cat >> "$PKGS/tinyext-noisy/csrc/noisyext.cpp" <<'EOF'

static int noisy_helper(std::vector<int> v) {
  int unused = 0;
  for (int i = 0; i < v.size(); ++i) {
  }
  return v.empty() ? 0 : v[0];
}
EOF
cat > "$PKGS/tinyext-noisy/setup.py" <<'EOF'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="noisyext",
    version="0.1.0",
    ext_modules=[
        CUDAExtension(
            name="noisyext",
            sources=["csrc/noisyext.cpp", "csrc/noisyext_kernel.cu"],
            extra_compile_args={"cxx": ["-O2", "-Wall", "-Wextra"], "nvcc": ["-O2", "-Xcompiler", "-Wall"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
EOF

# tinycpp: CPU-only CppExtension
rm -rf "$PKGS/tinycpp"; mkdir -p "$PKGS/tinycpp"
cat > "$PKGS/tinycpp/tinycpp.cpp" <<'EOF'
#include <torch/extension.h>

torch::Tensor add_scaled(const torch::Tensor& a, const torch::Tensor& b, double alpha) {
  TORCH_CHECK(a.sizes() == b.sizes(), "shape mismatch: ", a.sizes(), " vs ", b.sizes());
  return a + alpha * b;
}

c10::optional<int64_t> first_dim(const torch::Tensor& a) {
  if (a.dim() == 0) return c10::nullopt;
  return a.size(0);
}

torch::Tensor lower_factor(const torch::Tensor& spd) {
  return spd.cholesky(/*upper=*/false);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("add_scaled", &add_scaled);
  m.def("lower_factor", &lower_factor);
  m.def("first_dim", &first_dim);
}
EOF
cat > "$PKGS/tinycpp/setup.py" <<'EOF'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="tinycpp",
    version="0.1.0",
    ext_modules=[CppExtension("tinycpp", ["tinycpp.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
EOF

# plainext: a C extension without torch (for setuptools/wheel problems)
rm -rf "$PKGS/plainext"; mkdir -p "$PKGS/plainext"
cat > "$PKGS/plainext/plainext.c" <<'EOF'
#include <Python.h>
static PyObject* answer(PyObject* self, PyObject* args) { return PyLong_FromLong(42); }
static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, "42"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "plainext", NULL, -1, methods};
PyMODINIT_FUNC PyInit_plainext(void) { return PyModule_Create(&mod); }
EOF
cat > "$PKGS/plainext/setup.py" <<'EOF'
from setuptools import setup, Extension

setup(name="plainext", version="0.1.0", ext_modules=[Extension("plainext", ["plainext.c"])])
EOF
echo "packages written under $PKGS"

# makecu: a plain Makefile that calls nvcc (one recipe runs nvcc directly, one through /bin/sh)
rm -rf "$PKGS/makecu"; mkdir -p "$PKGS/makecu"
cat > "$PKGS/makecu/saxpy.cu" <<'CU'
#include <cstdio>
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() { std::printf("saxpy kernel at %p\n", (void*)saxpy); return 0; }
CU
printf 'NVCC ?= nvcc\nARCH ?= -arch=sm_90\n\nall: saxpy saxpy_dbg\n\nsaxpy: saxpy.cu\n\t$(NVCC) $(ARCH) -O2 -o $@ $<\n\nsaxpy_dbg: saxpy.cu\n\t@echo "NVCC $@"; $(NVCC) $(ARCH) -G -o $@ $<\n\nclean:\n\trm -f saxpy saxpy_dbg\n' > "$PKGS/makecu/Makefile"

# cmakecu: a CMake project with the CUDA language enabled
rm -rf "$PKGS/cmakecu"; mkdir -p "$PKGS/cmakecu"
cp "$PKGS/makecu/saxpy.cu" "$PKGS/cmakecu/"
cat > "$PKGS/cmakecu/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.24)
project(saxpy LANGUAGES CXX CUDA)
set(CMAKE_CUDA_ARCHITECTURES 90)
add_executable(saxpy saxpy.cu)
CM
echo "make/cmake projects written under $PKGS"
