"""Contradictions: one fact stated two ways where nothing changed it in between, told with every value.

The logs here are built from the tools' real messages (nvcc --version, pip, torch's cpp_extension,
xFormers' load check); each test varies the one thing that makes or unmakes a contradiction.
"""

from __future__ import annotations

import pytest

from buildlog.render.common import contradiction_line
from tests.conftest import CORPUS, analyse_text

NVCC_13 = (
    "$ nvcc --version\n"
    "nvcc: NVIDIA (R) Cuda compiler driver\n"
    "Copyright (c) 2005-2025 NVIDIA Corporation\n"
    "Cuda compilation tools, release 13.0, V13.0.88\n"
    "Build cuda_13.0.r13.0/compiler.36424714_0\n"
)
MISMATCH_12_1 = (
    "  RuntimeError:\n"
    "  The detected CUDA version (12.1) mismatches the version that was used to compile\n"
    "  PyTorch (12.8). Please make sure to use the same CUDA versions.\n"
    "  ERROR: Failed building wheel for flash-attn\n"
)
MISMATCH_13_0 = (
    "  RuntimeError:\n"
    "  The detected CUDA version (13.0) mismatches the version that was used to compile\n"
    "  PyTorch (12.1). Please make sure to use the same CUDA versions.\n"
    "  ERROR: Failed building wheel for flash-attn\n"
)
BUILD = "$ pip install flash-attn --no-build-isolation\nCollecting flash-attn\n  Building wheel for flash-attn (setup.py) ... error\n"


def report(text: str):
    return analyse_text(text).report


def by_fact(text: str) -> dict:
    return {c.fact: c for c in report(text).contradictions}


def test_the_toolkit_set_against_the_nvcc_on_path_names_both_and_the_one_the_build_used():
    log = "$ export CUDA_HOME=/usr/local/cuda-12.1\n" + NVCC_13 + BUILD + MISMATCH_12_1
    found = by_fact(log)["nvcc"]
    assert [v.value for v in found.values] == ["12.1", "13.0"]
    assert [v.line for v in found.values] == [1, 5]
    assert found.used is not None and found.used.value == "12.1" and found.used.line == 11
    assert "nvcc --version" in found.values[1].says
    assert report(log).facts.nvcc.value == "12.1"


def test_the_build_used_what_its_own_output_says_even_when_a_later_line_says_otherwise():
    log = "$ export CUDA_HOME=/usr/local/cuda-12.1\n" + BUILD + MISMATCH_12_1 + NVCC_13
    r = report(log)
    found = {c.fact: c for c in r.contradictions}["nvcc"]
    assert found.used is not None and found.used.value == "12.1"
    assert r.facts.nvcc.value == "12.1"  # not the nvcc --version printed after the build


def test_without_the_builds_own_word_no_value_is_claimed():
    log = (
        "$ export CUDA_HOME=/usr/local/cuda-12.1\n"
        + NVCC_13
        + BUILD
        + "  ERROR: Failed building wheel for flash-attn\n"
    )
    found = by_fact(log)["nvcc"]
    assert found.used is None
    assert "does not show which" in contradiction_line(found, report(log))


def test_agreeing_statements_are_not_a_contradiction():
    log = (
        "$ export CUDA_HOME=/usr/local/cuda-13.0\n" + NVCC_13 + BUILD
        + "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "  ERROR: Failed building wheel for flash-attn\n"
    )  # fmt: skip
    assert report(log).contradictions == []


def test_pip_installed_one_torch_and_the_build_loaded_another():
    log = (
        "$ pip install torch==2.5.1\n"
        "Successfully installed torch-2.5.1\n"
        "$ python train.py\n"
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.3.0+cu121 with CUDA 1201 (you have 2.3.0+cu121)\n"
        "    Python  3.10.14 (you have 3.10.12)\n"
    )
    r = report(log)
    found = {c.fact: c for c in r.contradictions}["torch"]
    assert [v.value for v in found.values] == ["2.5.1", "2.3.0+cu121"]
    assert found.used is not None and found.used.value == "2.3.0+cu121" and found.used.line == 5
    assert r.facts.torch.value == "2.3.0+cu121"
    line = contradiction_line(found, r)
    assert (
        "two torch versions" in line and "2.5.1 (line 2, pip install)" in line and "the build used 2.3.0+cu121" in line
    )


def test_an_upgrade_between_attempts_is_a_change_not_a_contradiction():
    log = (
        '$ python -c "import torch; print(torch.__version__)"\n2.3.0+cu121\n'
        + BUILD + MISMATCH_13_0
        + "$ pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121\n"
        "Successfully installed torch-2.5.1+cu121\n"
        '$ python -c "import torch; print(torch.__version__)"\n2.5.1+cu121\n'
        + BUILD + "  Successfully installed flash-attn-2.8.3\n"
    )  # fmt: skip
    assert report(log).contradictions == []


