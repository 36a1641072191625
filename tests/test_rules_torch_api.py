"""Old extensions built against a torch that removed the APIs they use: the TH / THC headers, AT_CHECK,
the THC functions and types.

The lines are assembled from the compilers' own message formats (gcc, clang, nvcc's front end, MSVC),
with paths and file names of our own; the near-misses are the same formats naming something else, or
the same names in lines that are not errors.
"""

from __future__ import annotations

import pytest

from tests.conftest import analyse_text

OURS = {"torch-th-header-removed", "torch-at-check-removed", "torch-thc-api-removed"}


def _root(text: str):
    causes = analyse_text(text).report.root_causes
    return causes[0] if causes else None


def _build(line: str, command: str = "pip install --no-build-isolation .") -> str:
    return f"$ {command}\nbuilding 'ops._C' extension\n{line}\ncompilation terminated.\nerror: command '/usr/bin/g++' failed with exit code 1\n"


HEADER_LINES = [
    ("csrc/roi_align.cpp:2:10: fatal error: THC/THC.h: No such file or directory", "THC/THC.h"),
    ("src/cpu/dcn_v2_cpu.cpp:9:10: fatal error: TH/TH.h: No such file or directory", "TH/TH.h"),
    (
        "ops/nms/nms_kernel.cu:3:10: fatal error: THC/THCDeviceUtils.cuh: No such file or directory",
        "THC/THCDeviceUtils.cuh",
    ),
    ("src/lltm.cpp:4:10: fatal error: THCUNN/THCUNN.h: No such file or directory", "THCUNN/THCUNN.h"),
    ("src/corr.cpp:1:10: fatal error: THC/THCAtomics.cuh: Datei oder Verzeichnis nicht gefunden", "THC/THCAtomics.cuh"),
    ("致命错误：THC/THC.h：没有那个文件或目录", "THC/THC.h"),
    ("csrc/nms.cpp:3:10: fatal error: 'THC/THC.h' file not found", "THC/THC.h"),
    (
        "C:\\ops\\roi_pool_cuda.cpp(2): fatal error C1083: Cannot open include file: 'TH/TH.h': No such file or directory",
        "TH/TH.h",
    ),
    ('src/focal.cu(5): catastrophic error: cannot open source file "THC/THCNumerics.cuh"', "THC/THCNumerics.cuh"),
]


@pytest.mark.parametrize("line, header", HEADER_LINES)
def test_a_removed_th_header_is_this_cause_and_its_fix_names_it(line, header):
    root = _root(_build(line))
    assert root is not None and root.id == "torch_api_removed" and root.rule == "torch-th-header-removed"
    assert header in root.fix


AT_CHECK_LINES = [
    "src/deform_conv_cuda.cpp:66:3: error: ‘AT_CHECK’ was not declared in this scope",
    "src/deform_conv_cuda.cpp:417:3: error: 'AT_CHECK' was not declared in this scope; did you mean 'DCHECK'?",
    'src/iou3d_kernel.cu(12): error: identifier "AT_CHECK" is undefined',
    "csrc/nms.cpp:9:5: error: use of undeclared identifier 'AT_CHECK'",
    "src\\deform_pool_cuda.cpp(40): error C3861: 'AT_CHECK': identifier not found",
    "src/pool.h:40:3: error: there are no arguments to ‘AT_CHECK’ that depend on a template parameter, so a declaration of ‘AT_CHECK’ must be available [-fpermissive]",
]


@pytest.mark.parametrize("line", AT_CHECK_LINES)
def test_at_check_undeclared_is_this_cause_with_torch_check_as_the_fix(line):
    root = _root(_build(line))
    assert root is not None and root.id == "torch_api_removed" and root.rule == "torch-at-check-removed"
    assert "TORCH_CHECK" in root.fix


