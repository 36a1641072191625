"""The scanner: candidate lines with the right numbers, whatever the chunking."""

from __future__ import annotations

import io
import platform

import pytest

from buildlog.ingest.reader import iter_chunks
from buildlog.knowledge.artefact import bundled
from buildlog.scan.engines import Anchor, hyperscan_available, make_engine
from buildlog.scan.scanner import MAX_LINE, Scanner, ScanSummary, message_key
from tests.conftest import CORPUS

LOG = b"ok\nerror: one\r\nok\n\x1b[31mFAILED: two\x1b[0m\nprogress 10%\rprogress 100%\nlast error: three"


def _scan(data: bytes, size: int, after: int = 2):
    summary = ScanSummary()
    cands = list(Scanner(["error:", "FAILED:"], after=after).scan(iter_chunks(io.BytesIO(data), size=size), summary))
    return cands, summary


@pytest.mark.parametrize("size", [1, 4, 9, 1024])
def test_line_numbers_do_not_depend_on_chunking(size):
    cands, summary = _scan(LOG, size)
    assert [c.number for c in cands] == [2, 4, 6]
    assert summary.lines == 6


def test_following_lines_are_collected_across_chunks():
    cands, _ = _scan(LOG, 3)
    assert cands[0].after == (b"ok", b"\x1b[31mFAILED: two\x1b[0m")


def test_carriage_returns_do_not_shift_numbers():
    cands, _ = _scan(b"a\rb\rc\nerror: x\n", 1024)
    assert cands[0].number == 2


def test_tail_keeps_the_last_lines():
    _, summary = _scan(LOG, 5)
    assert list(summary.tail)[-1] == (6, b"last error: three")


def test_huge_line_is_clipped_around_the_hit():
    data = b"x" * (MAX_LINE * 3) + b" error: here " + b"y" * (MAX_LINE * 3) + b"\n"
    cands, summary = _scan(data, 4096)
    assert len(cands) == 1 and len(cands[0].raw) <= MAX_LINE + 20 and b"error: here" in cands[0].raw
    assert summary.lines == 1


def test_nul_bytes_and_no_newline_at_all():
    cands, summary = _scan(b"\x00" * 10000, 1000)
    assert cands == [] and summary.lines == 1


def test_empty_input():
    cands, summary = _scan(b"", 10)
    assert cands == [] and summary.lines == 0


# --- engines, budgets, odd inputs ------------------------------------------------------------

ENGINES = ["plain", "hyperscan"] if hyperscan_available() else ["plain"]
WHEEL_MACHINES = ("x86_64", "AMD64", "aarch64", "arm64")  # where pyproject makes hyperscan a dependency


@pytest.mark.skipif(platform.machine() not in WHEEL_MACHINES, reason="hyperscan has no wheel for this machine")
def test_the_fast_engine_is_installed_where_it_is_a_dependency():
    assert hyperscan_available()
    assert "hyperscan" in ENGINES


ANCHORS = ["error:", "FAILED:", "\n+ ", "Deprecat", "No space left"]
BUDGETS = {"/bin/nvcc ": 2, "-gencode": 3}


def _lines(
    data: bytes,
    engine: str,
    size: int = 1 << 20,
    anchors=ANCHORS,
    budgets=None,
    resets=(),
    after: int = 2,
    repeats=10**9,
):
    """Candidate numbers (and the summary) from one scan; `resets` are the command anchors."""
    scanner = Scanner(list(anchors) + list(budgets or {}), budgets, resets, after=after, engine=engine, repeats=repeats)
    summary = ScanSummary()
    out = [cand.number for cand in scanner.scan(iter_chunks(io.BytesIO(data), size=size), summary)]
    return out, summary