SATISFIED = "Requirement already satisfied: torch in /venv/lib/python3.10/site-packages (2.5.1+cu121)\n"


def test_two_plain_statements_in_different_attempts_are_not_held_against_each_other():
    log = (
        '$ python -c "import torch; print(torch.__version__)"\n2.3.0+cu121\n' + BUILD + MISMATCH_13_0
        + BUILD + SATISFIED + MISMATCH_13_0
    )  # fmt: skip
    assert len(analyse_text(log).attempts) == 2
    assert "torch" not in by_fact(log)


def test_the_same_two_statements_in_one_attempt_are():
    log = '$ python -c "import torch; print(torch.__version__)"\n2.3.0+cu121\n' + BUILD + SATISFIED + MISMATCH_13_0
    found = by_fact(log)["torch"]
    assert [v.says for v in found.values] == ["torch.__version__ printed", "pip: already satisfied"]
    assert found.used is None


def test_a_torch_whose_tag_is_not_the_cuda_the_build_saw():
    log = '$ python -c "import torch; print(torch.__version__)"\n2.3.0+cu121\n' + BUILD + MISMATCH_12_1
    found = by_fact(log)["torch_cuda"]
    assert [v.value for v in found.values] == ["12.1", "12.8"]
    assert found.used is not None and found.used.value == "12.8"


def test_torchs_cuda_tag_against_what_collect_env_says():
    log = (
        '$ python -c "import torch; print(torch.__version__)"\n2.4.1+cu121\n'
        "$ python -m torch.utils.collect_env\n"
        "PyTorch version: 2.4.1\n"
        "CUDA used to build PyTorch: 11.8\n"
    )
    found = by_fact(log)["torch_cuda"]
    assert sorted(v.value for v in found.values) == ["11.8", "12.1"]
    assert any("+cu121 tag" in v.says for v in found.values)


def test_one_torch_against_another_is_told_once_not_again_as_its_cuda():
    log = (
        "$ pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cu121\n"
        "Successfully installed torch-2.1.0+cu121\n"
        '$ python -c "import torch; print(torch.__version__, torch.version.cuda)"\n2.1.0+cu118 11.8\n'
    )
    assert [c.fact for c in report(log).contradictions] == ["torch"]


def test_wheel_tags_of_one_python_and_a_build_running_in_another():
    log = (
        "$ pip install -r requirements.txt\n"
        "Collecting numpy\n"
        "  Downloading numpy-2.1.3-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (16.3 MB)\n"
        '  File "/usr/local/lib/python3.12/dist-packages/setuptools/build_meta.py", line 325, in get_requires_for_build_wheel\n'
        "  error: subprocess-exited-with-error\n"
    )
    found = by_fact(log)["python"]
    assert [v.value for v in found.values] == ["3.10", "3.12"]
    assert found.used is not None and found.used.value == "3.12"


def test_abi3_wheels_say_nothing_about_the_python():
    log = (
        "$ pip install -r requirements.txt\n"
        "  Downloading cryptography-43.0.3-cp39-abi3-manylinux_2_28_x86_64.whl (4.0 MB)\n"
        '  File "/usr/local/lib/python3.12/dist-packages/setuptools/build_meta.py", line 325, in get_requires_for_build_wheel\n'
    )
    assert report(log).contradictions == []


def test_a_new_venv_starts_afresh():
    log = (
        "$ pip install -r requirements.txt\n"
        "  Downloading numpy-2.1.3-cp310-cp310-manylinux_2_17_x86_64.whl (16.3 MB)\n"
        "$ source /opt/py312/bin/activate\n"
        '  File "/opt/py312/lib/python3.12/site-packages/setuptools/build_meta.py", line 325, in get_requires_for_build_wheel\n'
    )
    assert report(log).contradictions == []


def test_two_toolkit_paths_are_told_once_as_two_nvcc_releases():
    log = (
        "$ export CUDA_HOME=/usr/local/cuda-12.4\n" + BUILD
        + "  No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda-11.8'\n"
        "  ERROR: Failed building wheel for flash-attn\n"
    )  # fmt: skip
    found = report(log).contradictions
    assert [c.fact for c in found] == ["nvcc"]
    assert found[0].used is not None and found[0].used.value == "11.8"


def test_a_cuda_home_set_and_another_used():
    log = (
        "$ export CUDA_HOME=/usr/local/cuda-12.4\n" + BUILD
        + "  No CUDA runtime is found, using CUDA_HOME='/usr'\n"
        "  ERROR: Failed building wheel for flash-attn\n"
    )  # fmt: skip
    found = by_fact(log)["cuda_home"]
    assert [v.value for v in found.values] == ["/usr/local/cuda-12.4", "/usr"]
    assert found.used is not None and found.used.value == "/usr"


