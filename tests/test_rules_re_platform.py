"""The environment and platform rules match the kind of line a tool prints, in each form it takes,
and keep apart the causes that share words (a 404 on an index page vs a missing file, a legacy
setup.py vs an isolated build, a missing nvcc vs a missing gcc, a harmless git message)."""

from __future__ import annotations

import pytest

from buildlog.knowledge.artefact import bundled
from tests.conftest import analyse_text

CAUSE_OF = {r.id: r.cause for r in bundled().rules}


def _causes(text: str) -> set[str]:
    """The causes the rules found (not the classifier's guess, which near-misses may still get)."""
    return {CAUSE_OF[r] for r in analyse_text(text).fired if CAUSE_OF.get(r)}


def _top(text: str) -> tuple[str, str]:
    causes = analyse_text(text).report.root_causes
    return (causes[0].id, causes[0].fix) if causes else ("", "")


@pytest.mark.parametrize("open_quote, close_quote", [("`", "'"), ("'", "'"), ("", "'"), ("\u2018", "\u2019")])
@pytest.mark.parametrize("symbol, cause_version", [("GLIBC_2.34", "2.34"), ("GLIBCXX_3.4.30", "GLIBCXX_3.4.30")])
def test_the_loader_message_in_each_quote_style_names_the_symbol(open_quote, close_quote, symbol, cause_version):
    lib = "libc.so.6" if symbol.startswith("GLIBC_") else "libstdc++.so.6"
    log = (
        "$ python -c 'import fastkern'\n"
        f"ImportError: /lib/x86_64-linux-gnu/{lib}: version {open_quote}{symbol}{close_quote} not found "
        "(required by /venv/lib/python3.11/site-packages/fastkern/_C.so)\n"
    )
    cause, fix = _top(log)
    assert cause == "glibc_too_old" and cause_version in fix


def test_a_loader_message_wrapped_by_the_terminal_is_still_read():
    log = "ImportError: /lib64/libm.so.6: version `GLIBC_2.29'\n not found (required by /env/lib/ext/_C.so)\n"
    assert _top(log)[0] == "glibc_too_old"


def test_a_weak_version_warning_is_no_cause():
    log = "$ ldd -v ./tool\n./tool: /lib64/libc.so.6: weak version `GLIBC_2.34' not found (required by ./tool)\n"
    assert "glibc_too_old" not in _causes(log)


NETWORK_LINES = [
    "requests.exceptions.ConnectionError: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))",
    "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
    "  Caused by: Request failed after 3 retries",
    "httpx.ConnectError: [Errno 111] Connection refused",
    "curl: (7) Failed to connect to github.com port 443 after 3 ms: Couldn't connect to server",
    "curl: (28) Operation timed out after 300000 milliseconds with 0 out of 0 bytes received",
    "ERROR: HTTP error 404 while getting https://github.com/org/pkg/releases/download/v1/pkg-1.0-cp311-cp311-linux_x86_64.whl",
    "  Caused by: HTTP status server error (503 Service Unavailable) for url (https://files.example/pkg.whl)",
]


@pytest.mark.parametrize("line", NETWORK_LINES)
def test_each_client_s_network_failure_is_a_network_failure(line):
    assert _top(f"$ pip install fastkern\n{line}\n")[0] == "network_failure"


def test_a_precompiled_download_that_falls_back_to_a_source_build_is_not_the_cause():
    log = (
        "  Guessing wheel URL:  https://github.com/org/pkg/releases/download/v1/pkg-1.0-cp311-linux_x86_64.whl\n"
        "  Precompiled wheel not found. Building from source...\n"
        "  urllib.error.URLError: <urlopen error [Errno -2] Name or service not known>\n"
        "  /usr/local/cuda/bin/nvcc fatal   : Unsupported gpu architecture 'compute_120'\n"
    )
    assert "network_failure" not in _causes(log)


def test_an_index_page_that_answers_404_leaves_no_matching_distribution_in_front():
    log = (
        "$ pip install fastkern==9.9 -f https://wheels.example/cu121/torch2.3/index.html\n"
        "WARNING: Could not fetch URL https://wheels.example/cu121/torch2.3/index.html: 404 Client Error: "
        "Not Found for url: https://wheels.example/cu121/torch2.3/index.html - skipping\n"
        "ERROR: Could not find a version that satisfies the requirement fastkern==9.9 (from versions: none)\n"
        "ERROR: No matching distribution found for fastkern==9.9\n"
    )
    assert _top(log)[0] == "no_matching_distribution"


