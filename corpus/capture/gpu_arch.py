#!/usr/bin/env python3
"""Capture GPU architectures the compiler or torch does not know: archs CUDA 13 removed
(Maxwell, Pascal, Volta), archs too new for CUDA 11.8 / 12.4 (sm_90a, sm_100, sm_120), arch names
torch cannot parse, and the empty arch list torch derives when no GPU is visible.

Needs the toolkits from assemble_toolkits.sh and the venvs from _capture.make_venvs().

Usage: TOOLCHAINS=/path/to/scratch python3 corpus/capture/gpu_arch.py [case_function ...]
"""
from __future__ import annotations

import sys

from _capture import (CUDA_11_8, CUDA_12_4, CUDA_13_0, CUDA_13_2, VENV_CU124, VENV_CU130, Session,
                      clear_jit_cache, fresh_copy, make_venvs, selected, write_case)

FIX_13_OLD = ("CUDA 13 dropped sm_50-sm_72 (Maxwell, Pascal, Volta): build for the GPU with a CUDA 12.x "
              "toolkit (and a torch built for it), or set the arch list to 7.5 or newer for newer GPUs.")


def _bare(slug: str, title: str, cuda, cmd_tail: str, key: str, fix: str, show_version: bool = False) -> None:
    src = fresh_copy("cuda_cmake_project", "vector_add")
    s = Session(None, src)
    nvcc = f"{cuda}/bin/nvcc"
    if show_version:
        s.run(f"{nvcc} --version")
    cmd = f"{nvcc} {cmd_tail}"
    s.run(cmd)
    write_case(slug, s, title=title, command=cmd, tools=s.versions(cuda, torch=False),
               outcome="failure", causes=["unsupported_arch"], key_lines=[key], fix=fix)


def bare_nvcc130_sm50() -> None:
    _bare("nvcc-13-0-arch-sm-50", "nvcc 13.0 asked for sm_50 (Maxwell, removed in CUDA 13)", CUDA_13_0,
          "-arch=sm_50 -c vector_add.cu -o vector_add.o",
          "nvcc fatal   : Unsupported gpu architecture 'sm_50'", FIX_13_OLD, show_version=True)


def bare_nvcc130_gencode60() -> None:
    _bare("nvcc-13-0-gencode-compute-60", "nvcc 13.0 with -gencode for compute_60 (Pascal) and compute_80",
          CUDA_13_0,
          "-gencode arch=compute_60,code=sm_60 -gencode arch=compute_80,code=sm_80 -o vector_add vector_add.cu",
          "nvcc fatal   : Unsupported gpu architecture 'compute_60'", FIX_13_OLD)


def bare_nvcc118_sm90a() -> None:
    _bare("nvcc-11-8-arch-sm-90a", "nvcc 11.8 asked for sm_90a (needs CUDA 12.0+)", CUDA_11_8,
          "-arch=sm_90a -c vector_add.cu -o vector_add.o",
          "nvcc fatal   : Value 'sm_90a' is not defined for option 'gpu-architecture'",
          "sm_90a needs CUDA 12.0 or newer: use a newer toolkit, or build plain sm_90 with CUDA 11.8.",
          show_version=True)


def bare_nvcc124_sm100() -> None:
    _bare("nvcc-12-4-arch-sm-100", "nvcc 12.4 asked for sm_100 (Blackwell, needs CUDA 12.8+)", CUDA_12_4,
          "-arch=sm_100 -c vector_add.cu -o vector_add.o",
          "nvcc fatal   : Value 'sm_100' is not defined for option 'gpu-architecture'",
          "sm_100 needs CUDA 12.8 or newer: install CUDA 12.8+ (and a torch built for it).")


def bare_nvcc124_compute120() -> None:
    _bare("nvcc-12-4-gencode-compute-120", "nvcc 12.4 with -gencode for compute_120 (RTX 50xx, needs CUDA 12.8+)",
          CUDA_12_4, "-gencode=arch=compute_120,code=sm_120 -c vector_add.cu -o vector_add.o",
          "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
          "sm_120 needs CUDA 12.8 or newer: install CUDA 12.8+ (and a torch built for it).", show_version=True)


