"""The shortcuts a big log takes must not change a single answer.

Five of them: located compiler diagnostics are read without lark (parse.events._Located), a line
seen before is not parsed again (parse.events.MEMO_SIZE), an
event keeps only the lines after it that something reads (pipeline.KEPT_AFTER, unless a multi-line
pattern may search it), and those are let go once no attempt's failure lines can reach them
(pipeline._Unread); and a step keeps the first few findings of a symptom rule and its latest
(diagnose.engine.MAX_SAME). A quarter of the corpus logs is analysed both ways and must give the same report, the
same events (kind, line, text, fields) and the same failure lines.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lark.exceptions import LarkError

from buildlog import pipeline
from buildlog.diagnose import engine
from buildlog.ingest.clean import clean_line
from buildlog.knowledge.artefact import bundled
from buildlog.learn.features import failure_lines
from buildlog.parse import events as parse_events
from buildlog.parse.events import _Located, _token_fields

KNOWLEDGE = bundled()
CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("cases/*.log")) + sorted(CORPUS.glob("pasted/**/*.log"))
COMPARED = LOGS[::4]  # a quarter of the corpus, analysed twice: enough kinds of log, and the suite stays fast


def _lines() -> list[str]:
    out: set[str] = set()
    for log in LOGS:
        for raw in log.read_bytes().splitlines():
            text = clean_line(raw).lstrip()
            if text:
                out.add(text)
    return sorted(out)


def _lark(text: str) -> tuple[str, dict[str, str]] | None:
    try:
        tree = KNOWLEDGE.parser("diagnostic").parse(text)
    except LarkError:
        return None
    node = tree.children[0]
    return str(node.data), _token_fields(node)


def test_located_reader_agrees_with_lark_wherever_it_answers():
    reader = _Located.of(KNOWLEDGE.parser("diagnostic"))
    assert reader is not None
    lines = _lines()
    rnd = random.Random(12)
    pieces = [" ", "\t", ":", "(", ")", "\n", "error", "#1", "7", "x", " :", "C123", "-D", ",3", "fatal "]
    mutated = []
    for text in rnd.sample(lines, min(len(lines), 4000)):
        for _ in range(3):
            i = rnd.randrange(len(text) + 1)
            mutated.append(text[:i] + rnd.choice(pieces) + text[i:])
    answered = 0
    for text in lines + mutated:
        fields = reader.fields(text)
        if fields is not None:
            answered += 1
            assert _lark(text) == ("located", fields), text
    assert answered > 500  # the corpus is full of compiler diagnostics: the shortcut is taken


def test_located_reader_reads_the_common_shapes():
    reader = _Located.of(KNOWLEDGE.parser("diagnostic"))
    assert reader is not None
    for text in (
        "csrc/attn.cpp:12:5: error: 'foo' was not declared in this scope",
        'csrc/attn.cu(45): warning #177-D: variable "x" was declared but never referenced',
        r"C:\src\attn.cpp(12): fatal error C1189: #error:  -- unsupported Microsoft Visual Studio version!",
    ):
        assert reader.fields(text) == _lark(text)[1]
    assert reader.fields("nvcc fatal   : Unsupported gpu architecture 'compute_35'") is None  # a tool line: lark's


def test_a_grammar_of_another_shape_is_left_to_lark():
    from buildlog.knowledge.parsers import build_parser

    changed = KNOWLEDGE.grammar_data["diagnostic"]["grammar"].replace(
        'located: LOCATION SEVERITY CODE? ":" MESSAGE?', 'located: LOCATION SEVERITY ":" MESSAGE?'
    )
    assert _Located.of(build_parser(changed)) is None
    assert _Located.of(build_parser(KNOWLEDGE.grammar_data["diagnostic"]["grammar"])) is not None


def _seen(analysis) -> tuple:
    events = [(e.kind, e.line, e.text, dict(e.fields), e.commands, e.anchors) for e in analysis.events]
    lines = [failure_lines(analysis.events, s.start, s.end) for s in analysis.attempts] + [
        failure_lines(analysis.events)
    ]
    return analysis.report.model_dump(), events, analysis.failure, analysis.fired, lines


@pytest.fixture(scope="module")
def both_ways():
    short = [_seen(pipeline.trace(log.read_bytes(), KNOWLEDGE)) for log in COMPARED]
    patch = pytest.MonkeyPatch()
    patch.setattr(pipeline, "KEPT_AFTER", 10**6)
    patch.setattr(engine, "MAX_SAME", 10**9)
    patch.setattr(parse_events, "MEMO_SIZE", 0)
    patch.setattr(pipeline._Unread, "__call__", lambda *args: None)
    patch.setattr(parse_events, "_located", lambda knowledge: None)
    try:
        long = [_seen(pipeline.trace(log.read_bytes(), KNOWLEDGE)) for log in COMPARED]
    finally:
        patch.undo()
    return short, long


def test_corpus_logs_give_the_same_answers_with_and_without_the_shortcuts(both_ways):
    short, long = both_ways
    assert len(short) == len(COMPARED) > 80
    for log, a, b in zip(COMPARED, short, long, strict=True):
        assert a == b, log.name


def test_a_long_attempt_lets_go_of_the_neighbours_no_one_reads():
    names = [
        "".join(chr(97 + i // 26**k % 26) for k in range(3)) for i in range(400)
    ]  # distinct once numbers are masked
    body = [
        f'src/{n}.cu({i + 3}): error: identifier "{n}" is undefined\n    {n} = 0;\n          ^\n'
        for i, n in enumerate(names)
    ]
    log = ("$ pip install -v .\n" + "".join(body) + "error: command '/usr/bin/nvcc' failed with exit code 1\n").encode()
    kept = pipeline.trace(log, KNOWLEDGE)
    patch = pytest.MonkeyPatch()
    patch.setattr(pipeline._Unread, "__call__", lambda *args: None)
    try:
        whole = pipeline.trace(log, KNOWLEDGE)
    finally:
        patch.undo()
    with_after = sum(1 for e in kept.events if e.after)
    assert with_after < 100 < sum(1 for e in whole.events if e.after)  # most let go, the last ones kept
    assert _seen(kept) == _seen(whole)


def test_a_step_keeps_a_few_findings_of_one_symptom_rule_and_its_latest():
    names = ["".join(chr(97 + i // 26**k % 26) for k in range(3)) for i in range(200)]
    log = "$ pip install -v .\n" + "".join(
        f'src/{n}.cu({i + 3}): error: identifier "{n}" is undefined\n' for i, n in enumerate(names)
    )
    summary = pipeline.ScanSummary()
    events = pipeline.scan_and_parse(iter([log.encode()]), KNOWLEDGE, summary)
    steps = pipeline.segment(events, summary.lines, KNOWLEDGE)
    found = engine.Diagnoser(KNOWLEDGE).findings(events, steps, lambda n: pipeline.Facts())
    errors = [f.line for f in found if f.rule.id == "compiler-error-diagnostic"]
    analysed = [e.line for e in events if "error:" in e.text]
    assert len(analysed) == 200 and errors == [*analysed[: engine.MAX_SAME], analysed[-1]]


def test_the_diagnostic_word_gate_is_the_plain_word_boundary_search():
    """parse.events._DIAG_WORD, written to skip to its letters, finds what `\\b(?:...)\\b` finds."""
    import re

    plain = re.compile(r"\b(?:error|warning|fatal|note)\b")
    rnd = random.Random(5)
    pieces = ["error", "warning", "fatal", "note", "notes", "Error", "xerror", "_", "é", "1", " ", ":", "e", "n", "-"]
    texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 8))) for _ in range(20_000)] + _lines()[:5000]
    for text in texts:
        a, b = plain.search(text), parse_events._DIAG_WORD.search(text)
        assert (a and a.span()) == (b and b.span()), text


def test_a_line_that_starts_with_a_path_gets_the_grammars_every_look_would_give():
    """parse.events.grammars_for looks at a line starting with `/` only where it can match: on
    random such lines (commands run by their path among them) and the corpus's, the same answer."""
    rnd = random.Random(11)
    pieces = ["/", "usr", "bin", "pip", "pip3", "python", "python3.11", ".11", "3", " ", "\t", "\xa0", "\x1c", "-m", " x",
              "install", "wheel", "-V", "-c ", "a.py", ".py:", "Warning:", "error", ": ", "note", "(12)", "A=1", "--version"]  # fmt: skip
    texts = ["/" + "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 9))) for _ in range(30_000)]
    texts += [t for t in _lines() if t.startswith("/")]
    for text in texts:
        for indent in (0, 2):
            assert parse_events.grammars_for(text, indent) == parse_events._looks(text, indent), text
    assert parse_events.grammars_for("/usr/bin/pip install x", 0) == ("command",)


def test_whether_a_line_is_located_is_asked_of_one_pattern_as_of_each_terminal_in_turn():
    """_Located.fields(keep=False) asks one pattern of atomic groups (parse.events._whole_line):
    on the corpus lines and on random ones of the terminals' pieces, the same yes and no."""
    reader = _Located.of(KNOWLEDGE.parser("diagnostic"))
    assert reader is not None and reader.whole is not None
    rnd = random.Random(13)
    pieces = ["a", "/x", "C:", "\\", ":", "(", ")", "12", ",3", " ", "\t", "error", "fatal", "fatal error", "note",
              "warning", "remark", "#", "177", "-D", "C1", ": ", "msg", "x:1:2:", "(7)", "\xa0"]  # fmt: skip
    texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10))) for _ in range(40_000)] + _lines()
    parts = [["a.cu(12):", "b:3:4:", "C:\\x(1,2) :", "x(7)", "y::1:", "a(b:1:", "c:1"], ["", " ", "\t "],
             ["error", "fatal error", "fatal", "note", "remark", "warn"], ["", " "], ["", "#177-D", "C1", "#x", "2"],
             ["", " "], [":", "", " :"], ["", " ", " m", "m", " \xa0"]]  # fmt: skip
    for _ in range(20_000):
        texts.append("".join(rnd.choice(p) if rnd.random() < 0.9 else rnd.choice(pieces) for p in parts))
    answered = 0
    for text in texts:
        whole = reader.fields(text, keep=False)
        assert whole == (None if reader.fields(text) is None else {}), text
        answered += whole is not None
    assert answered > 1500
