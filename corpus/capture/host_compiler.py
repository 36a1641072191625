#!/usr/bin/env python3
"""Capture nvcc rejecting the host compiler (gcc 12.2 is newer than CUDA 11.8 accepts; clang 19
is newer than CUDA 11.8 and 12.4 accept).

Needs the toolkits and clang 19 from assemble_toolkits.sh and the venvs from _capture.make_venvs().
torch builds use venvs whose CUDA major matches the toolkit (2.0.1+cu117 with nvcc 11.8,
2.5.1+cu124 with nvcc 12.4), so the host compiler is the only thing wrong.

Usage: TOOLCHAINS=/path/to/scratch python3 corpus/capture/host_compiler.py [case_function ...]
"""
from __future__ import annotations

import sys

from _capture import (CLANG_19, CUDA_11_8, CUDA_12_4, SRC, VENV_CU117, VENV_CU124, Session, clear_jit_cache,
                      fresh_copy, make_venvs, selected, write_case)
GNU_11 = "unsupported GNU version! gcc versions later than 11 are not supported!"
FIX_GCC = ("CUDA 11.8 accepts gcc up to 11: install gcc-11/g++-11 and point nvcc at it "
           "(-ccbin g++-11, or CC=gcc-11 CXX=g++-11 for torch extensions), or use a newer CUDA.")
FIX_CLANG = ("Use a host compiler this CUDA supports: gcc 12 is installed (drop -ccbin / CC=clang), "
             "or a clang older than the limit in the message.")


def bare_nvcc118_gcc12() -> None:
    slug = "nvcc-11-8-bare-compile-gcc-12"
    src = fresh_copy("cuda_cmake_project", "vector_add")
    s = Session(None, src)
    s.export("PATH", f"{CUDA_11_8}/bin:{s.env['PATH']}", shown=f"{CUDA_11_8}/bin:$PATH")
    s.run("nvcc --version")
    s.run("gcc --version")
    cmd = "nvcc -O2 -arch=sm_80 -c vector_add.cu -o vector_add.o"
    s.run(cmd)
    write_case(slug, s, title="bare nvcc 11.8 compile with the system gcc 12.2",
               command=cmd, tools=s.versions(CUDA_11_8, torch=False), outcome="failure",
               causes=["unsupported_host_compiler"],
               key_lines=[GNU_11], fix=FIX_GCC)


def bare_nvcc124_clang19() -> None:
    slug = "nvcc-12-4-bare-compile-ccbin-clang-19"
    src = fresh_copy("cuda_cmake_project", "vector_add")
    s = Session(None, src)
    cmd = f"{CUDA_12_4}/bin/nvcc -ccbin {CLANG_19} -arch=sm_89 -c vector_add.cu -o vector_add.o"
    s.run(cmd)
    write_case(slug, s, title="bare nvcc 12.4 compile with -ccbin clang++ 19",
               command=cmd, tools=s.versions(CUDA_12_4, torch=False, cxx=str(CLANG_19)), outcome="failure",
               causes=["unsupported_host_compiler"],
               key_lines=["error: -- unsupported clang version! clang version must be less than 18 and greater than 3.2"],
               fix=FIX_CLANG)


def bare_nvcc118_clang19() -> None:
    slug = "nvcc-11-8-bare-compile-ccbin-clang-19"
    src = fresh_copy("cuda_cmake_project", "vector_add")
    s = Session(None, src)
    s.run(f"{CLANG_19} --version")
    cmd = f"{CUDA_11_8}/bin/nvcc --compiler-bindir {CLANG_19} -gencode arch=compute_86,code=sm_86 -o vector_add vector_add.cu"
    s.run(cmd)
    write_case(slug, s, title="nvcc 11.8 compile-and-link with --compiler-bindir clang++ 19",
               command=cmd, tools=s.versions(CUDA_11_8, torch=False, cxx=str(CLANG_19)), outcome="failure",
               causes=["unsupported_host_compiler"],
               key_lines=["unsupported clang version! clang version must be less than 15 and greater than 3.2"],
               fix="CUDA 11.8 accepts clang up to 14 and gcc up to 11: pass one of those with -ccbin.")


