"""The lark grammars, through the event parser: the kind of each line and its parts."""

from __future__ import annotations

import pytest

from buildlog.knowledge.artefact import bundled
from buildlog.parse import events

K = bundled()


def parse_line(number, line):
    return events.parse_line(K, number, line)


CASES = [
    ("csrc/flash_api.cpp:12:5: error: 'x' was not declared in this scope", "diagnostic", {"severity": "error"}),
    ('csrc/attn.cu(45): warning #177-D: variable "x" was declared', "diagnostic", {"code": "#177-D"}),
    (r"C:\src\attn.cpp(12): fatal error C1189: #error:  -- unsupported", "diagnostic", {"severity": "fatal error"}),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_35'", "tool_message", {"severity": "fatal"}),
    ("g++: fatal error: Killed signal terminated program cc1plus", "tool_message", {"tool": "g++:"}),
    ("Traceback (most recent call last):", "traceback", {}),
    ('File "/v/torch/utils/cpp_extension.py", line 2356, in _join_cuda_home', "frame", {"function": "_join_cuda_home"}),
    ("ModuleNotFoundError: No module named 'torch'", "exception", {"exc_name": "ModuleNotFoundError"}),
    ("KeyboardInterrupt", "exception", {"exc_name": "KeyboardInterrupt"}),
    (
        "/v/cpp_extension.py:414: UserWarning: There are no g++ version bounds",
        "py_warning",
        {"exc_name": "UserWarning"},
    ),
    ("[3/49] /usr/local/cuda/bin/nvcc -c x.cu", "ninja_progress", {"int": "3", "int_2": "49"}),
    ("FAILED: build/x.o", "ninja_failed", {"rest": "build/x.o"}),
    ("ninja: build stopped: subcommand failed.", "ninja_message", {"ninja_kind": "build stopped"}),
    ("Getting requirements to build wheel ... error", "pip_status", {"outcome": "error"}),
    ("ERROR: Failed building wheel for flash-attn", "pip_error", {"error_tag": "ERROR"}),
    ("Successfully installed flash-attn-2.8.3", "pip_success", {"rest": "flash-attn-2.8.3"}),
    ("× Failed to build `flash-attn==2.8.3`", "pip_block", {}),
    ("Cuda compilation tools, release 12.8, V12.8.93", "banner_nvcc_release", {"version": "12.8"}),
    (
        "| NVIDIA-SMI 570.86.15   Driver Version: 570.86.15   CUDA Version: 12.8 |",
        "banner_smi_header",
        {"cuda_version": "12.8"},
    ),
    (
        "| NVIDIA-SMI 610.43.02   KMD Version: 610.43.02   CUDA UMD Version: 13.3 |",
        "banner_smi_header",
        {"version_2": "610.43.02", "cuda_version": "13.3"},
    ),
    ("torch.__version__  = 2.9.1+cu128", "banner_torch_version", {"version": "2.9.1+cu128"}),
    ("gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0", "banner_compiler_version", {"version": "13.2.0"}),
    ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)", "banner_gpu_listing", {"gpu_name": "NVIDIA H100 80GB HBM3"}),
]


@pytest.mark.parametrize("line, kind, fields", CASES, ids=[c[1] + ":" + c[0][:30] for c in CASES])
def test_line_kinds(line, kind, fields):
    event = parse_line(7, line)
    assert event.kind == kind and event.line == 7
    for key, value in fields.items():
        assert event.fields.get(key) == value


def test_unparsable_line_is_text():
    assert parse_line(1, "just some words").kind == "text"


