"""Quiet lines: a rule's conditions read an attempt the same way, however many attempts came before.

Past the first FRESH_COMMANDS commands the scanner only counts a message it has taken a few times
before; the lines a fresh start at each command would have taken are kept, as text, for the
conditions on an attempt's lines (scan.scanner, diagnose.engine).
"""

from __future__ import annotations

import io
import random

import pytest

from buildlog.ingest.reader import iter_chunks
from buildlog.knowledge.artefact import bundled
from buildlog.knowledge.conditions import _needed_texts, condition_texts
from buildlog.knowledge.load import with_user_rules
from buildlog.pipeline import trace
from buildlog.scan import scanner as scan
from buildlog.scan.engines import hyperscan_available
from buildlog.scan.scanner import CONDITION_LINES, FRESH_COMMANDS, Scanner, ScanSummary

ENGINES = ["plain", "hyperscan"] if hyperscan_available() else ["plain"]

# Two team rules on one line: one needs the image line in its attempt, one must not see it there.
RULES = """
[[rule]]
id = "team-toolkit-on-cuda12-image"
cause = "cuda_version_mismatch"
title = "A CUDA 13 toolkit on our CUDA 12 images"
anchors = ["TEAM-CHECK: toolkit"]
pattern = 'TEAM-CHECK: toolkit (?P<found>\\d+\\.\\d+) is not allowed'
context = 'TEAM-IMAGE: base cuda12-devel'
priority = 95
fix = \"\"\"Use the toolkit of the image.\"\"\"

[rule.examples]
fire = ["TEAM-CHECK: toolkit 13.0 is not allowed"]
quiet = ["TEAM-CHECK: toolkit 12.8 is fine"]

[[rule]]
id = "team-toolkit-elsewhere"
cause = "cuda_too_old"
title = "A toolkit not allowed, off our images"
anchors = ["TEAM-CHECK: toolkit"]
pattern = 'TEAM-CHECK: toolkit (?P<found>\\d+\\.\\d+) is not allowed'
not_context = 'TEAM-IMAGE: base'
priority = 94
fix = \"\"\"Install an allowed toolkit.\"\"\"

[rule.examples]
fire = ["TEAM-CHECK: toolkit 13.0 is not allowed"]
quiet = ["TEAM-CHECK: toolkit 12.8 is fine"]

[[rule]]
id = "team-image-retired"
cause = "cuda_too_old"
title = "A retired team image"
anchors = ["TEAM-IMAGE: "]
pattern = 'TEAM-IMAGE: base (?P<image>\\S+) is retired'
fix = \"\"\"Move off {image}.\"\"\"

[rule.examples]
fire = ["TEAM-IMAGE: base cuda11-devel is retired"]
quiet = ["TEAM-IMAGE: base cuda12-devel /opt/images/1234"]
"""


def _job(n: int, failing: bool) -> str:
    """One CI job: the command, the image line (its path changes, its message does not), a build."""
    lines = [
        "$ pip install -v --no-build-isolation ./ext",
        f"TEAM-IMAGE: base cuda12-devel /opt/images/{4000 + n}/rootfs",
        f"  Building wheel for ext (setup.py): started {n}",
    ]
    if failing:
        lines += ["TEAM-CHECK: toolkit 13.0 is not allowed", "error: command 'nvcc' failed with exit code 1"]
    else:
        lines += ["  Building wheel for ext (setup.py): finished with status 'done'", "Successfully installed ext-1.0"]
    return "\n".join(lines) + "\n"


def _log(jobs: int) -> bytes:
    return "".join(_job(n, failing=n == jobs - 1) for n in range(jobs)).encode()


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    (folder / "team.toml").write_text(RULES)
    return with_user_rules(bundled(), [folder])


@pytest.mark.parametrize("jobs", [2, FRESH_COMMANDS + 8, 3 * FRESH_COMMANDS])
def test_a_condition_reads_the_late_attempt_as_it_reads_an_early_one(team, jobs):
    """The image line repeats a message taken in the first jobs: past the first commands it is only
    counted, and the context rule must still see it in its attempt, the not_context rule too."""
    analysis = trace(_log(jobs), team)
    causes = [c.rule for c in analysis.report.root_causes]
    assert causes[:1] == ["team-toolkit-on-cuda12-image"], causes
    assert "team-toolkit-elsewhere" not in analysis.fired
    assert analysis.report.volume is None or analysis.report.volume.repeated >= 0


