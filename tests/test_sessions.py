"""Attempts, incidents and resolutions on small transcripts, one behaviour each."""

from __future__ import annotations

from tests.conftest import analyse_text

ISOLATION = "  Getting requirements to build wheel ... error\n      ModuleNotFoundError: No module named 'torch'\n"
MISMATCH = (
    "      torch.__version__  = 2.9.1+cu128\n      running build_ext\n      RuntimeError:\n"
    "      The detected CUDA version (13.1) mismatches the version that was used to compile\n"
    "      PyTorch (12.8). Please make sure to use the same CUDA versions.\n"
)
OOM = "  Emitting ninja build file /tmp/b/build.ninja...\n  nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n"
SUCCESS = "Successfully installed flash-attn-2.8.3\n"
PEP668 = "error: externally-managed-environment\n\n× This environment is externally managed\n"


def report(text: str):
    return analyse_text(text).report


def test_prompts_split_attempts_and_keep_commands():
    r = report(f"$ pip install flash-attn\n{ISOLATION}$ pip install --no-build-isolation flash-attn\n{SUCCESS}")
    assert [(a.number, a.command, a.outcome) for a in r.attempts] == [
        (1, "pip install flash-attn", "failure"),
        (2, "pip install --no-build-isolation flash-attn", "success"),
    ]
    (incident,) = r.incidents
    assert incident.cause == "build_isolation_missing_torch" and incident.resolved_by.attempt == 2
    assert incident.resolved_by.kind == "isolation" and "--no-build-isolation" in incident.resolved_by.change


def test_bash_x_lines_are_commands():
    r = report(f"+ export MAX_JOBS=4\n+ pip install flash-attn\n{ISOLATION}")
    assert r.attempts[0].command == "pip install flash-attn" and r.attempts[0].env == {"MAX_JOBS": "4"}


def test_github_step_header_is_one_attempt_with_its_env():
    log = (
        "2024-05-01T10:00:00.0000000Z ##[group]Run pip install flash-attn\n"
        "2024-05-01T10:00:00.0000000Z pip install flash-attn\n"
        "2024-05-01T10:00:00.0000000Z env:\n"
        "2024-05-01T10:00:00.0000000Z   CUDA_HOME: /usr/local/cuda-12.4\n"
        "2024-05-01T10:00:00.0000000Z ##[endgroup]\n"
        f"2024-05-01T10:00:01.0000000Z {ISOLATION}"
    )
    r = report(log)
    assert len(r.attempts) == 1 and r.attempts[0].env == {"CUDA_HOME": "/usr/local/cuda-12.4"}


def test_repeated_pip_runs_without_prompts_are_attempts():
    r = report(
        f"Collecting flash-attn\n{ISOLATION}ERROR: Failed building wheel for flash-attn\nCollecting flash-attn\n{SUCCESS}"
    )
    assert [a.outcome for a in r.attempts] == ["failure", "success"]


def test_helper_installs_fold_into_the_next_attempt():
    r = report(
        f"$ pip install flash-attn --no-build-isolation\n      ModuleNotFoundError: No module named 'packaging'\n"
        f"$ pip install packaging ninja\nSuccessfully installed packaging-24.0 ninja-1.11\n"
        f"$ pip install flash-attn --no-build-isolation\n{SUCCESS}"
    )
    assert len(r.attempts) == 2
    (incident,) = r.incidents
    assert incident.resolved_by.attempt == 2 and incident.resolved_by.change == "installed ninja packaging in between"


def test_inline_variables_hold_for_their_command_only():
    r = report(
        f"$ MAX_JOBS=8 pip install flash-attn --no-build-isolation\n{OOM}$ pip install flash-attn --no-build-isolation\n{OOM}"
    )
    assert r.attempts[0].env == {"MAX_JOBS": "8"} and r.attempts[1].env == {}


def test_exports_carry_over():
    r = report(f"$ export CUDA_HOME=/usr/local/cuda-12.8\n$ pip install flash-attn --no-build-isolation\n{OOM}")
    assert r.attempts[0].env == {"CUDA_HOME": "/usr/local/cuda-12.8"}
    assert r.facts.nvcc.value == "12.8"


def test_a_failure_earlier_in_the_build_proves_nothing():
    """pip outside the venv hides the CUDA check: the mismatch is only resolved once compiling starts."""
    r = report(
        f"$ CUDA_HOME=/usr/local/cuda-13.1 pip install flash-attn --no-build-isolation\n{MISMATCH}"
        f"$ CUDA_HOME=/usr/local/cuda-12.8 /usr/bin/pip install flash-attn --no-build-isolation\n{PEP668}"
        f"$ CUDA_HOME=/usr/local/cuda-12.8 ~/venv/bin/python -m pip install flash-attn --no-build-isolation\n{OOM}"
        f"$ MAX_JOBS=4 CUDA_HOME=/usr/local/cuda-12.8 ~/venv/bin/python -m pip install flash-attn --no-build-isolation\n{SUCCESS}"
    )
    by_cause = {i.cause: i for i in r.incidents}
    assert by_cause["cuda_version_mismatch"].resolved_by.attempt == 3
    assert by_cause["cuda_version_mismatch"].resolved_by.kind == "toolkit"
    assert by_cause["externally_managed_pip"].resolved_by.attempt == 3
    assert by_cause["externally_managed_pip"].resolved_by.kind == "interpreter"
    assert by_cause["compiler_oom"].resolved_by.change == "MAX_JOBS=4 (unset before)"
    assert r.status == "success"


