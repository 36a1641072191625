#!/usr/bin/env python3
"""Capture builds whose CUDA toolkit does not match the CUDA torch was built with, plus the
neighbouring outcomes: a minor-version mismatch that builds, a matching control, CUDA_HOME without
nvcc, and flash-attn's metadata step run in an isolated environment without torch.

Needs the toolkits from assemble_toolkits.sh and the venvs from _capture.make_venvs():
  torch 2.14.1+cu130 / 2.5.1+cu124 against nvcc 12.4, 11.8 and 13.2 (13.2 vs cu130 is a minor
  mismatch: torch only warns, and the build succeeds; it is kept as a near miss).

Usage: TOOLCHAINS=/path/to/scratch python3 corpus/capture/cuda_mismatch.py [case_function ...]
Run it under `nice`; builds use MAX_JOBS=2.
"""
from __future__ import annotations

import shutil
import sys

from _capture import (CUDA_11_8, CUDA_12_4, CUDA_13_2, FLASH_ATTN, FLASH_ATTN_SDIST, SRC, VENV_CU124,
                      VENV_CU130, Session, clear_jit_cache, fetch_flash_attn_sdist, fresh_copy, fresh_sdist,
                      make_venvs, selected, write_case)

TORCH_VERSION = 'python -c "import torch; print(torch.__version__, torch.version.cuda)"'

FIX_CU130 = ("Point CUDA_HOME (and PATH) at a CUDA 13.x toolkit to match torch 2.14.1+cu130, "
             "or install a torch build for the toolkit's CUDA.")
FIX_CU124 = ("Point CUDA_HOME (and PATH) at a CUDA 12.x toolkit to match torch 2.5.1+cu124, "
             "or install a torch build for CUDA 11.8.")


def tiny_setup_build_ext_cuda124() -> None:
    slug = "tiny-cuda-ext-setup-build-ext-nvcc-12-4-torch-cu130"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    s.run(TORCH_VERSION)
    s.run(f"{CUDA_12_4}/bin/nvcc --version")
    cmd = f"CUDA_HOME={CUDA_12_4} python setup.py build_ext --inplace"
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension built with nvcc 12.4 against torch 2.14.1+cu130 (setup.py build_ext)",
               command=cmd, tools=s.versions(CUDA_12_4), outcome="failure",
               causes=["cuda_version_mismatch"],
               key_lines=["mismatches the version that was used to compilePyTorch (%s)", "'12.4', '13.0')"],
               fix=FIX_CU130,
               notes="torch 2.14 raises RuntimeError with the unformatted message and its arguments as a tuple.")


def tiny_pip_cuda118() -> None:
    slug = "tiny-cuda-ext-pip-no-build-isolation-nvcc-11-8-torch-cu130"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    s.export("CUDA_HOME", str(CUDA_11_8))
    s.export("PATH", f"{CUDA_11_8}/bin:{s.env['PATH']}", shown="$CUDA_HOME/bin:$PATH")
    s.run("nvcc --version")
    cmd = "pip install --no-build-isolation ."
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension pip-installed with nvcc 11.8 on PATH against torch 2.14.1+cu130",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["cuda_version_mismatch"],
               key_lines=["The detected CUDA version (%s) mismatches the version that was used to compilePyTorch",
                          "'11.8', '13.0')"],
               fix=FIX_CU130)


def flash_attn_pip_cuda124() -> None:
    slug = "flash-attn-2-8-3-pip-nvcc-12-4-torch-cu130"
    s = Session(VENV_CU130, SRC)
    cmd = f"MAX_JOBS=2 CUDA_HOME={CUDA_12_4} pip install --no-build-isolation {FLASH_ATTN}"
    s.run(cmd)
    write_case(slug, s, title="flash-attn 2.8.3.post2 sdist from the index, nvcc 12.4 against torch 2.14.1+cu130",
               command=cmd, tools=s.versions(CUDA_12_4), outcome="failure",
               causes=["cuda_version_mismatch"],
               key_lines=["mismatches the version that was used to compilePyTorch", "'12.4', '13.0')"],
               fix=FIX_CU130,
               notes="flash-attn first tries to download a prebuilt wheel (the download fails here), then builds.")


def tiny_develop_cuda118_cu124() -> None:
    slug = "tiny-cuda-ext-setup-develop-nvcc-11-8-torch-cu124"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU124, src)
    s.run(TORCH_VERSION)
    cmd = f"CUDA_HOME={CUDA_11_8} python setup.py develop"
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension `setup.py develop` with nvcc 11.8 against torch 2.5.1+cu124",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["cuda_version_mismatch"],
               key_lines=["The detected CUDA version (11.8) mismatches the version that was used to compile",
                          "PyTorch (12.4). Please make sure to use the same CUDA versions."],
               fix=FIX_CU124,
               notes="torch 2.5 formats the message over two lines.")


def flash_attn_setup_install_cuda118_cu124() -> None:
    slug = "flash-attn-2-8-3-setup-install-nvcc-11-8-torch-cu124"
    src = fresh_sdist(FLASH_ATTN_SDIST)
    s = Session(VENV_CU124, src)
    s.export("CUDA_HOME", str(CUDA_11_8))
    cmd = "MAX_JOBS=2 python setup.py install"
    s.run(cmd)
    write_case(slug, s, title="flash-attn 2.8.3.post2 source tree, `setup.py install` with nvcc 11.8 against torch 2.5.1+cu124",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["cuda_version_mismatch"],
               key_lines=["The detected CUDA version (11.8) mismatches the version that was used to compile",
                          "PyTorch (12.4)"],
               fix=FIX_CU124)