def test_an_authentication_answer_is_no_missing_file():
    assert "network_failure" not in _causes("$ wget https://files.example/a.whl\nERROR 401: Unauthorized.\n")


@pytest.mark.parametrize(
    "line",
    [
        "      error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory",
        "/bin/sh: 1: g++: not found",
        "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
        "  ERROR: Unknown compiler(s): [['cc'], ['gcc'], ['clang']]",
    ],
)
def test_a_missing_c_compiler_is_named_in_every_tool_s_words(line):
    assert _top(f"$ pip install fastkern\n{line}\n")[0] == "host_compiler_missing"


def test_a_missing_nvcc_is_no_missing_host_compiler():
    assert "host_compiler_missing" not in _causes("$ make\n/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found\n")


def test_a_missing_compiler_on_windows_gets_the_build_tools_not_apt():
    log = (
        "PS C:\\src\\pkg> python run.py\ntorch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.\n"
    )
    cause, fix = _top(log)
    assert cause == "host_compiler_missing" and "apt" not in fix and "BuildTools" in fix


def test_not_a_git_repository_is_a_missing_submodule_only_where_submodules_were_fetched():
    message = "fatal: not a git repository (or any of the parent directories): .git\n"
    assert "missing_submodule" not in _causes("$ pip install flash-attn\n      " + message + "error: failed\n")
    assert _top("$ git submodule update --init --recursive\n" + message)[0] == "missing_submodule"


@pytest.mark.parametrize("folder", ["third_party/cutlass", "vendor/llama.cpp", "external/googletest", "deps/fmt"])
def test_an_empty_vendored_folder_named_by_cmake_is_a_missing_submodule(folder):
    log = f"CMake Error at CMakeLists.txt:9 (add_subdirectory):\n  The source directory\n\n    /src/pkg/{folder}\n\n  does not contain a CMakeLists.txt file.\n"
    assert _top(log)[0] == "missing_submodule"


def _cmake_missing_source(path: str, where: str = "CMakeLists.txt:12 (add_library)") -> str:
    return (
        f"-- Configuring done\nCMake Error at {where}:\n  Cannot find source file:\n\n    {path}\n\n"
        "  Tried extensions .c .C .c++ .cc .cpp .cxx .cu .mpp .m .M .mm .ixx .cppm .h\n\n\n"
        f"CMake Error at {where}:\n  No SOURCES given to target: kern\n"
    )


@pytest.mark.parametrize(
    "path, where",
    [
        ("third_party/pybind11/src/detail.cpp", "CMakeLists.txt:12 (add_library)"),
        ("/home/u/src/kern/3rdparty/cutlass/tools/util/src/device.cu", "CMakeLists.txt:40 (add_library)"),
        ("/work/kern/csrc/cutlass/examples/common/helper.cu", "CMakeLists.txt:7 (target_sources)"),
        ("zstd/lib/common/zstd_common.c", "deps/zstd/CMakeLists.txt:3 (add_library)"),
        ("/opt/build/app/src/whereami/src/whereami.c", "src/CMakeLists.txt:200 (add_library)"),
    ],
)
def test_a_source_cmake_cannot_find_in_a_vendored_folder_is_a_missing_submodule(path, where):
    cause, fix = _top(_cmake_missing_source(path, where))
    assert cause == "missing_submodule" and "git submodule update --init --recursive" in fix and path in fix


@pytest.mark.parametrize(
    "path",
    ["src/kernels/fused_adam.cu", "/home/u/washingtondc/src/washingtondc/washingtondc.hpp", "csrc/core/include/ops.h"],
)
def test_a_missing_source_of_the_project_s_own_tree_is_no_missing_submodule(path):
    assert "missing_submodule" not in _causes(_cmake_missing_source(path))


TORCH_MISSING = "      ModuleNotFoundError: No module named 'torch'\n"


@pytest.mark.parametrize(
    "phase, expected",
    [
        ("  Preparing metadata (setup.py) ... error\n", "missing_build_dependency"),
        ("  × python setup.py egg_info did not run successfully.\n", "missing_build_dependency"),
        ("  Getting requirements to build wheel ... error\n", "build_isolation_missing_torch"),
        ("  Preparing editable metadata (pyproject.toml) ... error\n", "build_isolation_missing_torch"),
    ],
)
def test_a_legacy_setup_py_is_no_isolated_build(phase, expected):
    assert _top("$ pip install fastkern\n" + phase + TORCH_MISSING)[0] == expected


