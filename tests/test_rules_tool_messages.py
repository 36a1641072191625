"""The rules know the tools' own messages: CMake's CUDA support and generators, pip's Requires-Python
check, torch's extension builder, nvcc's host-compiler check, conda's virtual packages, poetry's solver
and uv's installer.

Each line is assembled from the tool's format string (its source, or its binary's strings), with versions,
paths and names of our own, never copied from a corpus log; each kind has a near miss that must not be
taken for it.
"""

from __future__ import annotations

import pytest

from buildlog.knowledge.artefact import bundled
from tests.conftest import analyse_text

CAUSE_OF = {r.id: r.cause for r in bundled().rules}


def _top(text: str) -> str:
    causes = analyse_text(text).report.root_causes
    return causes[0].id if causes else "unknown"


def _rule_causes(text: str) -> set[str]:
    """The causes the rules found (not the classifier's guess)."""
    return {CAUSE_OF[r] for r in analyse_text(text).fired if CAUSE_OF.get(r)}


CMAKE = "$ cmake -S . -B out -G Ninja\n-- The CXX compiler identification is GNU 13.3.0\n"

# cmGeneratorTarget's "native" check; CMakeDetermineCUDACompiler.cmake's CUDACXX check, its default
# architecture detection with no compiler output, CUDAToolkit_ROOT checks (also FindCUDAToolkit's);
# cmGlobalGenerator's compiler path and build program checks; cmCMakeMinimumRequired.
CMAKE_FORMS = [
    (
        'CMake Error in src/CMakeLists.txt:\n  CUDA_ARCHITECTURES is set to "native", but no GPU was detected.',
        "no_gpu_visible",
    ),
    (
        "CMake Error at /opt/cmake/share/cmake-3.30/Modules/CMakeDetermineCUDACompiler.cmake:19 (message):\n"
        "  Could not find compiler set in environment variable CUDACXX:\n\n  /opt/nvidia/cuda-12.6/bin/nvcc.\n",
        "cuda_home_missing",
    ),
    (
        "-- The CUDA compiler identification is unknown\nCMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineCUDACompiler.cmake:270 (message):\n"
        "  Failed to detect a default CUDA architecture.\n\n\n\n  Compiler output:\n\nCall Stack (most recent call first):\n  CMakeLists.txt:4 (project)",
        "cuda_home_missing",
    ),
    (
        "CMake Error at CMakeLists.txt:2 (project):\n  The CMAKE_CUDA_COMPILER:\n\n    /opt/cuda/bin/nvcc\n\n  is not a full path to an existing compiler tool.",
        "cuda_home_missing",
    ),
    (
        "  Could not find nvcc executable in path specified by\n  CUDAToolkit_ROOT=/usr/local/cuda-11.7",
        "cuda_home_missing",
    ),
    (
        "  Could not find nvcc executable in path specified by environment variable\n  CUDAToolkit_ROOT=/sw/cuda/12.2",
        "cuda_home_missing",
    ),
    (
        'CMake Error: CMake was unable to find a build program corresponding to "Ninja Multi-Config".  CMAKE_MAKE_PROGRAM is not set.  '
        "You probably need to select a different build tool.\nCMake Error: CMAKE_C_COMPILER not set, after EnableLanguage\n"
        "CMake Error: CMAKE_CXX_COMPILER not set, after EnableLanguage",
        "missing_build_dependency",
    ),
    (
        "CMake Error at third_party/kernels/CMakeLists.txt:1 (cmake_minimum_required):\n  CMake 3.27.4 or higher is required.  You are running version 3.22.1",
        "missing_build_dependency",
    ),
]


@pytest.mark.parametrize("text, cause", CMAKE_FORMS)
def test_cmake_s_own_messages(text, cause):
    assert _top(CMAKE + text + "\n-- Configuring incomplete, errors occurred!\n") == cause


def test_an_architecture_cmake_could_not_detect_from_a_compiler_that_ran_is_not_a_missing_nvcc():
    text = (
        CMAKE + "-- The CUDA compiler identification is unknown\n"
        "  Failed to detect a default CUDA architecture.\n\n  Compiler output:\n\n"
        "  /usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 13 are not supported!\n"
    )
    assert "cuda_home_missing" not in _rule_causes(text)
    assert _top(text) == "unsupported_host_compiler"