THC_API_LINES = [
    ('src/roi_align_kernel.cu(283): error: identifier "THCudaCheck" is undefined', "THCudaCheck"),
    ("src/nms.cpp:7:3: error: ‘THCudaCheck’ was not declared in this scope", "THCudaCheck"),
    ("src/dcn_v2_cuda.cu:12:8: error: ‘THCState’ does not name a type", "THCState"),
    ("src/nms.cpp:5:29: error: ‘class at::Context’ has no member named ‘getTHCState’", "getTHCState"),
    ('src/nms_kernel.cu(60): error: class "at::Context" has no member "getTHCState"', "getTHCState"),
    ("src/focal.cpp:4:24: error: ‘THCCeilDiv’ was not declared in this scope", "THCCeilDiv"),
    ('src/group.cu(136): error: identifier "THArgCheck" is undefined', "THArgCheck"),
    ("csrc\\nms.cpp(8): error C2065: 'THCudaMalloc': undeclared identifier", "THCudaMalloc"),
    ("csrc/nms.cpp:9:3: error: use of undeclared identifier 'THCudaFree'", "THCudaFree"),
    ("csrc/nms.cpp:5:3: error: unknown type name 'THCState'", "THCState"),
]


@pytest.mark.parametrize("line, api", THC_API_LINES)
def test_a_removed_thc_function_or_type_is_this_cause(line, api):
    root = _root(_build(line))
    assert root is not None and root.id == "torch_api_removed" and root.rule == "torch-thc-api-removed"
    assert api in root.fix


def test_the_fix_fills_the_torch_version_the_log_shows():
    text = '$ python -c "import torch; print(torch.__version__)"\n2.4.1+cu121\n' + _build(
        "csrc/roi_align.cpp:2:10: fatal error: THC/THC.h: No such file or directory"
    )
    root = _root(text)
    assert root is not None and root.id == "torch_api_removed"
    assert "torch 2.4.1+cu121" in root.fix


NEAR_MISSES = [
    # a generic missing header is someone else's cause
    "csrc/ops.cpp:2:10: fatal error: ops/kernels.h: No such file or directory",
    "csrc/ops.cpp:2:10: fatal error: THREADS/pool.h: No such file or directory",
    "csrc/ops.cu:2:10: fatal error: cuda_runtime.h: No such file or directory",
    # the deprecation warning and the macro notes of torch 1.2 to 1.4 are no failure
    "/venv/lib/python3.7/site-packages/torch/include/c10/util/Exception.h:339:40: warning: ‘void c10::detail::deprecated_AT_CHECK()’ is deprecated [-Wdeprecated-declarations]",
    "src/deform_conv_cuda.cpp:71:3: note: in expansion of macro ‘AT_CHECK’",
    # names that merely begin like the removed ones
    "src/ops.cpp:7:3: error: ‘THREAD_COUNT’ was not declared in this scope",
    "csrc/nms.cpp:9:5: error: ‘AT_CHECKED’ was not declared in this scope",
    'src/dcn_v2_cuda.cu(97): error: identifier "state" is undefined',
    # the names in source echoes and include flags
    "    2 | #include <THC/THC.h>",
    "  147 |     THCudaCheck(cudaGetLastError());",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_misses_are_not_taken_for_a_removed_torch_api(line):
    root = _root(_build(line))
    assert root is None or root.rule not in OURS


def test_a_th_header_missing_inside_a_build_of_torch_itself_is_not_this_cause():
    text = (
        "$ python setup.py install\n"
        "[ 61%] Building CXX object caffe2/CMakeFiles/torch.dir/__/aten/src/THC/THCGeneral.cpp.o\n"
        "/home/u/pytorch/aten/src/THC/THCGeneral.cpp:1:10: fatal error: THC/THCGeneral.hpp: No such file or directory\n"
        "compilation terminated.\n"
    )
    root = _root(text)
    assert root is None or root.rule not in OURS


def test_the_lua_torch_is_not_this_cause():
    text = (
        "$ luarocks make rocks/cunn-scm-1.rockspec\n"
        '/u/torch/extra/cunn/lib/THCUNN/ClassNLLCriterion.cu(126): error: identifier "THCRealTensor_checkGPU" is undefined\n'
    )
    root = _root(text)
    assert root is None or root.rule not in OURS
