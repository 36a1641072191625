"""Missing system pieces named by the forms the tools print: headers, CMake packages, versioned libc
symbols at link time, libstdc++ headers nvcc cannot read, an nvcc older than the -std asked for.

Each line is assembled from the tool's own format string (gcc/clang's missing-header error, CMake's
find_package messages, GNU ld's and gold's undefined-reference forms, nvcc's option errors) with paths
and names of our own; none is copied from a corpus log.
"""

from __future__ import annotations

import pytest

from tests.conftest import analyse_text


def _cause(text: str) -> str:
    causes = analyse_text(text).report.root_causes
    return causes[0].id if causes else "unknown"


def _rule_cause(text: str) -> str:
    """The cause the rules name (a near-miss must not fire the rule; the classifier may still guess)."""
    causes = [c for c in analyse_text(text).report.root_causes if c.engine == "rules"]
    return causes[0].id if causes else "unknown"


HEADER_FORMS = [
    ("src/m.c:1:10: fatal error: Python.h: No such file or directory", "missing_build_dependency"),
    (
        "/usr/include/python3.12/Python.h:12:10: fatal error: pyconfig.h: No such file or directory",
        "missing_build_dependency",
    ),
    ("src/m.c:1:10: fatal error: 'Python.h' file not found", "missing_build_dependency"),
    ("src/l.cpp:3:10: fatal error: lapacke.h: No such file or directory", "missing_build_dependency"),
    ("src/z.c:2:10: fatal error: zstd.h: No such file or directory", "missing_build_dependency"),
    ("src/omp.cpp:1:10: fatal error: 'omp.h' file not found", "missing_build_dependency"),
    # the CUDA toolkit's own headers and a package's vendored code keep their causes
    ("csrc/a.cu:2:10: fatal error: cublas_v2.h: No such file or directory", "cuda_toolkit_incomplete"),
    ("csrc/a.cu:2:10: fatal error: cute/tensor.hpp: No such file or directory", "missing_submodule"),
]


@pytest.mark.parametrize("line, cause", HEADER_FORMS)
def test_a_missing_header_names_who_should_provide_it(line, cause):
    text = f"$ pip install --no-build-isolation .\n{line}\ncompilation terminated.\nerror: command '/usr/bin/gcc' failed with exit code 1\n"
    assert _cause(text) == cause


def test_a_project_s_own_missing_header_is_not_called_a_system_library():
    text = "$ make\nsrc/main.c:4:10: fatal error: engine/config.h: No such file or directory\ncompilation terminated.\n"
    assert _rule_cause(text) != "missing_build_dependency"


def _cmake_error(body: str) -> str:
    return f"$ cmake -S . -B build\nCMake Error at CMakeLists.txt:7 (find_package):\n{body}\n-- Configuring incomplete, errors occurred!\n"


@pytest.mark.parametrize("package", ["Eigen3", "OpenCV", "nlohmann_json", "fmt"])
def test_cmake_config_not_found_is_a_missing_build_dependency(package):
    body = f'  Could not find a package configuration file provided by "{package}" with any\n  of the following names:'
    assert _cause(_cmake_error(body)) == "missing_build_dependency"


def test_cmake_torch_not_found_says_how_to_point_cmake_at_torch():
    body = '  Could not find a package configuration file provided by "Torch" with any of\n  the following names:'
    causes = analyse_text(_cmake_error(body)).report.root_causes
    assert causes and causes[0].id == "missing_build_dependency"
    assert "torch.utils.cmake_prefix_path" in causes[0].fix


def test_an_optional_package_cmake_did_not_find_is_no_cause():
    text = "$ cmake -S . -B build\n-- Could NOT find OpenMP_C (missing: OpenMP_C_FLAGS OpenMP_C_LIB_NAMES)\n-- Configuring done\n"
    assert _cause(text) == "unknown"


LINK_FORMS = [
    "/usr/bin/ld: lib/libsdk.so: undefined reference to `getrandom@GLIBC_2.25'",
    "/usr/bin/ld: lib/libsdk.so: undefined reference to `__libc_single_threaded@GLIBC_2.32'",
    "/usr/bin/ld: lib/libsdk.so: undefined reference to `std::__cxx11::basic_string<char>::_M_replace(unsigned long)@GLIBCXX_3.4.21'",
    "lib/libsdk.so: error: undefined reference to 'getrandom', version 'GLIBC_2.25'",
]


@pytest.mark.parametrize("line", LINK_FORMS)
def test_a_versioned_libc_symbol_undefined_at_link_time_is_a_too_old_libc(line):
    assert _cause(f"$ make\n{line}\ncollect2: error: ld returned 1 exit status\n") == "glibc_too_old"


