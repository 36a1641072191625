"""The environment probe's readers, on the outputs the tools print, and its header read back as facts."""

from __future__ import annotations

from buildlog.probe import (
    Environment,
    Gpu,
    gcc_version,
    header,
    interpreter_for,
    meminfo_gb,
    nvcc_release,
    python_report,
    smi_driver_cuda,
    smi_gpus,
)  # fmt: skip
from tests.conftest import analyse_text

NVCC = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Built on Fri_Feb_21_20:23:50_PST_2025
Cuda compilation tools, release 12.8, V12.8.93
Build cuda_12.8.r12.8/compiler.35583870_0
"""
SMI_QUERY = "NVIDIA H200, 9.0, 570.124.06\nNVIDIA H200, 9.0, 570.124.06\n"
SMI_BANNER = "| NVIDIA-SMI 570.124.06             Driver Version: 570.124.06     CUDA Version: 12.8     |\n"


def test_the_readers_take_what_the_tools_print():
    assert nvcc_release(NVCC) == "12.8"
    gpus, driver = smi_gpus(SMI_QUERY)
    assert gpus == (Gpu("NVIDIA H200", "9.0"),) * 2 and driver == "570.124.06"
    assert smi_gpus("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n") == ((), None)
    assert smi_gpus("Tesla K80, [N/A], 470.82.01\n") == ((Gpu("Tesla K80", None),), "470.82.01")
    assert smi_driver_cuda(SMI_BANNER) == "12.8"
    assert gcc_version("13.3.0\n") == "13.3.0" and gcc_version("gcc: command not found") is None
    assert meminfo_gb("MemTotal:       131913480 kB\nMemFree: 1 kB\n") == 126
    assert python_report('noise\n{"python": "3.12.3", "torch": "2.9.1+cu128"}\n')["torch"] == "2.9.1+cu128"
    assert python_report("Traceback ...") == {}


def test_the_interpreter_is_the_one_the_command_runs_in(tmp_path):
    pip = tmp_path / "pip"
    pip.write_text("#!/opt/venv/bin/python3.12\nimport pip\n")
    paths = {"pip": str(pip), "python3": "/usr/bin/python3", "/opt/x/python": "/opt/x/python"}
    assert interpreter_for(["pip", "install", "x"], paths.get) == "/opt/venv/bin/python3.12"
    assert interpreter_for(["/opt/x/python", "setup.py"], paths.get) == "/opt/x/python"
    assert interpreter_for(["make"], paths.get) == "/usr/bin/python3"


def test_the_header_reads_back_as_facts_and_risks():
    found = Environment(
        nvcc="13.1", nvcc_path="/usr/local/cuda-13.1/bin/nvcc", torch="2.9.1+cu128", torch_cuda="12.8", torch_abi=True,
        driver="580.95.05", driver_cuda="13.0", gpus=(Gpu("NVIDIA GeForce RTX 5090", "12.0"),), gcc="13.3.0",
        python="3.12.3", interpreter="/home/u/ml-env/bin/python", venv="/home/u/ml-env", ram_gb=64, cores=32,
        settings={"MAX_JOBS": "6", "TORCH_CUDA_ARCH_LIST": "9.0"},
    )  # fmt: skip
    lines = header(found, "2026-12-01T00:00:00Z")
    facts = analyse_text("\n".join(lines) + "\n").report.facts
    assert (facts.nvcc.value, facts.torch.value, facts.torch_cuda.value) == ("13.1", "2.9.1+cu128", "12.8")
    assert (facts.driver.value, facts.driver_cuda.value) == ("580.95.05", "13.0")
    assert [g.value for g in facts.gpus] == ["NVIDIA GeForce RTX 5090"] and [c.value for c in facts.gpu_cc] == ["12.0"]
    assert (facts.gcc.value, facts.python.value, facts.venv.value) == ("13.3.0", "3.12.3", "/home/u/ml-env")
    assert (facts.ram_gb.value, facts.cores.value, facts.max_jobs.value, facts.arch_list.value) == (
        "64",
        "32",
        "6",
        "9.0",
    )
    assert facts.cuda_home.value == "/usr/local/cuda-13.1"
    risks = {r.id for r in analyse_text("\n".join(lines) + "\n").report.risks}
    assert {"cuda_major_mismatch", "arch_list_misses_gpu"} <= risks


def test_what_is_missing_or_unset_states_nothing():
    facts = analyse_text("\n".join(header(Environment(cores=4))) + "\n").report.facts
    assert facts.nvcc is None and facts.torch is None and facts.max_jobs is None and facts.arch_list is None
    assert facts.cuda_home is None and facts.cores.value == "4"
