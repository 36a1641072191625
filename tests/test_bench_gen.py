"""The benchmark's generator and grep baseline: ground truth that holds, patterns grep accepts."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from bench import gen
from bench.ere import Unsupported, escape_literal, patterns_for_grep, to_ere
from buildlog.ingest.clean import clean_line
from buildlog.knowledge.artefact import bundled
from buildlog.pipeline import Options, analyse
from buildlog.scan.engines import hyperscan_available

ENGINES = ["plain", "hyperscan"] if hyperscan_available() else ["plain"]


@pytest.fixture(scope="module")
def small_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "build.log"
    return path, gen.generate(path, 400_000, seed=3, causes=4)


def test_truth_points_at_the_buried_lines(small_log):
    path, truth = small_log
    lines = path.read_bytes().split(b"\n")
    assert len(truth.buried) == 4 and truth.lines == path.read_bytes().count(b"\n")
    for buried in truth.buried:
        first = buried.text.splitlines()[0].strip()
        assert first in clean_line(lines[buried.line - 1]), buried


def test_generation_is_deterministic_and_reused(small_log, tmp_path):
    path, truth = small_log
    again = tmp_path / "again.log"
    assert gen.generate(again, 400_000, seed=3, causes=4).buried == truth.buried
    assert again.read_bytes() == path.read_bytes()
    assert gen.ensure(path, 400_000, seed=3) == truth


def test_the_noise_looks_like_a_verbose_build(small_log):
    data = small_log[0].read_bytes()
    for marker in (b"-Werror=", b"/bin/nvcc ", b"\r\n", b"\x1b[", b"warning #", b"\r   "):
        assert marker in data, marker
    assert re.search(rb"\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ", data)


@pytest.mark.parametrize("engine", ENGINES)
def test_explain_names_every_buried_cause(small_log, engine):
    path, truth = small_log
    report = analyse(path.read_bytes(), bundled(), options=Options(engine=engine))
    assert set(truth.causes) <= {r.id for r in report.root_causes}
    assert report.lines == truth.lines


def test_noise_alone_proves_no_cause(tmp_path):
    path = tmp_path / "noise.log"
    gen.generate(path, 200_000, seed=5, causes=0)
    report = analyse(path.read_bytes(), bundled())
    assert {r.id for r in report.root_causes if r.engine == "rules"} <= {"unknown"}


def test_odd_inputs_have_the_size_asked_for(tmp_path):
    gen.one_long_line(tmp_path / "line", 100_000)
    gen.nul_file(tmp_path / "nul", 100_000)
    assert (tmp_path / "line").stat().st_size == 100_000 and b"\n" not in (tmp_path / "line").read_bytes()
    assert (tmp_path / "nul").read_bytes() == bytes(100_000)
    gen.flood_file(tmp_path / "errors", 100_000)
    lines = (tmp_path / "errors").read_bytes().split(b"\n")
    assert (tmp_path / "errors").stat().st_size == 100_000
    assert all(b": error: " in line for line in lines[:-1]) and len(set(lines)) == len(lines)


@pytest.mark.parametrize(
    "python, ere",
    [
        (r"(?P<x>\d+)\.(?:a|b)", r"([0-9]+)\.(a|b)"),
        (r"[\w.\-]+\s+\S*?", r"[[:alnum:]_.-]+\s+\S*"),
        (r"it\x27s \(quoted\)", r"it's \(quoted\)"),
    ],
)
def test_python_regexes_become_eres(python, ere):
    assert to_ere(python) == ere


@pytest.mark.parametrize("python", [r"(?<=a)b", r"a(?=b)", r"(a)\1", r"first\nsecond", r"(?i)loud"])
def test_what_ere_cannot_say_is_refused(python):
    with pytest.raises(Unsupported):
        to_ere(python)


def test_fallback_is_the_escaped_anchors():
    patterns, fallbacks = patterns_for_grep([(r"a(?=b)", ["a.b", "c[d]"]), (r"plain", ["plain"])])
    assert fallbacks == 1 and patterns == [escape_literal("a.b"), escape_literal("c[d]"), "plain"]


@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep")
def test_grep_accepts_the_rule_patterns_and_they_match_the_examples():
    patterns, _ = patterns_for_grep((r.pattern, r.anchors) for r in bundled().rules)
    for rule in bundled().rules:
        try:
            ere = to_ere(rule.pattern)
        except Unsupported:
            continue
        for example in rule.examples.fire:
            if "\n" in example or rule.multiline:
                continue
            proc = subprocess.run(
                ["grep", "-E", "-c", "-e", ere], input=example.encode(), capture_output=True, check=False
            )
            assert proc.returncode == 0, (rule.id, ere, example, proc.stderr)
    assert patterns