def test_a_plain_undefined_reference_is_not_a_libc_version():
    text = (
        "$ make\n/usr/bin/ld: main.o: undefined reference to `sdk_init'\ncollect2: error: ld returned 1 exit status\n"
    )
    assert _rule_cause(text) != "glibc_too_old"


@pytest.mark.parametrize("gcc", ["11", "12", "11.2.0"])
def test_nvcc_failing_inside_libstdcxx_headers_is_the_host_compiler(gcc):
    line = f"/opt/gcc/include/c++/{gcc}/bits/std_function.h:435:145: error: parameter packs not expanded with '...':"
    causes = analyse_text(f"$ make\n{line}\nmake: *** [Makefile:3: k] Error 1\n").report.root_causes
    assert causes and causes[0].id == "unsupported_host_compiler"
    major = gcc.split(".")[0]
    assert f"gcc-$(( {major} - 1 ))" in causes[0].fix


def test_the_same_error_in_the_package_s_own_code_is_not_the_host_compiler():
    line = "csrc/pack.h:20:5: error: parameter packs not expanded with '...':"
    assert _rule_cause(f"$ make\n{line}\nmake: *** [Makefile:3: k] Error 1\n") != "unsupported_host_compiler"


def test_nvcc_too_old_for_the_std_is_cuda_too_old_outside_torch():
    text = "$ make\nnvcc fatal   : Value 'c++20' is not defined for option 'std'\nmake: *** [Makefile:3: k] Error 1\n"
    assert _cause(text) == "cuda_too_old"


def test_inside_a_torch_build_the_std_nvcc_lacks_is_torch_s():
    text = (
        "$ pip install --no-build-isolation .\n"
        "[1/2] /usr/local/cuda-11.8/bin/nvcc -I/venv/lib/python3.11/site-packages/torch/include -c a.cu -std=c++20\n"
        "nvcc fatal   : Value 'c++20' is not defined for option 'std'\n"
    )
    assert _cause(text) == "cuda_version_mismatch"


CONDA_FORMS = [
    "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - cudatoolkit=13.5\n",
    "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - nvidia/label/cuda-99.1::cuda-nvcc\n",
    "ResolvePackageNotFound: \n  - libgomp==11.2.0=h1234567_1\n",
]


@pytest.mark.parametrize("text", CONDA_FORMS)
def test_conda_finding_no_package_is_no_matching_distribution(text):
    assert _cause(f"$ conda install -y pkg\nSolving environment: failed\n\n{text}") == "no_matching_distribution"


def test_conda_removing_a_package_that_is_not_there_is_not_a_missing_release():
    text = "$ conda remove -y numpy\n\nPackagesNotFoundError: The following packages are missing from the target environment:\n  - numpy\n"
    assert _rule_cause(text) != "no_matching_distribution"


def test_conda_s_fix_names_the_package_without_its_channel():
    text = CONDA_FORMS[1]
    causes = analyse_text(f"$ conda install -y cuda-nvcc\n{text}").report.root_causes
    assert causes and 'conda search "cuda-nvcc"' in causes[0].fix


def _torch_job(n: int, failing: bool) -> str:
    """One CI job of a torch extension built by pip: its traceback names torch's cpp_extension."""
    job = (
        f"$ pip install -v --no-build-isolation ./ext{n % 3}\n"
        f"  Building wheel for ext{n % 3} (setup.py): started\n"
        f"[1/2] /usr/local/cuda-11.8/bin/nvcc -I/venv/lib/python3.11/site-packages/torch/include -c k{n}.cu\n"
        "  Traceback (most recent call last):\n"
        '    File "/venv/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 2107, in _run_ninja_build\n'
    )
    if failing:
        job += "nvcc fatal   : Value 'c++20' is not defined for option 'std'\n"
    return job + f"  error: command '/usr/local/cuda-11.8/bin/nvcc' failed with exit code {1 + n % 2}\n"


@pytest.mark.parametrize("jobs", [1, 60])
def test_an_nvcc_std_error_in_a_torch_build_stays_torch_s_in_a_long_log(jobs):
    """Torch's own flags ask for the standard: in the 60th job of a CI log the torch lines repeat
    those of the first jobs and are only counted, and the rule's not_context must still see them."""
    text = "".join(_torch_job(n, failing=n == jobs - 1) for n in range(jobs))
    assert _rule_cause(text) == "cuda_version_mismatch"
    make = "$ make\nnvcc -std=c++20 -c k.cu\nnvcc fatal   : Value 'c++20' is not defined for option 'std'\nmake: *** [Makefile:3: k.o] Error 1\n"
    assert _rule_cause(make) == "cuda_too_old"