def test_a_later_failure_that_needs_the_earlier_fix_resolves_it():
    r = report(
        "$ pip install --no-build-isolation .\n      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
        f"$ export CUDA_HOME=/usr/local/cuda-13.1\n$ pip install --no-build-isolation .\n{MISMATCH}"
    )
    by_cause = {i.cause: i for i in r.incidents}
    assert by_cause["cuda_home_missing"].resolved_by.attempt == 2
    assert by_cause["cuda_version_mismatch"].resolved_by is None


def test_attempts_on_another_package_prove_nothing():
    r = report(f"$ pip install flash-attn\n{ISOLATION}$ pip install xformers\n{SUCCESS}")
    assert r.incidents[0].resolved_by is None


def test_an_incident_open_at_the_end_leads():
    r = report(f"$ pip install flash-attn\n{ISOLATION}$ pip install --no-build-isolation flash-attn\n{OOM}")
    assert r.status == "failure" and r.root_causes[0].id == "compiler_oom"


def test_same_cause_in_two_attempts_is_one_incident():
    r = report(f"$ pip install flash-attn\n{ISOLATION}$ pip install -v flash-attn\n{ISOLATION}")
    (incident,) = r.incidents
    assert incident.attempts == [1, 2] and incident.resolved_by is None


def test_the_interpreter_that_really_ran():
    r = report(f"$ source ~/venv/bin/activate && pip install flash-attn\n{PEP668}")
    assert r.attempts[0].interpreter.startswith("the system Python")


UNDEFINED = (
    'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
    "ImportError: /v/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
    "undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
)


def test_an_import_after_a_build_is_a_check_not_an_attempt():
    r = report(
        f"$ pip install flash-attn\n{ISOLATION}$ pip install --no-build-isolation flash-attn\n{SUCCESS}"
        "$ python -c 'import torch, flash_attn; print(flash_attn.__version__)'\n2.8.3\n"
    )
    assert [a.outcome for a in r.attempts] == ["failure", "success"] and r.status == "success"
    (check,) = r.attempts[1].checks
    assert check.outcome == "passed" and "import torch, flash_attn" in check.command


def test_version_and_test_runs_are_checks_too():
    r = report(
        f"$ pip install --no-build-isolation flash-attn\n{SUCCESS}$ python -m flash_attn --version\n2.8.3\n$ pytest -q\n"
    )
    assert len(r.attempts) == 1 and [c.command for c in r.attempts[0].checks] == [
        "python -m flash_attn --version",
        "pytest -q",
    ]


def test_a_failed_check_after_a_successful_build_is_an_incident_of_its_own():
    r = report(f"$ pip install --no-build-isolation flash-attn\n{SUCCESS}$ python -c 'import flash_attn'\n{UNDEFINED}")
    assert r.attempts[0].outcome == "success" and r.attempts[0].checks[0].outcome == "failed"
    assert r.status == "failure" and r.root_causes[0].id == "abi_mismatch"
    (incident,) = r.incidents
    assert incident.cause == "abi_mismatch" and incident.attempts == [1] and incident.resolved_by is None