def _corpus_logs():
    return sorted(CORPUS.glob("*.log"))[:25]


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_agree_with_each_other_on_the_corpus(engine):
    plan = bundled().plan
    for path in _corpus_logs():
        data = path.read_bytes()
        expected, _ = _lines(data, "plain", anchors=plan.anchors, budgets=plan.budgets, resets=plan.resets, repeats=3)
        got, _ = _lines(
            data, engine, size=997, anchors=plan.anchors, budgets=plan.budgets, resets=plan.resets, repeats=3
        )
        assert got == expected, path.name


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", [1, 5, 64, 1 << 20])
def test_line_start_anchors_count_only_at_line_starts(engine, size):
    data = b"+ first\nx + not a trace\n+ second\r\n  + indented\n"
    assert _lines(data, engine, size)[0] == [1, 3]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_budget_limits_lines_between_resets(engine):
    nvcc = b"[3/9] /usr/local/cuda/bin/nvcc -gencode arch=compute_80,code=sm_80 -c x.cu\n"
    data = nvcc * 5 + b"$ MAX_JOBS=2 pip install x\n" + nvcc * 5 + b"error: late\n" + nvcc
    got, _ = _lines(data, engine, anchors=["error:", "$ "], budgets=BUDGETS, resets=["$ "])
    # -gencode allows 3 lines, /bin/nvcc 2 (charged on the same lines): 3 before the command,
    # the command itself, 3 after it; the error line is free and charges nothing.
    assert got == [1, 2, 3, 6, 7, 8, 9, 12]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", [7, 50, 1 << 20])
def test_budget_decisions_do_not_depend_on_chunking(engine, size):
    nvcc = b"/usr/local/cuda/bin/nvcc -gencode arch=compute_90,code=sm_90\n"
    data = (nvcc * 4 + b"$ pip install y\nerror: e\n") * 5
    expected, _ = _lines(data, "plain", anchors=["error:", "$ "], budgets=BUDGETS, resets=["$ "])
    assert _lines(data, engine, size, anchors=["error:", "$ "], budgets=BUDGETS, resets=["$ "])[0] == expected


MIXED = (
    b"/usr/local/cuda/bin/nvcc -gencode arch=compute_90,code=sm_90 -c a.cu\n"
    b"a.cu(3): error: identifier x is undefined\n"
    b"plain noise\r\n"
    b"+ echo traced\n"
    b"-gencode again -gencode and error: on one line\n"
    b"x" * 300 + b" FAILED: late on a long line\n"
)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", [5, 333, 1 << 20])
def test_repeats_are_counted_not_taken_and_nothing_is_lost(engine, size):
    """A message taken `repeats` times between commands is counted after; every line is one or the other."""
    data = MIXED * 12
    everything, full = _lines(data, engine, size, budgets=BUDGETS)
    got, summary = _lines(data, engine, size, budgets=BUDGETS, repeats=3)
    assert len(got) < len(everything)
    assert summary.candidates == full.candidates == len(everything)
    assert summary.candidates - summary.repeated == len(got)
    assert set(got) <= set(everything)
    # each distinct message is taken at least once
    lines = data.split(b"\n")
    assert {message_key(lines[n - 1]) for n in everything} == {message_key(lines[n - 1]) for n in got}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_command_line_starts_the_repeats_afresh(engine):
    data = (b"error: same thing\n" * 5 + b"$ pip install x\n") * 3
    got, summary = _lines(data, engine, anchors=["error:", "$ "], resets=["$ "], repeats=2)
    assert got == [1, 2, 6, 7, 8, 12, 13, 14, 18]
    assert summary.repeated == 9 and summary.top_repeats()[0] == (3, b"error: same thing", 9)


def test_distinct_messages_differ_in_words_not_in_numbers_or_paths():
    assert message_key(b"/tmp/a/x1.cu(12): error: foo") == message_key(b"/tmp/b/y2.cu(400): error: foo")
    assert message_key(b'/tmp/a/x.cu(12): error: identifier "foo"') != message_key(
        b'/tmp/a/x.cu(12): error: identifier "bar"'
    )