def torch_cu130_arch61_build_ext() -> None:
    slug = "tiny-cuda-ext-torch-cuda-arch-list-6-1-nvcc-13-0"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    cmd = f'CUDA_HOME={CUDA_13_0} TORCH_CUDA_ARCH_LIST="6.1" MAX_JOBS=2 python setup.py build_ext --inplace'
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension with TORCH_CUDA_ARCH_LIST=6.1 on nvcc 13.0 / torch 2.14.1+cu130",
               command=cmd, tools=s.versions(CUDA_13_0), outcome="failure", causes=["unsupported_arch"],
               key_lines=["nvcc fatal   : Unsupported gpu architecture 'compute_61'"], fix=FIX_13_OLD)


def torch_cu130_arch50_pip() -> None:
    slug = "tiny-cuda-ext-pip-torch-cuda-arch-list-5-0-8-0-nvcc-13-0"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    s.export("CUDA_HOME", str(CUDA_13_0))
    s.export("TORCH_CUDA_ARCH_LIST", "5.0;8.0", shown='"5.0;8.0"')
    cmd = "MAX_JOBS=2 pip install --no-build-isolation ."
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension pip-installed with TORCH_CUDA_ARCH_LIST=\"5.0;8.0\" on nvcc 13.0",
               command=cmd, tools=s.versions(CUDA_13_0), outcome="failure", causes=["unsupported_arch"],
               key_lines=["nvcc fatal   : Unsupported gpu architecture 'compute_50'"], fix=FIX_13_OLD)


def torch_cu130_arch_sm86_unknown() -> None:
    slug = "tiny-cuda-ext-torch-cuda-arch-list-sm-86-unknown"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    cmd = f"CUDA_HOME={CUDA_13_0} TORCH_CUDA_ARCH_LIST=sm_86 python setup.py build_ext --inplace"
    s.run(cmd)
    write_case(slug, s, title="TORCH_CUDA_ARCH_LIST=sm_86 (an nvcc arch name, not a compute capability)",
               command=cmd, tools=s.versions(CUDA_13_0), outcome="failure", causes=["unsupported_arch"],
               key_lines=["ValueError: Unknown CUDA arch (sm_86) or GPU not supported"],
               fix='Write compute capabilities: TORCH_CUDA_ARCH_LIST="8.6".')


def torch_cu124_arch120_unknown() -> None:
    slug = "tiny-cuda-ext-torch-cu124-cuda-arch-list-12-0-unknown"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU124, src)
    s.run('python -c "import torch; print(torch.__version__)"')
    cmd = f'CUDA_HOME={CUDA_12_4} TORCH_CUDA_ARCH_LIST="8.9;12.0" pip install --no-build-isolation .'
    s.run(cmd)
    write_case(slug, s, title="torch 2.5.1+cu124 asked for compute capability 12.0 (RTX 50xx)",
               command=cmd, tools=s.versions(CUDA_12_4), outcome="failure", causes=["unsupported_arch"],
               key_lines=["ValueError: Unknown CUDA arch (12.0) or GPU not supported"],
               fix="Compute capability 12.0 needs CUDA 12.8+ and a torch built for it (2.7 or newer, cu128).")


def torch_cu130_minor_132_arch70() -> None:
    slug = "tiny-cuda-ext-nvcc-13-2-torch-cu130-cuda-arch-list-7-0"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    cmd = f"CUDA_HOME={CUDA_13_2} TORCH_CUDA_ARCH_LIST=7.0 MAX_JOBS=2 python setup.py build_ext --inplace"
    s.run(cmd)
    write_case(slug, s, title="nvcc 13.2 (minor mismatch with cu130, only a warning) asked for 7.0 (Volta)",
               command=cmd, tools=s.versions(CUDA_13_2), outcome="failure", causes=["unsupported_arch"],
               key_lines=["nvcc fatal   : Unsupported gpu architecture 'compute_70'"], fix=FIX_13_OLD,
               notes="The minor CUDA version mismatch warning (13.2 vs 13.0) is not the cause.")


