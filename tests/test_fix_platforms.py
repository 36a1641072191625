"""Every fix template, filled as for a Windows log and as for a Linux log, pastes and runs there.

Each rule's fix (and each cross-fact check's) is filled from the rule's own examples and a set of facts
like those a Windows log states (a toolkit under C:\\Program Files, a venv's Scripts folder, torch and
CUDA versions), once with the platform the facts name and once as for Linux with Linux facts. A
Windows `$` line may hold no Linux-only command or syntax (sudo, apt, `export`, /usr/..., a bash
`$(...)` substitution or `$VAR`, ls/find/df/free/nproc, ~/, bin/python); no `$` line of either may keep a
placeholder. A Linux-only line with no Windows form is said in words on Windows, never as a command.
"""

from __future__ import annotations

import re

import pytest

from bench.placeholders import PROSE_HOLE, commands, holds_placeholder
from buildlog.diagnose.fixes import template_values
from buildlog.diagnose.template import WINDOWS, fill
from buildlog.knowledge.artefact import bundled
from buildlog.report.schema import Facts, FactValue
from tests.conftest import analyse_text

K = bundled()

NOT_POWERSHELL = re.compile(
    r"\bsudo\b|\bapt(?:-get|-file|-cache)?\b|\b(?:yum|dnf|zypper|pacman)\b|^export |\bexport [A-Z_]+=|/usr/|/opt/|\$\("
    r"|\bnproc\b|\bfree -|\bdf -h\b|\bls\b|\bfind /|\bgrep\b|\bsed\b|\bawk\b|\bldconfig\b|\bldd\b|\bhash -r\b|\brm -rf\b"
    r"|~/|/bin/(?:python|activate|nvcc)\b|\bsource \S+/activate\b|\bwhich\b|\bcommand -v\b|\bdmesg\b"
    r"|\$(?!env:|HOME\b|null\b|true\b|false\b|_\b)[A-Za-z_]\w*"  # a bash variable: PowerShell reads $env:NAME
    r"|(?:^|; )[A-Z_][A-Z0-9_]*=\S"  # `VAR=value cmd`
    r"|\bcuda-\d+\.\d+\b(?!\.\*)"  # a Linux toolkit folder (/usr/local/cuda-12.4), not a conda spec
    r"|^where (?!\.exe)|^python3 "  # `where` is PowerShell's Where-Object (where.exe the tool); python.org's Windows Python has no python3.exe
)


def _facts(**values: str | list[str]) -> Facts:
    return Facts(
        **{
            k: [FactValue(value=x, line=1) for x in v] if isinstance(v, list) else FactValue(value=v, line=1)
            for k, v in values.items()
        }
    )


WINDOWS_FACTS = _facts(
    os="Windows",
    nvcc="12.4",
    cuda_home=r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4",
    torch="2.5.1+cu124",
    torch_cuda="12.4",
    python="3.11.9",
    interpreter=r"C:\Users\dev\proj\.venv\Scripts\python.exe",
    venv=r"C:\Users\dev\proj\.venv",
    ram_gb="32",
    cores="16",
    gpus=["NVIDIA GeForce RTX 4090"],
    driver="551.23",
    driver_cuda="12.4",
    gcc="13.2",
)
BARE_WINDOWS = _facts(os="Windows")  # the worst case: every other value falls back
LINUX_FACTS = _facts(
    os="Ubuntu 22.04.4 LTS",
    nvcc="12.4",
    cuda_home="/usr/local/cuda-12.4",
    torch="2.5.1+cu124",
    torch_cuda="12.4",
    python="3.11.9",
    interpreter="/home/dev/proj/.venv/bin/python",
    venv="/home/dev/proj/.venv",
    ram_gb="32",
    cores="16",
    gpus=["NVIDIA GeForce RTX 4090"],
    driver="550.54.14",
    driver_cuda="12.4",
    gcc="13.2",
)
# what each cross-fact check's own code gives its words (diagnose/checks.py)
CHECK_VALUES = {
    "wanted": "8.9",
    "note": "",
    "unsupported": "sm_120",
    "supported_range": "sm_50 to sm_90",
    "gcc_max": "12",
    "recommended_jobs": "6",
    "nvcc_major": "12",
    "venv_python": "",
    "severity": "error",
}

TEMPLATES = [(f"rule:{r.id}", r.fix, r) for r in K.rules if r.fix] + [
    (f"check:{c.id}", c.fix, None) for c in K.checks.values()
]


def _captures(rule) -> list[dict[str, str]]:
    if rule is None:
        return [{}]
    found = []
    for example in rule.examples.fire or [""]:
        match = rule.regex.search(example)
        found.append({k: v for k, v in (match.groupdict() if match else {}).items() if v})
    return found


def _render(rule, template: str, facts: Facts) -> list[tuple[bool, str]]:
    """(whether it was written for Windows, the fix) for each of the rule's examples."""
    out = []
    for captures in _captures(rule):
        values = template_values(captures, facts, None, K)
        if rule is None:
            values = {**{k: v for k, v in CHECK_VALUES.items() if k not in values}, **values}
        out.append((values.get("_platform") == WINDOWS, fill(template, values)))
    return out


