"""`buildlog doctor` on machines made of recorded tool outputs: a real subprocess, tools found on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NVCC = "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release {release}, V{release}.41'\n"
SMI = """#!/bin/sh
case "$1" in
  --query-gpu=*) echo 'NVIDIA H200, 9.0, 570.124.06' ;;
  *) echo '| NVIDIA-SMI 570.124.06             Driver Version: 570.124.06     CUDA Version: 12.8     |' ;;
esac
"""
PYTHON = """#!/bin/sh
echo '{{"python": "3.12.3", "executable": "/opt/venv/bin/python", "prefix": "/opt/venv", "base_prefix": "/usr", \
"modules": {modules}, "torch": "2.9.1+cu128", "torch_cuda": "12.8", "cxx11_abi": true}}'
"""


def machine(tmp_path: Path, release: str, modules: list[str]) -> tuple[dict[str, str], Path]:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, text in (("nvcc", NVCC.format(release=release)), ("nvidia-smi", SMI), ("gcc", "#!/bin/sh\necho 13.3.0\n"),
                       ("python", PYTHON.format(modules=json.dumps(modules))), ("ninja", "#!/bin/sh\n")):  # fmt: skip
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}:/usr/bin:/bin", "NO_COLOR": "1"}
    for name in (
        "CUDA_HOME",
        "CUDA_PATH",
        "MAX_JOBS",
        "TORCH_CUDA_ARCH_LIST",
        "NVCC_THREADS",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CC",
    ):
        env.pop(name, None)
    return env, bin_ / "python"


def doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "buildlog", "doctor", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_cuda_mismatch_is_found_before_building(tmp_path):
    env, python = machine(tmp_path, "13.1", ["torch", "packaging", "ninja", "wheel"])
    proc = doctor(env, "--for", "flash-attn", "--python", str(python))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "13.1" in proc.stdout and "12.8" in proc.stdout and "would fail" in proc.stdout
    report = json.loads(doctor(env, "--python", str(python), "-f", "json").stdout)
    assert report["ready"] is False
    assert "cuda_major_mismatch" in {p["id"] for p in report["problems"]}
    assert report["environment"]["gpus"][0]["value"] == "NVIDIA H200"


def test_a_ready_machine_passes_and_missing_build_modules_do_not(tmp_path):
    env, python = machine(tmp_path, "12.8", ["torch", "packaging", "wheel"])
    proc = doctor(env, "--python", str(python), "--for", "flash-attn", "-f", "json")
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["ready"] is True
    (tmp_path / "bin" / "python").write_text(PYTHON.format(modules=json.dumps(["torch", "wheel"])))
    missing = doctor(env, "--python", str(python), "--for", "flash-attn")
    assert missing.returncode == 1 and "packaging" in missing.stdout and "pip install packaging" in missing.stdout


@pytest.mark.parametrize("arch, code", [("9.0", 0), ("8.0", 1)])
def test_the_arch_list_is_checked_against_the_gpus(tmp_path, arch, code):
    env, python = machine(tmp_path, "12.8", ["torch", "packaging", "ninja", "wheel"])
    proc = doctor({**env, "TORCH_CUDA_ARCH_LIST": arch}, "--python", str(python))
    assert proc.returncode == code, proc.stdout


def test_an_unknown_package_is_a_usage_error(tmp_path):
    env, python = machine(tmp_path, "12.8", [])
    proc = doctor(env, "--for", "left-pad")
    assert proc.returncode == 2 and "flash-attn" in proc.stderr
