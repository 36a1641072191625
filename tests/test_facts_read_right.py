"""Facts read right: only from output whose meaning the log shows; versions in all their real shapes."""

from __future__ import annotations

import pytest

from buildlog.diagnose import verdict
from tests.conftest import analyse_text


def facts(text: str):
    return analyse_text(text).report.facts


@pytest.mark.parametrize(
    ("line", "torch", "cuda"),
    [
        ("Successfully installed torch-2.6.0.dev20241112+cu124", "2.6.0.dev20241112+cu124", "12.4"),
        ("\ntorch.__version__  = 2.5.0a0+872d972e41.nv24.08\n", "2.5.0a0+872d972e41.nv24.08", None),
        ("Successfully installed torch-2.4.1+cu121 triton-3.0.0", "2.4.1+cu121", "12.1"),
    ],
)
def test_nightly_ngc_and_release_torch_versions_parse(line, torch, cuda):
    f = facts(line + "\n")
    assert f.torch is not None and f.torch.value == torch
    assert (f.torch_cuda.value if f.torch_cuda else None) == cuda


def test_another_modules_version_is_not_torchs_cuda():
    f = facts(
        '$ python -c "import torch, flash_attn; print(torch.__version__, flash_attn.__version__)"\n2.7.1+cu126 2.8.0.post2\n'
    )
    assert f.torch.value == "2.7.1+cu126"
    assert f.torch_cuda is None or f.torch_cuda.value == "12.6"


def test_torch_version_cuda_printed_second_is_read():
    f = facts('$ python -c "import torch; print(torch.__version__, torch.version.cuda)"\n2.5.1+cu124 12.4\n')
    assert (f.torch.value, f.torch_cuda.value) == ("2.5.1+cu124", "12.4")


def test_nvcc_version_from_a_windows_toolkit_path():
    f = facts(
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin\\nvcc.exe -c kernel.cu -o kernel.obj\n"
    )
    assert f.nvcc.value == "12.4" and f.os.value == "Windows"


def test_unknown_with_the_compilers_output_does_not_ask_for_verbose(monkeypatch):
    monkeypatch.setattr(verdict, "_classify", lambda data, span: None)  # a classifier that abstains
    log = (
        "$ pip install -v ./ext\n"
        '  /src/ext/kernel.cu(93): error: namespace "std" has no member "bit_cast"\n'
        "  error: subprocess-exited-with-error\n"
        "  ERROR: Failed building wheel for ext\n"
    )
    report = analyse_text(log).report
    assert report.root_causes and report.root_causes[0].id == "unknown"
    fix = report.root_causes[0].fix
    assert "-v" not in fix and "bit_cast" in fix


@pytest.mark.parametrize(
    ("value"),
    ["C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4", "/usr/local/cuda-12.4"],
)
def test_a_ci_steps_cuda_path_is_read_whole(value):
    # GitHub Actions prints a step's env block as `  NAME: value`; a Windows toolkit's folder holds spaces
    f = facts(
        f"Run python setup.py bdist_wheel\n  python setup.py bdist_wheel\n  shell: pwsh\n  env:\n    CUDA_PATH: {value}  \n"
    )
    assert f.cuda_home is not None and f.cuda_home.value == value