def cmake_nvcc118_gcc12() -> None:
    slug = "cmake-cuda-project-nvcc-11-8-gcc-12"
    src = fresh_copy("cuda_cmake_project", "vector_add")
    s = Session(None, src)
    cmd = f"cmake -B build -DCMAKE_CUDA_COMPILER={CUDA_11_8}/bin/nvcc"
    s.run(cmd)
    write_case(slug, s, title="CMake project with LANGUAGES CUDA configured with nvcc 11.8 and gcc 12.2",
               command=cmd, tools=s.versions(CUDA_11_8, torch=False, extra={"cmake": "cmake --version | head -1 | awk '{print $3}'"}),
               outcome="failure", causes=["unsupported_host_compiler"],
               key_lines=["error: #error -- unsupported GNU version! gcc versions later than 11 are"],
               fix=("CUDA 11.8 accepts gcc up to 11: configure with -DCMAKE_CUDA_HOST_COMPILER=g++-11 "
                    "(or CUDAHOSTCXX=g++-11), or use a newer CUDA."),
               notes="CMake re-wraps the compiler's message over several lines.")


def torch_cu117_pip_gcc12() -> None:
    slug = "tiny-cuda-ext-pip-nvcc-11-8-torch-cu117-gcc-12"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU117, src)
    cmd = f"CUDA_HOME={CUDA_11_8} TORCH_CUDA_ARCH_LIST=8.6 MAX_JOBS=2 pip install --no-build-isolation -v ."
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension, torch 2.0.1+cu117 with nvcc 11.8 (minor mismatch) and gcc 12.2",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["unsupported_host_compiler"],
               key_lines=[GNU_11],
               fix=FIX_GCC,
               notes=("torch also warns that 11.8 differs from 11.7 in the minor version only: that warning is "
                      "not the cause."))


def torch_cu117_jit_gcc12() -> None:
    slug = "tiny-cuda-ext-jit-load-nvcc-11-8-torch-cu117-gcc-12"
    src = fresh_copy("tiny_cuda_ext")
    clear_jit_cache()
    s = Session(VENV_CU117, src)
    s.export("CUDA_HOME", str(CUDA_11_8))
    s.export("TORCH_CUDA_ARCH_LIST", "7.5")
    cmd = "python jit_build.py"
    s.run(cmd)
    write_case(slug, s, title="torch.utils.cpp_extension.load() on torch 2.0.1+cu117, nvcc 11.8, gcc 12.2",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["unsupported_host_compiler"], key_lines=[GNU_11], fix=FIX_GCC)


def torch_cu124_clang19() -> None:
    slug = "tiny-cuda-ext-setup-build-ext-clang-19-torch-cu124"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU124, src)
    clang = str(CLANG_19)
    cc = clang[:-2]  # .../clang
    cmd = (f"CC={cc} CXX={clang} CUDA_HOME={CUDA_12_4} TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=2 "
           "python setup.py build_ext --inplace")
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension with CC/CXX=clang 19, nvcc 12.4, torch 2.5.1+cu124",
               command=cmd, tools=s.versions(CUDA_12_4, cxx=clang), outcome="failure",
               causes=["unsupported_host_compiler"],
               key_lines=["unsupported clang version! clang version must be less than 18 and greater than 3.2"],
               fix="Build with gcc (unset CC/CXX; gcc 12 is supported by CUDA 12.4) or a clang older than 18.",
               notes="torch passes CC to nvcc as -ccbin; its own compiler check has no bounds for CUDA 12.4 and only warns.")


def flash_attn_cu117_gcc12() -> None:
    # flash-attn 2.3.6 still builds against torch 2.0 (2.8.x needs a newer torch API)
    slug = "flash-attn-2-3-6-pip-nvcc-11-8-torch-cu117-gcc-12"
    s = Session(VENV_CU117, SRC)
    s.export("CUDA_HOME", str(CUDA_11_8))
    # FORCE_BUILD skips the prebuilt-wheel download (2.3.6 aborts when that host is unreachable)
    cmd = "FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=2 pip install --no-build-isolation flash-attn==2.3.6"
    s.run(cmd)
    write_case(slug, s, title="flash-attn 2.3.6 sdist from the index, torch 2.0.1+cu117, nvcc 11.8 with gcc 12.2",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["unsupported_host_compiler"], key_lines=[GNU_11], fix=FIX_GCC,
               notes="torch's minor-mismatch warning (11.8 vs 11.7) is not the cause.")


CASES = [bare_nvcc118_gcc12, bare_nvcc124_clang19, bare_nvcc118_clang19, cmake_nvcc118_gcc12,
         torch_cu117_pip_gcc12, torch_cu117_jit_gcc12, torch_cu124_clang19, flash_attn_cu117_gcc12]

if __name__ == "__main__":
    make_venvs()
    only = selected(sys.argv[1:])
    for case in CASES:
        if only is None or case.__name__ in only:
            print(case.__name__, file=sys.stderr)
            case()
