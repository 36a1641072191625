"""Each cross-fact check fires on the facts that predict trouble and stays quiet otherwise."""

from __future__ import annotations

import pytest

from buildlog.diagnose.checks import CHECKS, Target, run_checks, targets
from buildlog.knowledge.artefact import bundled
from buildlog.report.schema import Facts, FactValue
from buildlog.segment import Span

K = bundled()


def fv(value: str, line: int = 1) -> FactValue:
    return FactValue(value=value, line=line)


def span(command: str = "pip install flash-attn", stage: str = "compile", interpreter: str | None = None) -> Span:
    s = Span(1, 1, 10, command, {}, interpreter, None, explicit=True)
    s.stages[stage] = 2
    return s


def ids(facts: Facts, sp: Span | None = None, diagnosed: set[str] | None = None) -> set[str]:
    return {r.id for r in run_checks(facts, sp or span(), diagnosed or set(), K)}


CASES = [
    (
        "cuda_major_mismatch",
        Facts(nvcc=fv("13.1"), torch_cuda=fv("12.8")),
        Facts(nvcc=fv("12.4"), torch_cuda=fv("12.8")),
    ),
    (
        "arch_list_misses_gpu",
        Facts(arch_list=fv("10.0"), gpus=[fv("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")]),
        Facts(arch_list=fv("8.0;12.0"), gpus=[fv("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")]),
    ),
    (
        "arch_unsupported_by_nvcc",
        Facts(nvcc=fv("13.0"), arch_list=fv("7.0;8.0")),
        Facts(nvcc=fv("13.0"), arch_list=fv("8.0;9.0")),
    ),
    ("host_compiler_unsupported", Facts(nvcc=fv("11.8"), gcc=fv("13.2.0")), Facts(nvcc=fv("12.8"), gcc=fv("13.2.0"))),
    (
        "driver_too_old_for_cuda",
        Facts(driver_cuda=fv("11.8"), torch_cuda=fv("12.8")),
        Facts(driver_cuda=fv("13.0"), torch_cuda=fv("12.8")),
    ),
    (
        "driver_minor_compat",
        Facts(driver_cuda=fv("12.2"), torch_cuda=fv("12.8")),
        Facts(driver_cuda=fv("12.8"), torch_cuda=fv("12.8")),
    ),
    (
        "jobs_exceed_ram",
        Facts(ram_gb=fv("432"), cores=fv("128"), packages={"flash-attn": fv("2.8.3")}),
        Facts(ram_gb=fv("432"), max_jobs=fv("20"), packages={"flash-attn": fv("2.8.3")}),
    ),
]


@pytest.mark.parametrize("check_id, firing, quiet", CASES, ids=[c[0] for c in CASES])
def test_check_fires_and_stays_quiet(check_id, firing, quiet):
    assert check_id in ids(firing)
    assert check_id not in ids(quiet)


def test_arch_list_risk_when_the_build_passes_its_own_flags():
    gpu = [fv("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")]
    covered = Facts(arch_list=fv("10.0"), gencode=[fv("sm_100"), fv("sm_120")], gpus=gpu)
    (risk,) = [r for r in run_checks(covered, span(), set(), K) if r.id == "arch_list_misses_gpu"]
    assert risk.severity == "warning" and "not affected" in risk.consequence
    assert "compiled_arch_misses_gpu" not in ids(covered)
    missed = Facts(arch_list=fv("10.0"), gencode=[fv("sm_100")], gpus=gpu)
    assert {"arch_list_misses_gpu", "compiled_arch_misses_gpu"} <= ids(missed)


def test_every_check_is_tested():
    assert {c[0] for c in CASES} | {"system_python_install", "compiled_arch_misses_gpu"} == set(CHECKS)


def test_system_python_install():
    assert "system_python_install" in ids(Facts(), span(interpreter="/usr/bin/pip3"))
    assert "system_python_install" in ids(Facts(), span(interpreter="sudo pip"))
    assert "system_python_install" not in ids(Facts(), span(interpreter="~/venv/bin/pip"))


def test_a_diagnosed_cause_silences_the_risk_it_covers():
    facts = Facts(nvcc=fv("13.1"), torch_cuda=fv("12.8"))
    assert "cuda_major_mismatch" not in ids(facts, diagnosed={"cuda_version_mismatch"})


def test_unknown_gpu_or_release_stays_quiet():
    assert "arch_list_misses_gpu" not in ids(Facts(arch_list=fv("10.0"), gpus=[fv("Mystery GPU")]))
    assert "arch_unsupported_by_nvcc" not in ids(Facts(nvcc=fv("99.0"), arch_list=fv("3.0")))


def test_jobs_advice_names_a_number():
    (risk,) = [r for r in run_checks(CASES[-1][1], span(), set(), K) if r.id == "jobs_exceed_ram"]
    assert "MAX_JOBS=21" in risk.fix


@pytest.mark.parametrize(
    "flag, gpu, runs",
    [("sm_80", (8, 6), True), ("sm_86", (8, 0), False), ("compute_80", (9, 0), True), ("sm_100", (12, 0), False),
     ("sm_90a", (9, 0), True), ("compute_90a", (10, 0), False), ("compute_120", (12, 0), True)],
)  # fmt: skip
def test_binary_compatibility(flag, gpu, runs):
    (target,) = targets(Facts(gencode=[fv(flag)]))
    assert target.runs_on(gpu) is runs


def test_arch_list_with_ptx():
    assert targets(Facts(arch_list=fv("8.0;9.0+PTX"))) == [
        Target((8, 0), False, False),
        Target((9, 0), False, False),
        Target((9, 0), True, False),
    ]


def test_every_check_has_its_words_and_every_record_its_logic():
    assert set(CHECKS) == set(K.checks)