def test_a_message_is_masked_word_by_word_as_the_whole_line_would_be():
    """message_key masks each distinct word once; the key is that of masking the line whole."""
    import random
    import re

    from buildlog.scan import scanner

    def whole(raw: bytes) -> bytes:
        return b" ".join(scanner._VOLATILE.sub(b"#", raw).split())

    rng = random.Random(12)
    alphabet = b"0123456789abcdefxXyzC:/\\ \t\x00()'\"[]._-"
    lines = [b"".join(bytes([rng.choice(alphabet)]) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    lines += [b"0x1f 1x2 C:/a/b deadbeef1 abcdef1 f:/x e0x9 12/ab/cd a1b2c3d4/x/y 9C:\\a\\b", b"  \t ", b""]
    long = b"x" * 2000 + b" /a/b/c(12): error: 0xff " + b"y" * 2000
    for _ in range(3):  # the cache of masked words fills and starts afresh, the keys do not change
        for raw in lines:
            assert message_key(raw) == whole(raw), raw
    assert message_key(long, [2010]) == whole(long[:512] + b"\x00" + long[1754:2266])
    assert re.fullmatch(rb"[^0-9]*", message_key(b"a1 22 333 f00d 0x1 x0 9")), "no digit is left unmasked"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_line_in_pieces_is_selected_once_and_counted_once(engine):
    data = b"a\n" + b"x" * 5000 + b" error: deep inside " + b"y" * 5000 + b" error: again\nb\nerror: next\n"
    scanner = Scanner(["error:"], after=1, engine=engine)
    summary = ScanSummary()
    cands = list(scanner.scan(iter_chunks(io.BytesIO(data), size=256, max_line=1024), summary))
    assert [c.number for c in cands] == [2, 4] and summary.lines == 4
    assert b"error: deep inside" in cands[0].raw


@pytest.mark.parametrize("engine", ENGINES)
def test_nul_bytes_and_one_endless_line_do_not_raise(engine):
    for data in (bytes(300_000), b"-Werror=format " * 20_000):
        cands, summary = _lines(data, engine, size=4096)
        assert cands == [] and summary.lines == 1 and summary.bytes == len(data)


def test_reader_cuts_long_lines_at_the_same_places_whatever_the_read_size():
    data = b"short\n" + b"z" * 2500 + b"\nend"
    for size in (1, 7, 100, 1000):
        chunks = list(iter_chunks(io.BytesIO(data), size=size, max_line=1000))
        ends = [sum(map(len, chunks[: i + 1])) for i, c in enumerate(chunks[:-1]) if not c.endswith(b"\n")]
        assert b"".join(chunks) == data and ends == [1006, 2006], size


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_find_overlapping_occurrences_and_line_starts(engine):
    found = make_engine([Anchor.parse(b"aa"), Anchor.parse(b"\nb")], engine).find(b"aaa\nb\nbaa", 0, frozenset())
    assert found == [(1, 0), (2, 0), (4, 1), (6, 1), (8, 0)]
    assert make_engine([Anchor.parse(b"aa")], engine).find(b"aa\naa", 3, frozenset()) == [(4, 0)]


def test_unbudgeted_anchors_stay_out_of_ordinary_compiler_output():
    """A free anchor found in every compile command or warning would make every line a candidate."""
    import random

    from bench import gen

    plan = bundled().plan
    anchors, budgets_of = plan.anchors, plan.budgets

    rng = random.Random(7)
    noise = "".join(gen.noise_unit(rng, i, 300) for i in range(300)) + "".join(gen.pip_block(rng) for _ in range(5))
    budgets = budgets_of
    flooding = [a for a in anchors if a not in budgets and a.lstrip("\n") in noise]
    assert not flooding, f"anchors found in ordinary build noise: {flooding}"


def test_past_the_first_commands_a_retry_loop_costs_counters():
    """A CI job that retries a thousand times: the first commands start afresh, later ones do not."""
    from buildlog.scan.scanner import FRESH_COMMANDS

    job = b"$ pip install flash-attn\nerror: the same failure\n"
    got, summary = _lines(job * (FRESH_COMMANDS + 40), "plain", anchors=["error:", "$ "], resets=["$ "], repeats=3)
    errors = [n for n in got if n % 2 == 0]
    assert len(errors) == FRESH_COMMANDS + 2  # one after each fresh command; then the count goes on to 3 and stops
    assert summary.candidates == len(got) + summary.repeated


def test_a_clipped_line_keeps_no_half_token():
    """A line clipped around its anchor loses the words the cuts went through, not half a secret."""
    token = b"ghp_" + b"A1b2C3d4" * 5
    data = b"x" * 100 + token + b" " + b"y" * (MAX_LINE // 2 - 30) + b" error: here " + b"z" * (MAX_LINE * 2) + b"\n"
    cands, _ = _scan(data, 1 << 20)
    raw = cands[0].raw
    assert b"error: here" in raw and raw.startswith(b"y")  # the cut fell inside the token: it is gone whole
    assert token[-12:] not in raw and not raw.endswith(b"z")


def test_only_a_command_anchor_starts_afresh_not_its_neighbours_in_the_plan():
    """`pip wheel ` and `+ pip install` both contain the kept anchor `pip`; only the second is a command."""
    data = b"error: same\n+ pip install x\nerror: same\npip wheel y\nerror: same\n"
    got, _ = _lines(
        data, "plain", anchors=["error:", "pip", "+ pip install", "pip wheel "], resets=["+ pip install"], repeats=1
    )
    assert got == [1, 2, 3, 4]  # the error after `pip wheel` repeats one already taken since the command


@pytest.mark.parametrize("engine", ENGINES)
def test_an_anchor_inside_one_inside_another_is_still_reported(engine):
    """`LLVM ERROR: out of memory` holds ` ERROR: `, which holds `ERROR: `: only the last is looked
    for, and each line must still carry every anchor it holds, however deep the nesting."""
    anchors = ["LLVM ERROR: out of memory", " ERROR: ", "ERROR: "]
    data = b"ok\nLLVM ERROR: out of memory\nx ERROR: y\nERROR: z\n"
    scanner = Scanner(anchors, after=0, engine=engine)
    found = {c.number: c.anchors for c in scanner.scan(iter_chunks(io.BytesIO(data)), ScanSummary())}
    assert found == {
        2: frozenset(anchors),
        3: frozenset({" ERROR: ", "ERROR: "}),
        4: frozenset({"ERROR: "}),
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_a_line_carries_every_anchor_it_holds_on_random_lines(engine):
    """A line with one anchor found looks only for the implied anchors whose text before the found
    one agrees with the line (Scanner._near_plan): on random lines built of the anchors' pieces,
    at the start of lines and not, every selected line carries exactly the anchors its text holds."""
    import random

    anchors = ["error:", "error: ", "fatal error: ", "a: error:", "error:error:", "rror: x", "ninja: error: "]
    anchors += ["e", "xe"]
    pieces = [b"error:", b"error", b"fatal ", b"a: ", b" ", b"x", b"ninja: ", b":", b"e", b"rror", b"f"]
    rng = random.Random(7)
    lines = [b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(4000)]
    data = b"\n".join(lines) + b"\n"
    anchors += ["f"]  # budgeted: once spent, left out of the search and looked for on the lines selected
    scanner = Scanner(anchors, {"f": 3}, after=0, engine=engine, repeats=10**9)
    got = {c.number: c.anchors for c in scanner.scan(iter_chunks(io.BytesIO(data), size=4096), ScanSummary())}
    for number, line in enumerate(lines, 1):
        held = frozenset(a for a in anchors if a.encode() in line)
        if number in got:
            assert got[number] == held, line
        else:
            assert held <= {"f"}, line
    assert sum("f" in a for a in got.values()) > 100
    assert any(plan[3] for plan in scanner._checks.values()), "the short way was taken"


def test_the_message_key_does_not_depend_on_the_word_cache_size(monkeypatch):
    from buildlog.scan import scanner

    monkeypatch.setattr(scanner, "_WORDS", 7)
    scanner._MASKED.clear()
    lines = [b"/a/b%d.cu(%d): error: x%d 0x%x f%d" % (i, i, i % 5, i, i % 11) for i in range(200)]
    for raw in lines * 2:
        assert message_key(raw) == b" ".join(scanner._VOLATILE.sub(b"#", raw).split())
    assert len(scanner._MASKED) <= 7
    scanner._MASKED.clear()


def test_the_lines_after_a_candidate_cut_in_one_go_are_those_read_line_by_line():
    """Scanner._following cuts the lines after a candidate from the bytes near it in one go; on
    random chunks (lines short and long, the chunk's end among them) they are the lines that
    _following_across reads one by one."""
    import random

    from buildlog.scan.scanner import _Feed

    rng = random.Random(3)
    scanner = Scanner(["error:"], after=6)
    for _ in range(30):
        lines = [b"x" * rng.choice([0, 5, 300, 3000, MAX_LINE + 10]) for _ in range(rng.randint(1, 40))]
        chunk = b"\n".join(lines) + rng.choice([b"\n", b""])
        following = b"tail\n" * 3
        ends = [i for i, byte in enumerate(chunk) if byte == 10]
        for end in ends:
            feed = _Feed(iter([following]), ScanSummary())
            got = scanner._following(chunk, end, feed)
            feed = _Feed(iter([following]), ScanSummary())
            assert got == scanner._following_across(chunk, end, feed)
