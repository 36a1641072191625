"""The benchmark's generator and grep baseline: ground truth that holds, patterns grep accepts."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys

import pytest

from bench import gen, preambles
from bench import run as run_bench
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


# --------------------------------------------------------------------------------------------
# The other kinds: many build jobs with incidents among them, and a flood of distinct errors.

_DRESSING = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z |\x1b\[[0-9;]*m")
_ERROR_LINE = re.compile(rb"^\S+\(\d+\): error: |^\S+:\d+:\d+: error: ")


def _undress(line: bytes) -> str:
    """A log line as written before the CI timestamps, colours and CRLF went on."""
    return _DRESSING.sub("", line.decode("utf-8").rstrip("\r"))


@pytest.fixture(scope="module")
def preambles_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "preambles.log"
    return path, gen.generate_kind("preambles", path, 2 << 20, seed=7, causes=20)


@pytest.fixture(scope="module")
def flood_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "flood.log"
    return path, gen.generate_kind("flood", path, 2 << 20, seed=7, causes=5)


@pytest.mark.parametrize("kind", ["preambles", "flood"])
def test_new_kinds_are_deterministic_per_seed_and_size(kind, tmp_path):
    first, again, other = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "c.log"
    truth = gen.generate_kind(kind, first, 600_000, seed=4)
    assert gen.generate_kind(kind, again, 600_000, seed=4) == truth
    assert first.read_bytes() == again.read_bytes()
    assert (
        gen.generate_kind(kind, other, 600_000, seed=5).buried != truth.buried
        or other.read_bytes() != first.read_bytes()
    )
    assert gen.ensure(first, 600_000, seed=4, kind=kind) == truth  # reused, not written again
    assert gen.load_truth(first) == truth and truth.kind == kind


@pytest.mark.parametrize("which", ["preambles_log", "flood_log"])
def test_truth_points_at_every_buried_line(which, request):
    path, truth = request.getfixturevalue(which)
    data = path.read_bytes()
    lines = data.split(b"\n")
    assert truth.lines == data.count(b"\n") and truth.bytes == len(data)
    assert truth.buried and len({b.line for b in truth.buried}) == len(truth.buried)
    for buried in truth.buried:
        for offset, expected in enumerate(buried.text.rstrip("\n").split("\n")):
            assert _undress(lines[buried.line - 1 + offset]) == expected, buried


@pytest.mark.parametrize(
    ("kind", "size"), [("preambles", 1 << 20), ("preambles", 3 << 20), ("flood", 1 << 20), ("flood", 3 << 20)]
)
def test_new_kinds_have_about_the_size_asked_for(kind, size, tmp_path):
    truth = gen.generate_kind(kind, tmp_path / "x.log", size, seed=2)
    assert 0.9 * size <= truth.bytes <= 1.1 * size, truth.bytes
    if kind == "preambles":  # about one build job per 100 KB
        assert size / 200_000 <= truth.attempts <= size / 40_000, truth.attempts
    else:  # 100,000 error lines per 100 MB
        assert truth.error_lines == round(100_000 * size / (100 << 20))


def test_preambles_repeat_real_build_preambles_with_varying_values(preambles_log):
    path, truth = preambles_log
    text = path.read_text("utf-8")
    for marker in ("Collecting ", "Requirement already satisfied: ", "Installing build dependencies ... done",
                   "  running build_ext", "building 'flash_attn_2_cuda' extension", "Emitting ninja build file ",
                   "MAX_JOBS=", "Successfully installed ", "##[group]Run "):  # fmt: skip
        assert text.count(marker) >= 3, marker
    assert len(re.findall(r"\[\d+/\d+\] /usr/local/cuda-[\d.]+/bin/nvcc ", text)) > 100
    assert len(set(re.findall(r"torch\.__version__  = (\S+)", text))) > 2
    assert len(set(re.findall(r"MAX_JOBS=(\d+)", text))) > 2
    assert len(set(re.findall(r"/tmp/pip-install-\w+/", text))) >= truth.attempts // 2
    assert text.count("building '") >= truth.attempts // 2


def test_preamble_incidents_cover_every_cause_before_repeating_one():
    examples = gen.burial_examples()
    causes = {e.cause for e in examples}
    picked = preambles.pick_incidents(random.Random(1), examples, 20)
    assert len(picked) == 20
    assert len({e.cause for e in picked}) == min(20, len(causes))
    assert len(set(picked)) == len(picked)
    assert preambles.default_incidents(10 << 20) == preambles.default_incidents(1 << 30) == 20
    assert 1 <= preambles.default_incidents(1 << 20) < 20


def test_flood_has_the_distinct_error_lines_its_truth_counts(flood_log):
    path, truth = flood_log
    buried = {b.line for b in truth.buried}
    errors = [
        line
        for n, line in enumerate(path.read_bytes().split(b"\n"), start=1)
        if _ERROR_LINE.match(line) and n not in buried
    ]
    assert len(errors) == truth.error_lines == round(100_000 * (2 << 20) / (100 << 20))
    assert len(set(errors)) == len(errors)
    nvcc = sum(1 for line in errors if re.match(rb"^\S+\(\d+\): error: ", line))
    assert 0.5 * len(errors) < nvcc < 0.9 * len(errors)  # both forms, nvcc's the more


def test_the_generator_cli_writes_each_kind(tmp_path, capsys):
    for kind in gen.KINDS:
        assert gen.main(["--kind", kind, "--seed", "3", "300K", str(tmp_path / f"{kind}.log")]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["kind"] == kind and gen.load_truth(tmp_path / f"{kind}.log").kind == kind


@pytest.mark.parametrize("kind", ["preambles", "flood"])
def test_the_new_noise_alone_proves_no_cause(kind, tmp_path):
    """Fair ground truth: without incidents, explain finds no cause a rule proves in the noise."""
    path = tmp_path / "noise.log"
    gen.generate_kind(kind, path, 1 << 20, seed=6, causes=0)
    proc = subprocess.run(
        [sys.executable, "-m", "buildlog", "explain", "--format", "json", str(path)], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    roots = json.loads(proc.stdout)["root_causes"]
    assert {r["id"] for r in roots if r.get("engine", "rules") == "rules"} <= {"unknown"}


# --------------------------------------------------------------------------------------------
# The runner's checks: a missing cause or lost counts fail; a report without counts is n/a.


def _sample(report: dict, rc: int = 0) -> run_bench.Sample:
    return run_bench.Sample(1.0, 50.0, rc, json.dumps(report).encode(), b"")


def _flood_truth() -> gen.Truth:
    return gen.Truth(size=1, seed=1, kind="flood", error_lines=100,
                     buried=[gen.Buried("disk_full", "disk-full", 10, "x"), gen.Buried("compiler_oom", "compiler-killed", 20, "y")])  # fmt: skip


def _series(*samples: run_bench.Sample) -> run_bench.Series:
    return run_bench.Series("explain (hyperscan)", list(samples))


def test_runner_fails_a_report_that_misses_a_buried_cause():
    truth = _flood_truth()
    ok = {"root_causes": [{"id": "disk_full", "evidence": [{"line": 10}]}, {"id": "compiler_oom", "evidence": []}]}
    text, failed = run_bench.explain_check(_series(_sample(ok)), truth)
    assert not failed and "all 2 causes found" in text and "1/2 incident lines cited" in text and "n/a" in text
    partial = {"root_causes": [{"id": "disk_full", "evidence": []}]}
    text, failed = run_bench.explain_check(_series(_sample(ok), _sample(partial)), truth)  # any round that misses
    assert failed and text.startswith("FAIL: missed compiler_oom")
    assert run_bench.explain_check(_series(_sample(ok, rc=3)), truth)[1]


@pytest.mark.parametrize(
    ("volume", "failed"),
    [
        ({"candidates": 150, "analysed": 40, "repeated": 110}, False),
        ({"candidates": 150, "analysed": 40, "repeated": 100}, True),  # ten lines neither analysed nor counted
        ({"candidates": 90, "analysed": 40, "repeated": 50}, True),  # fewer candidates than error lines written
        ({"candidates": 150}, True),
    ],
)
def test_runner_checks_the_flood_counts(volume, failed):
    report = {"root_causes": [{"id": "disk_full"}, {"id": "compiler_oom"}], "volume": volume}
    text, bad = run_bench.explain_check(_series(_sample(report)), _flood_truth())
    assert bad is failed and text.startswith("FAIL") is failed, text