def torch_jit_pascal_named() -> None:
    slug = "tiny-cuda-ext-jit-load-cuda-arch-list-pascal-nvcc-13-0"
    src = fresh_copy("tiny_cuda_ext")
    clear_jit_cache()
    s = Session(VENV_CU130, src)
    cmd = f"CUDA_HOME={CUDA_13_0} TORCH_CUDA_ARCH_LIST=Pascal MAX_JOBS=2 python jit_build.py"
    s.run(cmd)
    write_case(slug, s, title="torch.utils.cpp_extension.load() with TORCH_CUDA_ARCH_LIST=Pascal on nvcc 13.0",
               command=cmd, tools=s.versions(CUDA_13_0), outcome="failure", causes=["unsupported_arch"],
               key_lines=["nvcc fatal   : Unsupported gpu architecture 'compute_60'"], fix=FIX_13_OLD,
               notes="torch expands the name Pascal to 6.0;6.1+PTX.")


def torch_no_gpu_no_arch_list() -> None:
    slug = "tiny-cuda-ext-no-visible-gpu-no-cuda-arch-list"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    cmd = f"CUDA_HOME={CUDA_13_0} pip install --no-build-isolation ."
    s.run(cmd)
    write_case(slug, s, title="CUDAExtension built where no GPU is visible and TORCH_CUDA_ARCH_LIST is unset",
               command=cmd, tools=s.versions(CUDA_13_0), outcome="failure", causes=["unsupported_arch"],
               key_lines=["arch_list[-1] += '+PTX'", "IndexError: list index out of range"],
               fix='Set TORCH_CUDA_ARCH_LIST to the target GPUs\' compute capabilities (e.g. "8.0;9.0") '
                   "when building without a visible GPU (Docker build, CI).",
               notes=("torch derives the arch list from the visible GPUs; with none it indexes an empty list. "
                      "Same fix as an arch list that misses the GPU."))


def cmake_nvcc130_arch60() -> None:
    slug = "cmake-cuda-architectures-60-nvcc-13-0"
    src = fresh_copy("cuda_cmake_project", "vector_add")
    s = Session(None, src)
    cmd = f"cmake -B build -DCMAKE_CUDA_COMPILER={CUDA_13_0}/bin/nvcc -DCMAKE_CUDA_ARCHITECTURES=60"
    s.run(cmd)
    write_case(slug, s, title="CMake CUDA project with CMAKE_CUDA_ARCHITECTURES=60 and nvcc 13.0",
               command=cmd, tools=s.versions(CUDA_13_0, torch=False,
                                             extra={"cmake": "cmake --version | head -1 | awk '{print $3}'"}),
               outcome="failure", causes=["unsupported_arch"],
               key_lines=["nvcc fatal   : Unsupported gpu architecture 'compute_60'"],
               fix="Set CMAKE_CUDA_ARCHITECTURES to 75 or newer for CUDA 13, or use CUDA 12.x for Pascal GPUs.")


CASES = [bare_nvcc130_sm50, bare_nvcc130_gencode60, bare_nvcc118_sm90a, bare_nvcc124_sm100, bare_nvcc124_compute120,
         torch_cu130_arch61_build_ext, torch_cu130_arch50_pip, torch_cu130_arch_sm86_unknown,
         torch_cu124_arch120_unknown, torch_cu130_minor_132_arch70, torch_jit_pascal_named,
         torch_no_gpu_no_arch_list, cmake_nvcc130_arch60]

if __name__ == "__main__":
    make_venvs()
    only = selected(sys.argv[1:])
    for case in CASES:
        if only is None or case.__name__ in only:
            print(case.__name__, file=sys.stderr)
            case()