def test_a_second_export_is_a_change():
    log = (
        "$ export CUDA_HOME=/usr/local/cuda-12.4\n$ export CUDA_HOME=/usr/local/cuda-11.8\n"
        + BUILD
        + ("  No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda-11.8'\n")
    )
    assert report(log).contradictions == []


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("12.1", "12.1.105", True),
        ("3.10", "3.10.12", True),
        ("2.5.1", "2.5.1+cu124", True),
        ("2.5.1+cu121", "2.5.1+cu124", False),
        ("12.1", "12.4", False),
        ("12.1", "None", False),
    ],
)
def test_versions_agree_when_one_only_says_less(a, b, agree):
    from buildlog.facts import _agree

    assert _agree("nvcc", a, b) is agree


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("/usr/local/cuda", "/usr/local/cuda-12.1", True),  # the usual link beside its toolkit
        ("/usr/local/cuda-12.1/", "/usr/local/cuda-12.1", True),
        ("/usr/local/cuda-12.1", "/usr/local/cuda-11.8", False),
        ("/usr/local/cuda", "/usr/lib/nvidia-cuda-toolkit", False),
        ("/opt/cuda", "/usr/local/cuda-12.1", False),
        ("$CONDA_PREFIX", "/usr/local/cuda-12.1", True),  # not expanded: nothing to compare
    ],
)
def test_toolkit_paths_agree_when_they_may_be_one_toolkit(a, b, agree):
    from buildlog.facts import _agree

    assert _agree("cuda_home", a, b) is agree


def _with_contradiction():
    from buildlog.report.schema import Contradiction, Statement
    from tests.sample_report import sample_report

    c = Contradiction(
        fact="torch",
        values=[
            Statement(value="2.5.1", line=12, says="pip install"),
            Statement(value="2.3.0+cu121", line=480, says="xFormers' check of what it loaded", used=True),
        ],
        used=Statement(value="2.3.0+cu121", line=480, says="xFormers' check of what it loaded", used=True),
        attempts=[2],
    )
    return sample_report().model_copy(update={"contradictions": [c]})


def _rendered(fmt: str) -> str:
    import io

    from rich.console import Console

    from buildlog.render.github import render_github, step_summary
    from buildlog.render.html import render_html
    from buildlog.render.jsonout import render_json
    from buildlog.render.junit import render_junit
    from buildlog.render.markdown import render_markdown
    from buildlog.render.terminal import render_terminal

    r = _with_contradiction()
    if fmt == "terminal":
        out = io.StringIO()
        render_terminal(r, Console(file=out, width=400, color_system=None, highlight=False))
        return out.getvalue()
    return {
        "markdown": render_markdown, "json": render_json, "html": lambda x: render_html([x]),
        "github": lambda x: render_github([x]), "summary": lambda x: step_summary([x]), "junit": lambda x: render_junit([x]),
    }[fmt](r)  # fmt: skip


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html", "github", "summary", "junit"])
def test_every_renderer_tells_the_contradiction_in_one_line(fmt):
    text = _rendered(fmt)
    told = [line for line in text.splitlines() if "two torch versions" in line]
    assert len(told) == 1, text
    line = told[0]
    assert "2.5.1 (line 12, pip install)" in line and "2.3.0+cu121 (line 480" in line
    assert "the build used 2.3.0+cu121" in line and "attempt 2" in line


def test_github_warns_at_the_line_the_build_used():
    warning = next(line for line in _rendered("github").splitlines() if "contradictory" in line)
    assert warning.startswith("::warning ") and "line=480" in warning


def test_json_carries_the_contradiction_typed():
    import json

    data = json.loads(_rendered("json"))
    (c,) = data["contradictions"]
    assert (
        c["fact"] == "torch" and c["used"]["value"] == "2.3.0+cu121" and [v["line"] for v in c["values"]] == [12, 480]
    )


# The corpus cases reconstructed for contradictions (see their sidecars' notes), and what each must tell.
CORPUS_CONTRADICTIONS = {
    "contradiction-nvcc-export-cuda-12-1-path-nvcc-13-0-flash-attn": {"nvcc": "12.1"},
    "contradiction-nvcc-which-12-4-build-uses-cuda-11-8-compute-90": {"nvcc": "11.8"},
    "contradiction-torch-system-pip-2-5-1-venv-builds-with-2-3-1-apex": {"torch": "2.3.1+cu118", "python": "3.10"},
    "contradiction-torch-pip-of-python-3-11-xformers-loads-2-1-2-in-3-10": {
        "torch": "2.1.2+cu121",
        "python": "3.10.12",
    },
    "contradiction-torch-cuda-venv-cu121-sudo-python-builds-against-cu118": {"torch_cuda": "11.8"},
    "contradiction-torch-cuda-printed-cu121-deepspeed-launcher-torch-cu118": {"torch_cuda": "11.8"},
    "contradiction-cuda-home-ci-env-12-4-sudo-pip-falls-back-to-usr": {"cuda_home": "/usr", "nvcc": "11.5"},
    "contradiction-cuda-home-exported-12-4-tox-passes-path-only": {"cuda_home": "/usr", "nvcc": "11.5"},
}