def test_a_check_that_builds_is_an_attempt():
    """`python -c "...load(...)"` compiles an extension: that is a build, not a check."""
    r = report(
        f"$ pip install --no-build-isolation flash-attn\n{SUCCESS}"
        "$ python -c \"from torch.utils.cpp_extension import load; load(name='x', sources=['x.cpp'])\"\n"
        "      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    )
    assert r.attempts[-1].command.startswith("python -c") and r.attempts[-1].outcome == "failure"
    assert not any(a.checks for a in r.attempts)


ARCH = "      nvcc fatal   : Unsupported gpu architecture 'compute_120'\n"


def test_the_first_attempt_past_the_failing_stage_resolves_even_if_it_fails_later():
    r = report(
        f"$ CUDA_HOME=/usr/local/cuda-13.1 pip install --no-build-isolation flash-attn\n{MISMATCH}"
        "$ CUDA_HOME=/usr/local/cuda-12.8 pip install --no-build-isolation flash-attn\n"
        f"  Emitting ninja build file /tmp/b/build.ninja...\n{ARCH}"
        f"$ TORCH_CUDA_ARCH_LIST=9.0 CUDA_HOME=/usr/local/cuda-12.8 pip install --no-build-isolation flash-attn\n{SUCCESS}"
    )
    by_cause = {i.cause: i for i in r.incidents}
    mismatch = by_cause["cuda_version_mismatch"].resolved_by
    assert (
        mismatch.attempt == 2
        and mismatch.change == "pointed CUDA_HOME at /usr/local/cuda-12.8 (was /usr/local/cuda-13.1)"
    )
    assert by_cause["unsupported_arch"].resolved_by.attempt == 3


def test_activating_a_venv_is_said_so():
    r = report(f"$ pip install flash-attn --no-build-isolation\n{PEP668}$ source ~/ml-env/bin/activate\n"
               f"$ pip install flash-attn --no-build-isolation\n{SUCCESS}")  # fmt: skip
    assert r.incidents[0].resolved_by.change == "activated the venv ~/ml-env"


def test_activating_an_environment_before_a_try_belongs_to_that_try():
    """Every form that sets the environment (micromamba and mamba too, a bare `conda activate`)
    opens the set-up of the next attempt: the attempt before ends above it."""
    for setup in ("micromamba activate ml", "mamba deactivate", "conda activate", "export MAX_JOBS=2"):
        r = report(f"$ pip install flash-attn\n{ISOLATION}$ {setup}\n$ pip install -v flash-attn\n{SUCCESS}")
        assert [(a.line, a.end_line) for a in r.attempts] == [(1, 3), (5, 6)], setup


def test_changes_that_cannot_bear_on_the_cause_are_not_listed():
    r = report(
        f"$ pip install flash-attn\n{ISOLATION}"
        f"$ MAX_JOBS=2 NINJA_STATUS=x pip install --no-build-isolation -v flash-attn\n{SUCCESS}"
    )
    resolution = r.incidents[0].resolved_by
    assert resolution.change == "added --no-build-isolation" and resolution.other_changes == []


def test_a_successful_build_disproves_the_memory_risk():
    log = (
        "$ free -g\n               total        used        free      shared  buff/cache   available\n"
        "Mem:               7           1           5           0           1           6\n"
        "$ MAX_JOBS=64 pip install --no-build-isolation flash-attn\n  Emitting ninja build file /tmp/b/build.ninja...\n"
        "[1/9] /usr/local/cuda/bin/nvcc -c a.cu -o a.o\n"
    )
    assert "jobs_exceed_ram" in [k.id for k in report(log + "ERROR: Failed building wheel for flash-attn\n").risks]
    assert "jobs_exceed_ram" not in [k.id for k in report(log + SUCCESS).risks]


def test_the_narrative_tells_the_session_attempt_by_attempt():
    r = report(
        f"$ pip install flash-attn\n{ISOLATION}$ pip install --no-build-isolation flash-attn\n{OOM}"
        f"$ MAX_JOBS=2 pip install --no-build-isolation flash-attn\n{SUCCESS}$ python -c 'import flash_attn'\n"
    )
    first, second, third = r.narrative
    assert first.startswith("The first attempt (`pip install flash-attn`) failed: the package imports torch")
    assert second.startswith("Attempt 2 added --no-build-isolation and got past that, but failed: the compiler")
    assert "set MAX_JOBS=2" in third and "succeeded" in third and "`python -c 'import flash_attn'` passed" in third


def test_a_failing_session_ends_with_what_is_still_broken():
    r = report(f"$ pip install flash-attn\n{ISOLATION}$ pip install --no-build-isolation flash-attn\n{OOM}")
    assert r.narrative[-1] == "Still broken: the compiler ran out of memory during a parallel build."


def test_one_plain_attempt_needs_no_narrative():
    assert report(f"$ pip install flash-attn\n{ISOLATION}").narrative == []


def test_each_incident_uses_the_facts_of_its_own_attempt():
    """The `export` that prepares attempt 2 is not a fact of attempt 1."""
    mismatch = MISMATCH.replace("13.1", "12.4").replace("(12.8)", "(13.0)").replace("cu128", "cu130")
    r = report(
        f"$ export CUDA_HOME=/usr/local/cuda-12.4\n$ pip install --no-build-isolation flash-attn\n{mismatch}"
        f"$ export CUDA_HOME=/usr/local/cuda-13.0\n$ pip install --no-build-isolation flash-attn\n"
        f"  Emitting ninja build file /tmp/b/build.ninja...\n{ARCH}"
    )
    (cause,) = [c for c in r.root_causes if c.id == "cuda_version_mismatch"]
    assert "/usr/local/cuda-12.4" in cause.fix and "/usr/local/cuda-13.0)" not in cause.fix
    assert not any(e.text.startswith("$ export") for e in cause.evidence)
    assert r.attempts[0].end_line == 7 and r.attempts[1].line == 9  # line 8 is the export