def test_the_isolated_environment_s_own_torch_without_cuda_is_build_isolation():
    frame = '  File "{root}\\Lib\\site-packages\\torch\\utils\\cpp_extension.py", line 2416, in _join_cuda_home\n'
    error = "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    isolated = frame.format(root="C:\\Users\\u\\AppData\\Local\\Temp\\pip-build-env-abc123\\overlay")
    own = frame.format(root="C:\\Users\\u\\venv")
    assert _top("PS C:\\src> pip install -e .\n" + isolated + error)[0] == "build_isolation_missing_torch"
    assert "build_isolation_missing_torch" not in _causes("PS C:\\src> pip install -e .\n" + own + error)


def test_cmake_s_unsuitable_cuda_version_is_cuda_too_old_and_other_packages_are_not():
    cuda = '  Could NOT find CUDAToolkit: Found unsuitable version "11.5.119", but required is at least "11.8" (found /usr/local/cuda/include)\n'
    python = '  Could NOT find Python3: Found unsuitable version "3.8.10", but required is at least "3.9" (found /usr/bin/python3)\n'
    cause, fix = _top("$ cmake -B build\n" + cuda)
    assert cause == "cuda_too_old" and "11.8" in fix
    assert "cuda_too_old" not in _causes("$ cmake -B build\n" + python)


def test_docker_without_the_gpu_runtime_is_no_gpu_visible():
    log = '$ docker run --gpus all img\ndocker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    assert _top(log)[0] == "no_gpu_visible"


@pytest.mark.parametrize(
    "line",
    [
        "xcrun: error: invalid active developer path (/Library/Developer/CommandLineTools), missing xcrun at: "
        "/Library/Developer/CommandLineTools/usr/bin/xcrun",
        "C:\\Python311\\include\\pyconfig.h(59): fatal error C1083: Cannot open include file: 'io.h': No such file or directory",
        "LINK : fatal error LNK1104: cannot open file 'kernel32.lib'",
    ],
)
def test_a_compiler_without_its_system_headers_or_tools_is_a_missing_host_compiler(line):
    assert _top(f"$ pip install fastkern\n{line}\n")[0] == "host_compiler_missing"


def test_a_missing_cuda_header_on_windows_stays_a_toolkit_problem():
    line = "csrc\\ops.cu(3): fatal error C1083: Cannot open include file: 'cuda_runtime.h': No such file or directory"
    assert "host_compiler_missing" not in _causes(f"PS C:\\src> pip install .\n{line}\n")


def _root(text: str):
    causes = analyse_text(text).report.root_causes
    return causes[0] if causes else None


@pytest.mark.parametrize(
    "line",
    [
        "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'",
        "  = note: LINK : fatal error LNK1181: cannot open input file 'cublasLt.lib'",
        "Error\t12\terror LNK1181: cannot open input file 'curand.lib'",
    ],
)
def test_msvc_s_missing_cuda_import_library_is_a_toolkit_problem_said_with_less_certainty(line):
    root = _root(f"PS C:\\src> python setup.py build_ext\n{line}\n")
    linux = _root("$ python setup.py build_ext\n/usr/bin/ld: cannot find -lcudart: No such file or directory\n")
    assert root is not None and linux is not None
    assert root.id == linux.id == "cuda_toolkit_incomplete"
    assert root.confidence < 0.75 <= linux.confidence
    assert "Additional Library Directories" in root.fix and "lib64/stubs" not in root.fix


def test_msvc_s_missing_project_library_is_no_cuda_library():
    text = "PS C:\\src> cargo build --features cuda\n  = note: LINK : fatal error LNK1181: cannot open input file 'fastkerncuda.lib'\n"
    assert "cuda_toolkit_incomplete" not in _causes(text)


def test_a_wheel_for_another_python_is_no_matching_distribution_and_names_the_file():
    wheel = "fastkern-1.0-cp39-cp39-win_amd64.whl"
    cause, fix = _top(
        f"PS C:\\src> pip install .\\{wheel}\nERROR: {wheel} is not a supported wheel on this platform.\n"
    )
    assert cause == "no_matching_distribution" and wheel in fix