def jit_load_cuda118_cu130() -> None:
    slug = "tiny-cuda-ext-jit-load-nvcc-11-8-torch-cu130"
    src = fresh_copy("tiny_cuda_ext")
    clear_jit_cache()
    s = Session(VENV_CU130, src)
    s.run(TORCH_VERSION)
    s.run(f"{CUDA_11_8}/bin/nvcc --version")
    cmd = f"CUDA_HOME={CUDA_11_8} TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 python jit_build.py"
    s.run(cmd)
    write_case(slug, s, title="torch.utils.cpp_extension.load() with nvcc 11.8 against torch 2.14.1+cu130",
               command=cmd, tools=s.versions(CUDA_11_8), outcome="failure",
               causes=["cuda_version_mismatch"],
               key_lines=["nvcc fatal   : Value 'c++20' is not defined for option 'std'",
                          "2.14.1+cu130 13.0"],
               fix=FIX_CU130,
               notes=("load() does not run torch's CUDA version check, so the mismatch shows up as nvcc 11.8 "
                      "rejecting the -std=c++20 that torch 2.14 passes; only the versions printed before tell why."))


def minor_mismatch_cuda132_succeeds() -> None:
    slug = "tiny-cuda-ext-nvcc-13-2-torch-cu130-minor-mismatch-ok"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    cmd = f"CUDA_HOME={CUDA_13_2} TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 python setup.py build_ext --inplace"
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension built with nvcc 13.2 against torch 2.14.1+cu130 (minor mismatch, builds)",
               command=cmd, tools=s.versions(CUDA_13_2), outcome="success", causes=[],
               key_lines=[], must_contain=["has a minor version mismatch with the version that was used to compile PyTorch (13.0)"],
               notes=("Near miss: torch warns that 13.2 differs from 13.0 in the minor version only; the build "
                      "succeeds, so the warning must not be reported as a cause."))


def matching_cuda124_cu124_succeeds() -> None:
    slug = "tiny-cuda-ext-nvcc-12-4-torch-cu124-builds"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU124, src)
    s.run(TORCH_VERSION)
    cmd = f"CUDA_HOME={CUDA_12_4} TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=2 python setup.py build_ext --inplace"
    s.run(cmd)
    write_case(slug, s, title="tiny CUDAExtension built with nvcc 12.4 against torch 2.5.1+cu124 (matching, builds)",
               command=cmd, tools=s.versions(CUDA_12_4), outcome="success", causes=[],
               key_lines=[], must_contain=["There are no g++ version bounds defined for CUDA version 12.4"],
               notes="Control: toolkit and torch agree on CUDA 12; torch's missing-bounds warning is harmless.")


def cuda_home_wrong_path() -> None:
    slug = "tiny-cuda-ext-cuda-home-without-nvcc"
    src = fresh_copy("tiny_cuda_ext")
    s = Session(VENV_CU130, src)
    s.run("ls -d /usr/local/cuda*")
    cmd = "CUDA_HOME=/usr/local/cuda-12.8 python setup.py build_ext --inplace"
    s.run(cmd)
    write_case(slug, s, title="CUDA_HOME=/usr/local/cuda-12.8, a toolkit that is not installed (torch 2.14.1+cu130)",
               command=cmd, tools=s.versions(None), outcome="failure", causes=["cuda_home_missing"],
               key_lines=["error: nvcc not found at '/usr/local/cuda-12.8/bin/nvcc'. Ensure CUDA path '/usr/local/cuda-12.8' is correct."],
               fix="Point CUDA_HOME at an installed toolkit that matches torch (here /usr/local/cuda-13.0 for cu130), or install one.")


def flash_attn_download_isolated() -> None:
    slug = "flash-attn-pip-download-sdist-isolated-no-torch"
    work = SRC / "downloads"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    s = Session(VENV_CU130, work)
    cmd = "pip download --no-deps --no-binary :all: flash-attn"
    s.run(cmd)
    write_case(slug, s, title="`pip download --no-binary :all: flash-attn` in a venv with torch: metadata is prepared in an isolated env without it",
               command=cmd, tools=s.versions(None), outcome="failure",
               causes=["build_isolation_missing_torch"],
               key_lines=["Getting requirements to build wheel did not run successfully.",
                          "ModuleNotFoundError: No module named 'torch'"],
               fix="Add --no-build-isolation (torch is installed in this venv): "
                   "pip download --no-deps --no-binary :all: --no-build-isolation flash-attn")


CASES = [tiny_setup_build_ext_cuda124, tiny_pip_cuda118, flash_attn_pip_cuda124, tiny_develop_cuda118_cu124,
         flash_attn_setup_install_cuda118_cu124, jit_load_cuda118_cu130, minor_mismatch_cuda132_succeeds,
         matching_cuda124_cu124_succeeds, cuda_home_wrong_path,
         flash_attn_download_isolated]

if __name__ == "__main__":
    make_venvs()
    fetch_flash_attn_sdist()
    only = selected(sys.argv[1:])
    for case in CASES:
        if only is None or case.__name__ in only:
            print(case.__name__, file=sys.stderr)
            case()