@pytest.mark.parametrize(
    "line, prompt, env, argv0",
    [
        ("(ml-env) user@gpu:~/src$ MAX_JOBS=8 pip install flash-attn", "user_prompt", {"MAX_JOBS": "8"}, "pip"),
        (
            "root@4f2a:/workspace# export CUDA_HOME=/usr/local/cuda-12.8",
            "user_prompt",
            {"CUDA_HOME": "/usr/local/cuda-12.8"},
            "export",
        ),
        ("$ uv pip install flash-attn", "bare_prompt", {}, "uv"),
        ("+ python setup.py bdist_wheel", "xtrace", {}, "python"),
        ("##[group]Run pip install -v .", "ci_step", {}, "pip"),
        ('TORCH_CUDA_ARCH_LIST="10.0" pip install .', "none", {"TORCH_CUDA_ARCH_LIST": "10.0"}, "pip"),
    ],
)
def test_commands(line, prompt, env, argv0):
    event = parse_line(1, line)
    assert event.kind == "command" and event.fields["prompt"] == prompt
    first = event.commands[0]
    assert first.argv[0] == argv0
    assert {**first.env} == env or {k: v for k, v in first.env.items() if k in env} == env


def test_chained_command_keeps_each_part():
    event = parse_line(1, "export PATH=/x/bin:$PATH && source ~/env/bin/activate && MAX_JOBS=4 pip install .")
    assert [c.argv[0] for c in event.commands] == ["export", "source", "pip"]
    assert event.commands[2].env == {"MAX_JOBS": "4"}


@pytest.mark.parametrize(
    "line", ["nvcc fatal   : Unknown option '-x'", "pip is looking at multiple versions", "  pip install x"]
)
def test_lines_that_merely_start_like_commands_are_not_commands(line):
    assert parse_line(1, line).kind != "command"


@pytest.mark.parametrize(
    "line, argv, env, wrappers",
    [
        ("$ pip install x 2>&1 | tee -a b.log", ("pip", "install", "x"), {}, ()),
        ("$ pip install x > b.log 2>>err.log", ("pip", "install", "x"), {}, ()),
        ("$ pip install x &>b.log", ("pip", "install", "x"), {}, ()),
        ("$ time pip install x", ("pip", "install", "x"), {}, ("time",)),
        ("$ sudo -E -u me pip install x", ("pip", "install", "x"), {}, ("sudo -E -u me",)),
        (
            "$ env -u X MAX_JOBS=2 python -m pip install x",
            ("python", "-m", "pip", "install", "x"),
            {"MAX_JOBS": "2"},
            ("env -u X MAX_JOBS=2",),
        ),  # fmt: skip
        ("$ nohup nice -n 5 pip install x &", ("pip", "install", "x"), {}, ("nohup", "nice -n 5")),
        ("$ conda run -n ml pip install x", ("pip", "install", "x"), {}, ("conda run -n ml",)),
        ("$ bash -lc 'cd src && MAX_JOBS=1 pip install x'", ("pip", "install", "x"), {"MAX_JOBS": "1"}, ("bash -lc",)),
    ],
)
def test_redirections_and_wrappers_leave_the_command_that_does_the_work(line, argv, env, wrappers):
    event = parse_line(1, line)
    assert event.kind == "command"
    first = event.commands[0]
    assert (first.argv, dict(first.env), first.wrappers) == (argv, env, wrappers)


@pytest.mark.parametrize(
    "line, prompt",
    [
        (r"PS C:\src> pip install x 2>&1 | Tee-Object -FilePath b.log", "ps_prompt"),
        (r"C:\src>pip install x", "cmd_prompt"),
        ("!pip install x", "notebook"),
        ("%pip install x", "notebook"),
        ("$ pip install x <<<$(weird) {syntax}", "raw"),
    ],
)
def test_other_prompts_and_unknown_syntax_still_give_the_command(line, prompt):
    event = parse_line(1, line)
    assert event.kind == "command" and event.fields["prompt"] == prompt
    assert event.commands[0].argv[:2] == ("pip", "install")


def test_a_continued_line_is_read_with_its_continuation():
    after = events.After.of(
        (
            ">   --no-build-isolation \\",
            ">   -v",
        )
    )
    event = events.parse_line(K, 1, "$ pip install flash-attn \\", after)
    assert event.commands[0].argv == ("pip", "install", "flash-attn", "--no-build-isolation", "-v")