def test_a_missing_build_program_is_not_a_missing_compiler():
    text = (
        CMAKE
        + 'CMake Error: CMake was unable to find a build program corresponding to "Unix Makefiles".  CMAKE_MAKE_PROGRAM is not set.\n'
    )
    text += "CMake Error: CMAKE_CXX_COMPILER not set, after EnableLanguage\n"
    assert _rule_causes(text) == {"missing_build_dependency"}


def test_nmake_comes_with_the_compiler_so_it_is_left_to_the_compiler_rules():
    text = (
        CMAKE
        + 'CMake Error: CMake was unable to find a build program corresponding to "NMake Makefiles".  CMAKE_MAKE_PROGRAM is not set.\n'
    )
    assert "missing_build_dependency" not in _rule_causes(text)


def test_cmake_s_deprecation_of_an_old_minimum_is_no_failure():
    text = CMAKE + (
        "CMake Deprecation Warning at CMakeLists.txt:1 (cmake_minimum_required):\n"
        "  Compatibility with CMake < 3.10 will be removed from a future version of\n  CMake.\n-- Configuring done (0.4s)\n"
    )
    assert _rule_causes(text) == set()


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Package 'tiny-attn' requires a different Python: 3.9.18 not in '>=3.10'",
        "ERROR: Package 'kern' requires a different Python: 3.13.0rc2 not in '<3.13,>=3.9'",
    ],
)
def test_pip_s_requires_python_check(line):
    assert _top(f"$ pip install ./tiny-attn\nProcessing ./tiny-attn\n{line}\n") == "no_matching_distribution"


def test_pip_s_list_of_versions_it_skipped_for_python_is_not_the_requires_python_error():
    text = "$ pip install numpy\nERROR: Ignored the following versions that require a different python version: 2.1.0 Requires-Python >=3.10\n"
    assert "pip-requires-different-python" not in analyse_text(text).fired


# uv's installer; libmamba's problems tree (a missing spec, conflicting specs); poetry's solver, `poetry add` and its installer's chooser.
INSTALLER_FORMS = [
    (
        "$ uv sync --frozen\nerror: Distribution `fastkern==1.4.0 @ registry+https://index.example/whl/cu128` can't be installed "
        "because it doesn't have a source distribution or wheel for the current platform",
        "no_matching_distribution",
    ),
    (
        "$ uv add fastkern\nhint: You're on macOS (`macosx_14_0_arm64`), but `fastkern` (v1.4.0) only has wheels for the following "
        "platforms: `manylinux_2_28_x86_64`, `win_amd64`",
        "no_matching_distribution",
    ),
    (
        "$ mamba install -c conda-forge cuda-toolkit=13.9\nerror    libmamba Could not solve for environment specs\n"
        "    The following package could not be installed\n    └─ cuda-toolkit =13.9 * does not exist (perhaps a typo or a missing channel).",
        "no_matching_distribution",
    ),
    (
        "$ conda install pytorch-cuda=12.6 torchaudio=2.3.1 -c pytorch -c nvidia\n\nLibMambaUnsatisfiableError: Encountered problems "
        "while solving:\n  - package torchaudio-2.3.1-py312_cu121 requires pytorch-cuda 12.1.*, but none of the providers can be installed",
        "dependency_conflict",
    ),
    (
        "$ micromamba create -n seg python=3.14 pytorch=2.5.1\nerror    libmamba Could not solve for environment specs\n"
        "    The following packages are incompatible\n    ├─ python =3.14 * is requested and can be installed;\n"
        "    └─ pytorch =2.5.1 * is not installable because there are no viable options\n"
        "       ├─ pytorch 2.5.1 would require\n       │  └─ python_abi =3.12 *_cp312, which conflicts with any installable versions previously reported;",
        "dependency_conflict",
    ),
    (
        "$ poetry lock\nBecause fastkern (1.4.0) depends on torch (2.7.1+cu128) which doesn't match any versions, fastkern is forbidden.\n"
        "So, because app depends on fastkern (1.4.0), version solving failed.",
        "no_matching_distribution",
    ),
    (
        "$ poetry add 'fastkern==9.1'\n\nCould not find a matching version of package fastkern",
        "no_matching_distribution",
    ),
    (
        "$ poetry install\n  - Installing torch (2.4.0+cu121)\n\n  RuntimeError\n\n  Unable to find installation candidates for torch (2.4.0+cu121)",
        "no_matching_distribution",
    ),
]


@pytest.mark.parametrize("text, cause", INSTALLER_FORMS)
def test_installers_own_messages(text, cause):
    assert _top(text + "\n") == cause