def test_the_late_attempt_is_read_as_before_the_fix_would_not(team, monkeypatch):
    """Without quiet lines (the scanner of before), the late attempt's condition misses its line:
    the test above would fail, so it tests the quiet lines and not the log."""
    original = Scanner.__init__

    def without_quiet_lines(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self._conditions = ()  # nothing kept: the conditions see only the lines taken

    monkeypatch.setattr(Scanner, "__init__", without_quiet_lines)
    causes = [c.rule for c in trace(_log(FRESH_COMMANDS + 8), team).report.root_causes]
    assert causes[:1] == ["team-toolkit-elsewhere"]


def _taken(data: bytes, engine: str, monkeypatch=None, fresh: int | None = None):
    """(line, raw) of every candidate and quiet line of one scan, and the quiet ones alone."""
    if fresh is not None:
        monkeypatch.setattr(scan, "FRESH_COMMANDS", fresh)
    scanner = Scanner(["error:", "warn ", "$ "], None, ["$ "], after=0, engine=engine, repeats=3)
    summary = ScanSummary()
    got = [(c.number, c.raw) for c in scanner.scan(iter_chunks(io.BytesIO(data), size=4096), summary)]
    return sorted(got + list(summary.quiet)), list(summary.quiet)


@pytest.mark.parametrize("engine", ENGINES)
def test_taken_and_quiet_lines_are_what_a_fresh_start_at_every_command_takes(engine, monkeypatch):
    """On random logs of many commands: the lines taken and the quiet lines together are exactly the
    lines a scanner that starts afresh at every command takes (budgets are another policy: a
    budgeted anchor spent past the first commands stays spent, as it did before)."""
    rng = random.Random(11)
    messages = [b"error: disk %d full" % i for i in range(6)] + [b"error: path /a/b/%d" % i for i in range(3)]
    for _ in range(6):
        lines = []
        for _ in range(rng.randint(150, 400)):
            roll = rng.random()
            if roll < 0.1:
                lines.append(b"$ make -j%d" % rng.randint(1, 9))
            elif roll < 0.2:
                lines.append(b"warn unused %d" % rng.randint(1, 3))
            elif roll < 0.3:
                lines.append(b"plain output")
            else:
                lines.append(rng.choice(messages).replace(b"%", b"%d" % rng.randint(0, 99)))
        data = b"\n".join(lines) + b"\n"
        both, quiet = _taken(data, engine)
        fresh, none = _taken(data, engine, monkeypatch, fresh=10**9)
        monkeypatch.undo()
        assert none == [] and both == fresh
        assert quiet or data.count(b"$ make") <= FRESH_COMMANDS + 1


@pytest.mark.parametrize("engine", ENGINES)
def test_only_quiet_lines_holding_a_needed_text_are_kept(engine):
    job = b"$ make\nerror: in /opt/torch/include/x.h\nerror: plain failure 1\nerror: \x1b[1mtorch\x1b[0m/include\n"
    needed = ((b"torch/include",), (b"plain", b"failure 2"))
    scanner = Scanner(["error:", "$ "], None, ["$ "], after=0, engine=engine, repeats=1, conditions=needed)
    summary = ScanSummary()
    list(scanner.scan(iter_chunks(io.BytesIO(job * (FRESH_COMMANDS + 5))), summary))
    kept = {raw for _, raw in summary.quiet}
    colour = b"error: \x1b[1mtorch\x1b[0m/include"  # it holds the text only once cleaned: kept in doubt
    assert kept == {b"error: in /opt/torch/include/x.h", colour}
    assert len(summary.quiet) == 2 * 5


def test_the_texts_a_condition_needs():
    def needed(regex):
        return sorted(sorted(texts) for texts in _needed_texts(regex))

    assert needed(r"(?m)^FAILED: \S|/bin/nvcc |\bcc1plus\b") == [["/bin/nvcc "], ["FAILED: "], ["cc1plus"]]
    either = [["abc", "fgh"], ["de", "fgh"], ["site-packages", "torch"]]
    assert needed(r"site-packages[\\/]+torch|(?:abc|de)fgh") == either
    assert needed(r"x{0,2}hello(?!\S)") == [["hello"]]
    for regex in (r"a\nb", r"(?s)a.b", r"^abc", r"abc$", r"(?i)abc", r"\d+", r"ab(?=c\s)", r"[^x]abc", r"abc|\d"):
        assert _needed_texts(regex) is None, regex  # may cross a line, reads the text's edges, or needs no text


def test_every_bundled_condition_is_tied_to_texts_and_its_matches_hold_them():
    """Else every quiet line is kept (memory grows with a long log). Strings generated from each
    condition's own parse tree (as the pattern-cost test does, literals kept as they are) that the
    condition matches hold every text of one of its sets."""
    import re

    from tests.test_pattern_cost import _Gen, sre_c

    class Witness(_Gen):
        def chars(self, node):
            return [chr(node[1])] if node[0] is sre_c.LITERAL else super().chars(node)

    k = bundled()
    assert condition_texts(k.rules)
    conditions = sorted({r for rule in k.rules for r in (rule.context, rule.not_context) if r})
    matched = 0
    for regex in conditions:
        needed = _needed_texts(regex)
        assert needed, regex
        gen = Witness(regex, 0)
        for variant in range(24):
            for m in re.finditer(regex, "x " + gen.text(gen.tree, variant) + " y"):
                matched += 1
                assert any(all(t in m.group(0) for t in texts) for texts in needed), (regex, m.group(0))
    assert matched >= 10 * len(conditions)


# A team rule whose context is a line no anchor of any rule, fact or stage selects.
UNANCHORED = """
[[rule]]
id = "team-toolkit-on-pinned-runner"
cause = "cuda_version_mismatch"
title = "A toolkit not allowed on the pinned runners"
anchors = ["TEAM-CHECK: toolkit"]
pattern = 'TEAM-CHECK: toolkit (?P<found>\\d+\\.\\d+) is not allowed'
context = 'runner pinned to cuda1\\d'
fix = \"\"\"Use the runner's toolkit.\"\"\"

[rule.examples]
fire = ["TEAM-CHECK: toolkit 13.0 is not allowed"]
quiet = ["TEAM-CHECK: toolkit 12.8 is fine"]
"""


def _far(lines: list[str], filler: int = 40) -> bytes:
    """The lines with plain output between them, farther apart than the lines kept after a candidate."""
    return "".join(line + "\n" + "".join(f"  step {i}\n" for i in range(filler)) for line in lines).encode()


@pytest.mark.parametrize("commands", [1, FRESH_COMMANDS + 3])
def test_a_context_reads_a_line_that_no_anchor_selects(tmp_path, commands):
    (tmp_path / "team.toml").write_text(UNANCHORED)
    rules = with_user_rules(bundled(), [tmp_path])
    job = ["$ make wheel", "runner pinned to cuda12 (runner-7)", "TEAM-CHECK: toolkit 13.0 is not allowed"]
    log = _far(["$ make wheel", "runner pinned to cuda12 (runner-7)", "ok"] * (commands - 1) + job)
    assert "team-toolkit-on-pinned-runner" in trace(log, rules).fired
    assert "team-toolkit-on-pinned-runner" not in trace(_far(job[:1] + job[2:]), rules).fired


def test_a_not_context_reads_a_line_that_no_anchor_selects():
    """git's "Submodule path '...': checked out" says the submodules came: a later "not a git
    repository" is then no missing submodule, however far apart the two lines are."""
    failed = [
        "$ git submodule update --init --recursive",
        "fatal: not a git repository (or any of the parent directories): .git",
    ]
    fetched = [
        failed[0],
        "Submodule path 'csrc/cutlass': checked out 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'",
        failed[1],
    ]
    assert "git-submodule-without-repository" in trace(_far(failed), bundled()).fired
    assert "git-submodule-without-repository" not in trace(_far(fetched), bundled()).fired


def _condition_scan(job: bytes, regex: str, jobs: int) -> tuple[list[bytes], list[tuple[int, bytes]]]:
    """The candidates and the quiet lines of `jobs` copies of one job, with one condition found by
    `torch/include`."""
    scanner = Scanner(["error:", "$ "], None, ["$ "], after=0, condition_anchors=((regex, (b"torch/include",)),))
    summary = ScanSummary()
    taken = [c.raw for c in scanner.scan(iter_chunks(io.BytesIO(job * jobs), size=4096), summary)]
    return taken, [(n, text) for n, text in summary.quiet if b"torch/include" in text]  # not the repeated errors


def test_a_line_only_a_condition_reads_is_kept_quiet_in_every_attempt():
    """Its first match in each attempt, the late ones too; a text on lines that never match stops
    being tried past CONDITION_LINES lines of an attempt."""
    many = b"".join(b"built against torch/include/h%d.h\n" % i for i in range(CONDITION_LINES + 5))
    job = b"$ make\n" + many + b"error: failed\n"
    per_job, jobs = len(job.splitlines()), FRESH_COMMANDS + 5
    taken, quiet = _condition_scan(job, r"torch/include/h3\.h", jobs)
    assert not any(b"torch/include" in raw for raw in taken)  # never a candidate: no record reads it
    assert [(n - 1) // per_job for n, _ in quiet] == list(range(jobs))  # one in every attempt
    assert all(text == b"built against torch/include/h3.h" for _, text in quiet)
    late = rf"torch/include/h{CONDITION_LINES + 1}\.h"  # the text's budget is spent before it comes
    assert _condition_scan(job, late, jobs)[1] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_condition_s_text_selects_no_line_a_spent_budget_left_out(engine):
    """A compile line holds a budgeted anchor and a text a condition needs: past the budget it is
    still no candidate (the lines a record reads are what they were), only a quiet line."""
    job = b"$ make\n" + b"".join(b"nvcc -I/venv/torch/include -c k%d.cu\n" % i for i in range(6)) + b"error: failed\n"
    finds = (("torch/include", (b"torch/include",)),)
    with_texts = Scanner(
        ["error:", "$ ", "nvcc -"], {"nvcc -": 2}, ["$ "], after=0, engine=engine, condition_anchors=finds
    )
    plain = Scanner(["error:", "$ ", "nvcc -"], {"nvcc -": 2}, ["$ "], after=0, engine=engine)
    got = []
    for scanner in (with_texts, plain):
        summary = ScanSummary()
        got.append([c.number for c in scanner.scan(iter_chunks(io.BytesIO(job * 3)), summary)])
    assert got[0] == got[1] and len(got[0]) == 3 * 4  # each job: the command, two compile lines, the error


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("with_conditions", [True, False])
def test_line_numbers_stay_right_when_a_chunk_ends_on_a_counted_or_quiet_line(engine, with_conditions):
    """The lines counted or kept quiet after a chunk's last candidate are numbered too: every
    candidate and quiet line of the next chunks has its own number (small chunks, many of them)."""
    rng = random.Random(5)
    kinds = [b"$ make -j2", b"error: broke %d", b"error: same", b"built torch/include/x%d.h", b"plain %d"]
    lines = [rng.choice(kinds).replace(b"%d", b"%d" % rng.randint(0, 3)) for _ in range(3000)]
    data = b"\n".join(lines) + b"\n"
    finds = (("torch/include", (b"torch/include",)),) if with_conditions else ()
    scanner = Scanner(["error:", "$ "], None, ["$ "], after=0, engine=engine, repeats=1, condition_anchors=finds)
    summary = ScanSummary()
    got = [(c.number, c.raw) for c in scanner.scan(iter_chunks(io.BytesIO(data), size=512), summary)]
    for number, raw in got + list(summary.quiet):
        assert lines[number - 1] == raw, (number, raw)
    assert len(got) > 100 and (len(summary.quiet) > 100 or not with_conditions)


def test_a_condition_that_ignores_case_leaves_the_others_their_lines(tmp_path):
    """A user condition with `(?i)` cannot be found by a text; the bundled conditions still are."""
    (tmp_path / "team.toml").write_text(UNANCHORED.replace("context = 'runner pinned", "context = '(?i)runner pinned"))
    rules = with_user_rules(bundled(), [tmp_path])
    assert rules.plan.conditions is None and rules.plan.condition_anchors
    failed = [
        "$ git submodule update --init --recursive",
        "fatal: not a git repository (or any of the parent directories): .git",
    ]
    fetched = [
        failed[0],
        "Submodule path 'csrc/cutlass': checked out 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'",
        failed[1],
    ]
    assert "git-submodule-without-repository" not in trace(_far(fetched), rules).fired
