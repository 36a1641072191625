"""Fixes you can paste: every `$` line of every fix runs as written, on Linux and on Windows.

Each rule's fix is filled from each of its own examples (its named groups, no facts: the worst case,
where every value falls back) and once as for a Linux log and once as for a Windows log. No `$` line
may keep a placeholder (`<...>`: the shell reads `<` as a redirect; `X.Y`, `cuXYZ`, `gcc-N`, an
unfilled `{name}`), and a Windows fix uses PowerShell, not `export` or apt.
"""

from __future__ import annotations

import re

import pytest

from bench.placeholders import PROSE_HOLE, bad_commands, commands, holds_placeholder
from buildlog.diagnose.fixes import template_values
from buildlog.diagnose.template import WINDOWS, fill
from buildlog.knowledge.artefact import bundled
from buildlog.report.schema import Facts
from tests.conftest import analyse_text

K = bundled()
# what PowerShell does not read: `VAR=v cmd`, df, mkdir -p, sed, sort/paste, head, /dev/null
BASH_ONLY = re.compile(
    r"(?:^|; )[A-Z_][A-Z0-9_]*=\S|\bdf -h\b|\bmkdir -p\b|\| ?sed\b|\bsort -u\b|\bpaste -s|\| head\b|/dev/null"
)
FIXED = [r for r in K.rules if r.fix]


def _renders(rule):
    for example in rule.examples.fire:
        match = rule.regex.search(example)
        captures = {k: v for k, v in (match.groupdict() if match else {}).items() if v}
        values = template_values(captures, Facts(), None, K)
        yield "linux", fill(rule.fix, {**values, "_platform": ""})
        yield "windows", fill(rule.fix, {**values, "_platform": WINDOWS})


@pytest.mark.parametrize("rule", FIXED, ids=lambda r: r.id)
def test_every_fix_command_runs_as_written(rule):
    for platform, text in _renders(rule):
        for command in commands(text):
            assert not holds_placeholder(command), f"{platform}: {command}"
            if platform == WINDOWS:
                assert not command.startswith(("export ", "sudo apt")), command
                assert not BASH_ONLY.search(command), f"bash in a Windows fix: {command}"


@pytest.mark.parametrize("rule", FIXED, ids=lambda r: r.id)
def test_every_fix_reads_without_a_placeholder(rule):
    """The words around the commands too: no `<name>` hole, `X.Y`, `cuXYZ` or unfilled `{name}`."""
    for platform, text in _renders(rule):
        for line in text.splitlines():
            assert not PROSE_HOLE.search(line), f"{platform}: {line}"


def test_the_command_check_sees_a_redirect_but_not_a_quoted_requirement():
    assert holds_placeholder("pip install torch --index-url <the PyTorch cu121 wheel index>")
    assert holds_placeholder('pip install "torch=={torch}"') and holds_placeholder(
        "export CUDA_HOME=/usr/local/cuda-X.Y"
    )
    assert not holds_placeholder('pip install "pydantic<2" "vllm==0.2.1.post1"')


def test_the_prose_check_sees_a_hole():
    assert PROSE_HOLE.search(fill("torch {torch} needs CUDA {cuda|X.Y}", {}))
    assert not PROSE_HOLE.search("#include <cuda_runtime.h> needs torch<2.5")


def test_a_windows_log_gets_powershell_and_visual_studio():
    log = (
        "PS C:\\Users\\dev\\proj> pip install flash-attn --no-build-isolation\n"
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\include\\crt/host_config.h(153): fatal error C1189: "
        "#error:  -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2022 (inclusive) are supported!\n"
    )
    report = analyse_text(log).report
    fixes = "\n".join(c.fix for c in report.root_causes)
    assert "apt" not in fixes and "export " not in fixes
    assert not bad_commands(report)


def test_a_linux_log_keeps_its_shell():
    log = "$ pip install --no-build-isolation flash-attn\nOSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    fixes = "\n".join(c.fix for c in analyse_text(log).report.root_causes)
    assert "$ export CUDA_HOME=" in fixes and "$env:" not in fixes
    assert "<" not in "".join(commands(fixes))


def test_fallbacks_nest_to_any_depth_and_a_value_s_braces_stay_text():
    from buildlog.diagnose.template import fill

    template = "tried {compiler|{compiler2|{compiler3|the system compiler}}}"
    assert fill(template, {}) == "tried the system compiler"
    assert fill(template, {"compiler3": "g++"}) == "tried g++"
    assert fill(template, {"compiler2": "cc", "compiler3": "g++"}) == "tried cc"
    assert fill("at {path|{other}}", {"path": "/x/{other}"}) == "at /x/{other}"
    assert fill("use {cuda|{torch_cuda|the CUDA} toolkit}", {"torch_cuda": "12.4"}) == "use 12.4 toolkit"


def test_torchs_found_version_is_read_as_the_drivers_cuda():
    """torch's "found version 11040" is the driver's CUDA API version (11.4), not a driver release."""
    for found, cuda in (("11040", "11.4"), ("10010", "10.1"), ("12020", "12.2"), ("9020", "9.2")):
        assert template_values({"found_driver": found}, Facts(), None, K)["found_driver_cuda"] == cuda
    assert "found_driver_cuda" not in template_values({"found_driver": "535"}, Facts(), None, K)
    log = "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU driver\n"
    fix = analyse_text(log).report.root_causes[0].fix
    assert "up to 10.1" in fix and "10010" not in fix


def test_jax_component_versions_are_read_as_releases():
    cases = [
        ({"jax_lib": "cuDNN", "jax_found": "8600", "jax_built": "8906"}, "8.6.0", "8.9.6"),
        ({"jax_lib": "CUDA", "jax_found": "12010", "jax_built": "12020"}, "12.1", "12.2"),
        ({"jax_lib": "cuBLAS", "jax_found": "120205", "jax_built": "120304"}, "12.2.5", "12.3.4"),
        (
            {"jax_lib_o": "cuDNN", "jax_found_o": "90300", "jax_built_o": "90300", "jax_minimum": "9100"},
            "9.3.0",
            "9.3.0",
        ),
    ]
    for captures, found, built in cases:
        values = template_values(captures, Facts(), None, K)
        assert (values["jax_found_v"], values["jax_built_v"]) == (found, built)
    values = template_values(
        {"jax_lib_o": "cuDNN", "jax_found_o": "8907", "jax_built_o": "8907", "jax_minimum": "9100"}, Facts(), None, K
    )
    assert (values["jax_needed_v"], values["jax_wheel"]) == ("9.1.0", "nvidia-cudnn-cu12")
