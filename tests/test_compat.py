"""Spot checks of the compatibility tables: well-known rows, and unknowns stay unknown."""

from __future__ import annotations

import pytest

from buildlog.knowledge.artefact import bundled
from buildlog.knowledge.compat import cc_from_sm, cc_key

COMPAT = bundled().compat
gpu_for, cuda_release, driver_cuda_for, torch_build_for = (
    COMPAT.gpu_for, COMPAT.cuda_release, COMPAT.driver_cuda_for, COMPAT.torch_build_for,
)  # fmt: skip


@pytest.mark.parametrize(
    "name, cc",
    [
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("Tesla T4", "7.5"),
        ("Tesla V100-SXM2-16GB", "7.0"),
        ("NVIDIA GeForce RTX 4090", "8.9"),
        ("NVIDIA GeForce RTX 3090", "8.6"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0"),
        ("NVIDIA B200", "10.0"),
        ("NVIDIA GH200 480GB", "9.0"),
        ("NVIDIA L40S", "8.9"),
        ("NVIDIA A10", "8.6"),
        ("Tesla K80", "3.7"),
    ],
)
def test_gpu_compute_capability(name, cc):
    row = gpu_for(name)
    assert row is not None and row.cc == cc


@pytest.mark.parametrize("name", ["NVIDIA Imaginary 9000", "Some Other GPU"])
def test_unknown_gpu_is_unknown(name):
    assert gpu_for(name) is None


def test_similar_names_do_not_collide():
    assert gpu_for("NVIDIA A100 80GB PCIe").cc == "8.0" and gpu_for("NVIDIA A10").cc == "8.6"
    assert gpu_for("NVIDIA L40").cc == gpu_for("NVIDIA L40S").cc == "8.9"


def test_every_row_has_a_source():
    import tomllib

    from tests.conftest import ROOT

    for table, key in (("gpus", "gpu"), ("cuda", "cuda"), ("torch", "torch"), ("drivers", "driver")):
        rows = tomllib.loads((ROOT / "buildlog/knowledge/compat" / f"{table}.toml").read_text())[key]
        assert rows and all(r["source"] for r in rows), table


@pytest.mark.parametrize(
    "cuda, sm_min, sm_max, gcc_max",
    [
        ("11.8", "3.5", "9.0", "11"),
        ("12.0", "5.0", "9.0", "12"),
        ("12.8", "5.0", "12.0", "14"),
        ("13.0", "7.5", "12.1", "15"),
    ],
)
def test_cuda_release_rows(cuda, sm_min, sm_max, gcc_max):
    row = cuda_release(cuda)
    assert (row.sm_min, row.sm_max, row.gcc_max) == (sm_min, sm_max, gcc_max)


def test_cuda_versions_in_any_spelling_and_unknown_releases():
    assert cuda_release("V12.8.93").version == "12.8"
    assert cuda_release("99.1") is None


def test_torch_rows():
    assert "12.8" in COMPAT.torch["2.9"].cuda
    assert "0.1" not in COMPAT.torch


def test_driver_branches():
    assert driver_cuda_for("570.86.15") == "12.8"
    assert driver_cuda_for("535.104.05") == "12.2"
    assert driver_cuda_for("100.1") is None


def test_torch_build_for_a_toolkit_stays_within_its_major():
    release, build = torch_build_for("13.1")
    assert build.startswith("13.") and cc_key(build) <= (13, 1)
    assert torch_build_for("99.0") is None


def test_cc_helpers():
    assert cc_from_sm("sm_120") == "12.0" and cc_from_sm("compute_90a") == "9.0" and cc_from_sm("86") == "8.6"
    assert cc_key("10.0a") == (10, 0) and cc_key("8.6") < cc_key("9.0")