@pytest.mark.parametrize(("name", "template", "rule"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_a_windows_fix_is_powershell_with_the_logs_values(name, template, rule):
    bare = _render(rule, template, BARE_WINDOWS) if rule else []  # a check fires only on the facts its words name
    for windows, text in _render(rule, template, WINDOWS_FACTS) + bare:
        assert windows, f"{name}: the facts' Windows was not read"
        for command in commands(text):
            assert not NOT_POWERSHELL.search(command), f"{name}: Linux-only in a Windows fix: {command}"
            assert not holds_placeholder(command), f"{name}: {command}"
            assert _balanced(command), f"{name}: unbalanced: {command}"
        for line in text.splitlines():
            assert not PROSE_HOLE.search(line), f"{name}: {line}"


@pytest.mark.parametrize(("name", "template", "rule"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_a_linux_fix_keeps_no_placeholder(name, template, rule):
    for windows, text in _render(rule, template, LINUX_FACTS):
        # a Windows path in the rule's own example (an nvcc.exe it captured) makes it a Windows fix; a
        # template for a Windows-only message (MSBuild's) writes PowerShell itself
        assert windows or "$env:" not in text or "$env:" in template, f"{name}: PowerShell in a Linux fix"
        for command in commands(text):
            assert not holds_placeholder(command), f"{name}: {command}"
        for line in text.splitlines():
            assert not PROSE_HOLE.search(line), f"{name}: {line}"


def _balanced(command: str) -> bool:
    """Parentheses and double quotes pair up (outside single quotes, which PowerShell reads literally)."""
    bare = re.sub(r"'[^']*'", "''", command)
    depth = 0
    for c in re.sub(r'"[^"]*"', lambda m: re.sub(r"[^()]", "", m.group(0)), bare) if bare.count('"') % 2 == 0 else "(":
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0 and bare.count('"') % 2 == 0


def test_the_linux_only_check_sees_bash_and_passes_powershell():
    for bash in (
        "export CUDA_HOME=/usr/local/cuda-12.4",
        "sudo apt-get install -y build-essential",
        "ls -d /usr/local/cuda-*",
        'CMAKE_PREFIX_PATH="$(python -c "import torch")":$CMAKE_PREFIX_PATH',
        "df -h /tmp",
        "nproc",
        "free -g",
        "~/venv/bin/python -m pip install .",
        "MAX_JOBS=4 pip install .",
        "pip uninstall -y $PKG",
        "where cl",
    ):
        assert NOT_POWERSHELL.search(bash), bash
    assert not _balanced("$env:X = (nvidia-smi | Sort-Object -Unique) -join ';')") and _balanced(
        "$env:X = ((a) -join ';')"
    )
    for ps in (
        '$env:CUDA_HOME = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"',
        '$env:PATH = "$env:CUDA_HOME\\bin;$env:PATH"',
        "Get-PSDrive -PSProvider FileSystem",
        'conda install -y -c nvidia "cuda-toolkit=12.4"',
        "where.exe cl",
        "New-Item -ItemType Directory -Force $HOME\\tmp | Out-Null",
    ):
        assert not NOT_POWERSHELL.search(ps), ps


def test_a_platform_tag_keeps_a_line_for_its_platform_only():
    template = "Install a compiler:\n[linux] $ sudo apt-get install -y build-essential\n[windows] $ where.exe cl\nthen rebuild."
    assert fill(template, {}) == "Install a compiler:\n$ sudo apt-get install -y build-essential\nthen rebuild."
    assert fill(template, {"_platform": WINDOWS}) == "Install a compiler:\n$ where.exe cl\nthen rebuild."


def test_a_windows_value_with_spaces_stays_one_powershell_value():
    text = fill("$ export CUDA_HOME={cuda_home}\n$ export CPATH=$CUDA_HOME/include:$CPATH", {
        "cuda_home": r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4", "_platform": WINDOWS,
    })  # fmt: skip
    assert text.splitlines() == [
        r'$ $env:CUDA_HOME = "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4"',
        r'$ $env:INCLUDE = "$env:CUDA_HOME\include;$env:INCLUDE"',  # MSVC reads INCLUDE, not CPATH
    ]


def test_a_bash_substitution_becomes_a_powershell_expression():
    text = fill(
        '$ export CMAKE_PREFIX_PATH=$(python -c "import torch; print(torch.utils.cmake_prefix_path)"):$CMAKE_PREFIX_PATH\n'
        "$ conda install -y \"cuda-toolkit=$(python -c 'import torch; print(torch.version.cuda)')\"",
        {"_platform": WINDOWS},
    )
    assert text.splitlines() == [
        '$ $env:CMAKE_PREFIX_PATH = (python -c "import torch; print(torch.utils.cmake_prefix_path)") + ";$env:CMAKE_PREFIX_PATH"',
        "$ conda install -y (\"cuda-toolkit=\" + (python -c 'import torch; print(torch.version.cuda)'))",
    ]


WINDOWS_CMAKE_LOG = (
    "PS C:\\Users\\dev\\proj> pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124\n"
    "Successfully installed torch-2.5.1+cu124\n"
    "PS C:\\Users\\dev\\proj> cmake -S . -B build -G Ninja\n"
    "-- The CXX compiler identification is MSVC 19.40.33811.0\n"
    "CMake Error at C:/Program Files/CMake/share/cmake-3.29/Modules/CMakeDetermineCUDACompiler.cmake:180 (message):\n"
    "  Failed to find nvcc.\n\n  Compiler requires the CUDA toolkit.  Please set the CUDAToolkit_ROOT\n  variable.\n"
    "-- Configuring incomplete, errors occurred!\n"
)


def test_cmake_without_nvcc_on_windows_gets_the_toolkit_of_torchs_cuda_in_powershell():
    report = analyse_text(WINDOWS_CMAKE_LOG).report
    cause = next(c for c in report.root_causes if c.id == "cuda_home_missing")
    lines = commands(cause.fix)
    assert '$env:CUDA_PATH = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"' in lines
    assert '$env:CUDACXX = "$env:CUDA_PATH\\bin\\nvcc.exe"' in lines
    assert 'cmake -S . -B build -DCMAKE_CUDA_COMPILER="$env:CUDACXX"' in lines
    assert not any(NOT_POWERSHELL.search(c) for c in lines), lines
    linux = analyse_text(
        WINDOWS_CMAKE_LOG.replace("PS C:\\Users\\dev\\proj>", "$").replace("C:/Program Files/CMake", "/usr")
    ).report
    assert "$ export CUDACXX=$CUDA_PATH/bin/nvcc" in linux.root_causes[0].fix
    assert "$ export CUDA_PATH=/usr/local/cuda-12.4" in linux.root_causes[0].fix


def test_a_risks_fix_on_a_windows_log_is_powershell_too():
    from buildlog.diagnose.checks import run_checks

    facts = _facts(os="Windows", nvcc="11.8", torch="2.5.1+cu124", torch_cuda="12.4", ram_gb="16", max_jobs="32")
    risks = {r.id: r for r in run_checks(facts, None, set(), K)}
    assert (
        '$ $env:CUDA_HOME = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"'
        in risks["cuda_major_mismatch"].fix
    )
    linux = {r.id: r for r in run_checks(_facts(nvcc="11.8", torch="2.5.1+cu124", torch_cuda="12.4"), None, set(), K)}
    assert "$ export CUDA_HOME=/usr/local/cuda-12.4" in linux["cuda_major_mismatch"].fix


def test_a_windows_path_in_a_traceback_makes_the_log_windows():
    for line in (
        '  File "C:\\Python310\\lib\\tempfile.py", line 483, in func_wrapper',
        "error: command 'C:\\\\Users\\\\dev\\\\Anaconda3\\\\envs\\\\cv\\\\Library\\\\mingw-w64\\\\bin\\\\gcc.exe' failed with exit status 1",
        "W:\\Code\\demo\\venv\\Lib\\site-packages\\unsloth\\models\\llama.py:1255: UserWarning: expandable_segments not supported",
    ):
        f = analyse_text(line + "\n").report.facts
        assert f.os is not None and f.os.value == "Windows", line
    for line in (
        '  File "/usr/lib/python3.10/tempfile.py", line 483',
        "error: invalid escape C:\\n in a string",
        "http://host/a\\b\\c",
    ):
        f = analyse_text(line + "\n").report.facts
        assert f.os is None, line


CMD_LOG = (
    "C:\\Users\\dev\\proj>pip install .\n"
    "Processing c:\\users\\dev\\proj\n"
    "  Preparing metadata (setup.py) ... error\n"
    "  OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    "error: metadata-generation-failed\n"
)


def test_a_command_prompt_log_starts_powershell_before_its_powershell_lines():
    report = analyse_text(CMD_LOG).report
    fix = report.root_causes[0].fix
    lines = commands(fix)
    first_ps = next(i for i, c in enumerate(lines) if "$env:" in c)
    assert "powershell" in lines[:first_ps], fix
    typed_in_ps = analyse_text(CMD_LOG.replace("C:\\Users\\dev\\proj>", "PS C:\\Users\\dev\\proj> ")).report
    assert "$env:" in typed_in_ps.root_causes[0].fix
    assert "powershell" not in commands(typed_in_ps.root_causes[0].fix)


def test_a_command_prompt_fix_of_plain_commands_starts_nothing():
    assert fill("Build it:\n$ pip install --no-build-isolation .", {"_platform": WINDOWS, "_shell": "cmd"}) == (
        "Build it:\n$ pip install --no-build-isolation ."
    )
    started = fill("$ export FORCE_CUDA=1\n$ pip install .", {"_platform": WINDOWS, "_shell": "cmd"}).splitlines()
    assert started[1:] == ["$ powershell", '$ $env:FORCE_CUDA = "1"', "$ pip install ."]