def test_each_kind_of_contradiction_has_two_differing_corpus_logs():
    kinds: dict[str, set[str]] = {}
    for slug, told in CORPUS_CONTRADICTIONS.items():
        for fact in told:
            kinds.setdefault(fact, set()).add(slug)
    assert {k for k, slugs in kinds.items() if len(slugs) >= 2} == {
        "torch",
        "torch_cuda",
        "nvcc",
        "python",
        "cuda_home",
    }


def test_the_corpus_tells_its_contradictions_and_no_others():
    """Every corpus log: the contradictions its case was made for, with the value the build used, and none
    anywhere else (the rest of the corpus states its facts consistently)."""
    from buildlog.knowledge.artefact import bundled
    from buildlog.pipeline import analyse
    from buildlog.store.cases import iter_cases
    from tests.conftest import CORPUS

    seen = set()
    wrong = {}
    for case in iter_cases(CORPUS):
        found = {
            c.fact: (c.used.value if c.used else None) for c in analyse(case.read_bytes(), bundled()).contradictions
        }
        expected = CORPUS_CONTRADICTIONS.get(case.slug, {})
        seen.add(case.slug)
        if found != expected:
            wrong[case.slug] = found
    assert set(CORPUS_CONTRADICTIONS) <= seen
    assert not wrong, wrong


def test_the_compatibility_checks_judge_each_value():
    """nvcc 13.0 against torch's CUDA 12.8 is a major mismatch (the compat tables say so); 12.1 is not."""
    log = "$ export CUDA_HOME=/usr/local/cuda-12.1\n" + NVCC_13 + BUILD + MISMATCH_12_1
    found = by_fact(log)["nvcc"]
    assert found.note.startswith("with 13.0: ") and "major" in found.note
    assert "with 12.1" not in found.note


def test_values_the_checks_treat_alike_get_no_note():
    log = "$ export CUDA_HOME=/usr/local/cuda-12.4\n" + NVCC_13.replace("13.0", "12.6") + BUILD + MISMATCH_12_1
    found = by_fact(log)["nvcc"]
    assert [v.value for v in found.values] == ["12.4", "12.6", "12.1"] and found.note == ""


def test_a_contradiction_in_many_attempts_stays_one_short_line():
    r = _with_contradiction()
    many = r.contradictions[0].model_copy(update={"attempts": list(range(1, 501))})
    line = contradiction_line(many, r.model_copy(update={"contradictions": [many]}))
    assert "in attempts 1, 2, 3 and 497 more" in line and len(line) < 300


def test_a_value_stated_thousands_of_times_is_compared_once(monkeypatch):
    """A verbose build repeats its nvcc path on every compile line: contradictions cost the distinct values."""
    import buildlog.facts as facts_module

    calls = []
    real = facts_module._agree
    monkeypatch.setattr(facts_module, "_agree", lambda *a: calls.append(a) or real(*a))
    run = [
        facts_module.Observation("nvcc", "12.1", n, says="the build's nvcc command", role="used")
        for n in range(2, 5002)
    ]
    found = facts_module._judge("nvcc", [facts_module.Observation("nvcc", "13.0", 1, says="nvcc --version"), *run])
    assert found is not None and [v.value for v in found.values] == ["13.0", "12.1"] and found.used.value == "12.1"
    assert len(calls) < 50


def test_a_version_printed_after_the_last_attempt_still_describes_it():
    log = BUILD + MISMATCH_12_1 + "$ ls build/\n$ echo done\n" + NVCC_13
    found = by_fact(log)["nvcc"]
    assert [v.value for v in found.values] == ["12.1", "13.0"] and found.used.value == "12.1"


def test_the_facts_command_says_where_the_log_contradicts_itself():
    from click.testing import CliRunner

    from buildlog.cli import main

    log = CORPUS / "contradiction-nvcc-export-cuda-12-1-path-nvcc-13-0-flash-attn.log"
    shown = CliRunner().invoke(main, ["facts", str(log)], env={"COLUMNS": "300"})
    told = [line for line in shown.output.splitlines() if line.startswith("! ")]
    assert shown.exit_code == 0 and len(told) == 1, shown.output
    assert "nvcc" in told[0] and "the build used 12.1" in told[0]