def test_uv_s_no_build_refusal_is_not_a_missing_platform_wheel():
    text = (
        "$ uv sync --no-build-package numpy\nerror: Distribution `numpy==2.0.2 @ registry+https://index.example/simple` "
        "can't be installed because it is marked as `--no-build` but has no binary distribution\n"
    )
    assert "uv-no-wheel-for-platform" not in analyse_text(text).fired


def test_a_missing_dependency_deep_in_libmamba_s_tree_is_not_taken_for_the_requested_package():
    text = (
        "$ mamba install blas-devel\nCould not solve for environment specs\nThe following packages are incompatible\n"
        "└─ blas-devel 3.9.0 is not installable because there are no viable options\n"
        "   ├─ blas-devel 3.9.0 would require\n   │  └─ mkl 2019.1.* , which does not exist (perhaps a missing channel);\n"
        "   └─ blas-devel 3.9.0 would require\n      └─ blas 2.5 blis, which can be installed;\n"
    )
    assert "libmamba-requested-package-does-not-exist" not in analyse_text(text).fired


def test_a_requested_spec_no_channel_has_is_no_conflict_even_where_the_tree_shows_conflicts():
    text = (
        "$ mamba install pytorch-cuda=12.9 torchvision=0.15.2\nCould not solve for environment specs\nThe following packages are incompatible\n"
        "├─ pytorch-cuda 12.9**  does not exist (perhaps a typo or a missing channel);\n"
        "└─ torchvision 0.15.2  is not installable because it requires\n"
        "   └─ pytorch-cuda 11.8.* , which conflicts with any installable versions previously reported.\n"
    )
    assert _top(text) == "no_matching_distribution" and "dependency_conflict" not in _rule_causes(text)


@pytest.mark.parametrize(
    "report",
    [
        "UnsatisfiableError: The following specifications were found to be in conflict:\n  - cudatoolkit=9.0\n"
        "  - pytorch=1.4.0 -> cudatoolkit[version='>=10.1,<10.2']\nUse \"conda info <package>\" to see the dependencies for each package.",
        "UnsatisfiableError: The following specifications were found\nto be incompatible with the existing python installation in your environment:\n\n"
        "Specifications:\n\n  - pytorch3d -> python[version='>=3.7,<3.8.0a0|>=3.8,<3.9.0a0']\n\nYour python: python=3.11",
    ],
)
def test_the_classic_solver_s_older_and_python_forms_are_conflicts(report):
    assert (
        _top(f"$ conda install -c pytorch3d pytorch3d\nSolving environment: failed\n\n{report}\n")
        == "dependency_conflict"
    )


def test_libsolv_s_providers_line_from_dnf_is_no_conda_conflict():
    text = (
        "$ dnf install -y cuda-drivers\nError: \n Problem: package cuda-drivers-550.54.15-1.x86_64 requires nvidia-driver, "
        "but none of the providers can be installed\n"
    )
    assert "libmamba-specs-conflict" not in analyse_text(text).fired


def test_poetry_s_conflict_between_two_pins_is_not_a_missing_version():
    text = "$ poetry lock\nBecause app depends on both numpy (1.26.4) and numpy (2.1.0), version solving failed.\n"
    assert "poetry-no-matching-version" not in analyse_text(text).fired


# nvcc's host-compiler target check; torch's compiler lookups (where cl, torch 1.x which), its JIT builder's
# MSVC check, and BuildExtension's ninja checks for device linking.
COMPILER_FORMS = [
    (
        "tmpxft_00001f40_00000000-1.cpp\nnvcc fatal   : Host compiler targets unsupported OS.",
        "unsupported_host_compiler",
    ),
    (
        "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.",
        "host_compiler_missing",
    ),
    (
        "subprocess.CalledProcessError: Command '['which', 'g++']' returned non-zero exit status 1.",
        "host_compiler_missing",
    ),
    ("RuntimeError: MSVC is required to load C++ extensions", "host_compiler_missing"),
    (
        "AssertionError: With dlink=True, ninja is required to build cuda extension fused_ops._C.",
        "missing_build_dependency",
    ),
]


@pytest.mark.parametrize("line, cause", COMPILER_FORMS)
def test_compiler_and_build_tool_checks(line, cause):
    assert _top(f"$ python setup.py build_ext\n{line}\n") == cause


def test_a_failed_ninja_run_is_not_a_missing_compiler():
    text = "$ python setup.py build_ext\nsubprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
    assert "host_compiler_missing" not in _rule_causes(text)
