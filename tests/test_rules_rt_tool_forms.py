"""The rules know the kinds of line the tools print, in each form the tool itself prints them.

Each case pairs one message format of a tool (its wording in the tool's source, its other spellings,
its translations in the tool's own catalogues) with the cause the line proves, or with the outcome a
failure format must give. None of these lines is copied from a corpus log: they are assembled from the
format strings, with paths and names of our own.
"""

from __future__ import annotations

import pytest

from tests.conftest import analyse_text


def _cause(text: str) -> str:
    causes = analyse_text(text).report.root_causes
    return causes[0].id if causes else "unknown"


# gcc.c execute(): "%s signal terminated program %s" with strsignal's name; SIGKILL is the OOM killer,
# SIGINT / SIGTERM a build stopped from outside. German, French, Spanish: gcc-12's catalogues; the signal
# names: glibc's translations.
SIGNAL_FORMS = [
    ("g++: fatal error: Killed signal terminated program cc1plus", "compiler_oom"),
    ("aarch64-linux-gnu-gcc: fatal error: Killed signal terminated program cc1", "compiler_oom"),
    ("c++: internal compiler error: Killed (program cc1plus)", "compiler_oom"),
    ("collect2: fatal error: ld terminated with signal 9 [Killed]", "compiler_oom"),
    ("g++: schwerwiegender Fehler: Signal Getötet hat Programm cc1plus beendet", "compiler_oom"),
    ("g++: erreur fatale: le signal Processus arrêté a terminé le programme cc1plus", "compiler_oom"),
    ("g++: error fatal: la señal Terminado (killed) terminó el programa cc1plus", "compiler_oom"),
    ("g++: fatal error: Убито signal terminated program cc1plus", "compiler_oom"),
    ("nvcc error   : 'cudafe++' died due to signal 9 (Kill signal)", "compiler_oom"),
    ("g++: fatal error: Terminated signal terminated program cc1plus", "build_interrupted"),
    ("gcc: fatal error: Interrupt signal terminated program cc1", "build_interrupted"),
]


@pytest.mark.parametrize("line, cause", SIGNAL_FORMS)
def test_a_compiler_ended_by_a_signal_is_named_by_the_signal(line, cause):
    assert _cause(f"$ pip install --no-build-isolation .\n{line}\ncompilation terminated.\n") == cause


def test_a_segfaulting_compiler_is_not_taken_for_the_oom_killer():
    text = "$ make\ng++: internal compiler error: Segmentation fault signal terminated program cc1plus\n"
    assert _cause(text) != "compiler_oom"


# strerror(ENOSPC): C tools (and its glibc translations), Go's lower case, Python's errno in any language,
# Windows' ERROR_DISK_FULL.
DISK_FORMS = [
    "cc1plus: fatal error: error writing to /tmp/ccQ2x.s: No space left on device",
    "#9 ERROR: failed to copy files: copy file range failed: no space left on device",
    "OSError: [Errno 28] Aucun espace disponible sur le périphérique",
    "OSError: [Errno 28] На устройстве не осталось свободного места",
    "cp: error writing '/tmp/wheel.whl': デバイスに空き領域がありません",
    "OSError: [WinError 112] There is not enough space on the disk",
    "OSError: [Errno 122] Disk quota exceeded: '/home/u/.cache/pip/http'",
]


@pytest.mark.parametrize("line", DISK_FORMS)
def test_every_form_of_a_full_disk(line):
    assert _cause(f"$ pip install flash-attn\n{line}\n") == "disk_full"


def test_an_errno_other_than_28_is_not_a_full_disk():
    assert _cause("$ pip install x\nOSError: [Errno 2] No such file or directory: 'build/lib'\n") != "disk_full"


# Lines that end a build without saying why: each must make the attempt a failure, not "unknown".
FAILURE_FORMS = [
    '#14 ERROR: process "/bin/sh -c make -j8" did not complete successfully: exit code: 2',
    'ERROR: failed to solve: process "/bin/sh -c pip install ." did not complete successfully: exit code: 1',
    "The command '/bin/sh -c python setup.py install' returned a non-zero code: 1",
    "Error: Process completed with exit code 2.",
    "    ERROR: Command errored out with exit status 1:",
    'Command "python setup.py egg_info" failed with error code 1 in /tmp/pip-build-q1/pkg/',
    "-- Configuring incomplete, errors occurred!",
    "src\\kernel.cu(10): error C2065: 'blockDim': undeclared identifier",
    "LINK : fatal error LNK1104: cannot open file 'python310.lib'",
    "ninja: error: loading 'build.ninja': No such file or directory",
    "make[1]: *** [Makefile:30: ops.o] Segmentation fault",
    "error: Failed to prepare distributions",
    "CondaEnvException: Pip failed",
]


@pytest.mark.parametrize("line", FAILURE_FORMS)
def test_each_tool_s_failure_format_marks_the_attempt_failed(line):
    assert analyse_text(f"$ ./build.sh\n{line}\n").report.status == "failure"


def test_a_buildkit_step_header_alone_is_not_a_failure():
    text = "$ docker build .\n#7 [3/5] RUN pip install -r requirements.txt\n#7 2.113 Collecting numpy\n"
    assert analyse_text(text).report.status != "failure"


# The host compiler is older (or other) than the build needs: nvcc's own check, torch's headers, gcc's
# unknown -std value, an internal compiler error.
HOST_FORMS = [
    "nvcc fatal   : The version ('140000') of the host compiler ('Apple clang') is not supported",
    '/opt/t/include/c10/util/C++17.h:16:2: error: #error "You\'re trying to build PyTorch with a too old version of GCC. We need GCC 9 or later."',
    "c++: error: unrecognized command line option '-std=c++20'; did you mean '-std=c++2a'?",
    "x.cu:1:1: internal compiler error: in tsubst_copy, at cp/pt.c:16133",
]


@pytest.mark.parametrize("line", HOST_FORMS)
def test_the_host_compiler_is_named(line):
    assert _cause(f"$ python setup.py build_ext\n{line}\n") == "unsupported_host_compiler"


@pytest.mark.parametrize(
    "line, cause",
    [
        ("/t/include/c10/util/C++17.h:27:2: error: #error You need C++17 to compile PyTorch", "cxx_standard_mismatch"),
        (
            "x.cpp(3): error C7555: use of designated initializers requires at least '/std:c++20'",
            "cxx_standard_mismatch",
        ),
        ("'nvcc' is not recognized as an internal or external command,", "cuda_home_missing"),
        ("which: no nvcc in (/usr/bin:/bin)", "cuda_home_missing"),
        ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.", "driver_too_old"),
        (
            "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for execution on the device",
            "unsupported_arch",
        ),
        ("Too long with no output (exceeded 10m0s): context deadline exceeded", "build_interrupted"),
        ("make: *** [Makefile:4: flash_fwd.o] Error 137", "compiler_oom"),
    ],
)
def test_other_tool_forms(line, cause):
    assert _cause(f"$ ./build.sh\n{line}\n") == cause
