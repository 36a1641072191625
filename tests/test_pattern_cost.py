"""No log line, however long or hostile, can stall a run: every regex is attacked with its worst lines.

What this guarantees: every regex that buildlog applies to log text (each rule's `pattern`,
`context`, `not_context`, `command`, `not_command` and fact conditions, every fact pattern, every
stage marker, and the cleaner's CI-prefix and ANSI patterns) handles each of the lines generated
against it below in under LIMIT_S seconds, searched the way buildlog searches it, on the whole
line (not only within the window that parse/window.py cuts out): one line of 16 or 64 KB with
`re.search`; a `multiline` record's line joined with the next 6 lines; a `context` regex over many
lines joined by newlines, as it is over an attempt.

The lines are not a fixed list: they are generated from each pattern's parse tree (sre_parse), so a
new or changed pattern is attacked as soon as it exists. For every repeated sub-pattern the
generator builds lines that repeat strings the repeat accepts (alone, with separators, and glued to
the start of what follows it), between a prefix that leads into the repeat and a tail that is
complete, missing its first character, missing its last, or absent: the shapes that make a
backtracking engine retry a repeat from every start position (quadratic) or split a run between
two repeats (cubic). The pattern's literals (the rule's anchors) repeated, and a whole matching
line cut short and repeated, complete the set. A search that runs past TIMEOUT_S is interrupted, so
a regression fails with its time instead of hanging the suite.

Patterns are read straight from the TOML files, not through buildlog's loader.
"""

from __future__ import annotations

import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    from re import _compiler as sre_compile
    from re import _constants as sre_c
    from re import _parser as sre_parse

    import tomllib
else:  # pragma: no cover
    import sre_compile
    import sre_constants as sre_c
    import sre_parse

    import tomli as tomllib

KNOWLEDGE = Path(__file__).resolve().parent.parent / "buildlog" / "knowledge"
LIMIT_S = 0.5  # per pattern per line, on a 2-core machine
TIMEOUT_S = 2.0  # a search this slow is stopped and reported as failing
SIZE = 16 * 1024  # the longest line the scanner passes on (scan/scanner.py MAX_LINE)
BIG = 64 * 1024  # the slowest lines at SIZE are tried again at this size: a pattern must not scale badly
RETRY = 8
# Characters a class is probed with; the first ones accepted become the repeated strings.
POOL = "a0Z .:/-_'\"()[],;=+|`\\~#\t>$%│é\n"
SEPARATORS = (" ", ".", ":", "/", "a.so", ", ")


@dataclass(frozen=True)
class Case:
    """One regex as buildlog applies it."""

    origin: str  # e.g. "rule undefined-symbol-import: pattern"
    source: str
    flags: int = 0
    mode: str = "line"  # line | multiline | context | match | sub
    anchors: tuple[str, ...] = ()


def _toml(name: str) -> dict:
    return tomllib.loads((KNOWLEDGE / name).read_text(encoding="utf-8"))


def _cases() -> list[Case]:
    cases = []
    for path in sorted((KNOWLEDGE / "rules").glob("*.toml")):
        for rule in tomllib.loads(path.read_text(encoding="utf-8")).get("rule", []):
            rid, anchors = rule["id"], tuple(rule["anchors"])
            mode = "multiline" if rule.get("multiline") else "line"
            cases.append(Case(f"rule {rid}: pattern", rule["pattern"], 0, mode, anchors))
            for key in ("context", "not_context"):
                if key in rule:
                    cases.append(Case(f"rule {rid}: {key}", rule[key], 0, "context"))
            for key in ("command", "not_command"):
                if key in rule:
                    cases.append(Case(f"rule {rid}: {key}", rule[key]))
            for fact, regex in rule.get("facts", {}).items():
                cases.append(Case(f"rule {rid}: facts.{fact}", regex))
    for fact in _toml("facts.toml")["fact"]:
        mode = "multiline" if fact.get("multiline") else "line"
        cases.append(Case(f"fact {fact['id']}", fact["pattern"], re.MULTILINE, mode, tuple(fact["anchors"])))
    for cause in _toml("causes.toml")["cause"]:
        if cause.get("classifier_needs"):
            cases.append(Case(f"cause {cause['id']}: classifier_needs", cause["classifier_needs"]))
    for stage in _toml("stages.toml")["stage"]:
        cases.append(Case(f"stage {stage['stage']}", stage["pattern"], 0, "line", tuple(stage["anchors"])))
    from buildlog.ingest import clean

    cases.append(Case("clean: CI prefixes", clean._PREFIX.pattern, clean._PREFIX.flags, "match"))
    cases.append(Case("clean: ANSI codes", clean._ANSI.pattern, clean._ANSI.flags, "sub"))
    return cases


# --- generating lines from a pattern's parse tree -------------------------------------------------

_REPEATS = {sre_c.MAX_REPEAT, sre_c.MIN_REPEAT} | (
    {sre_c.POSSESSIVE_REPEAT} if hasattr(sre_c, "POSSESSIVE_REPEAT") else set()
)
_ONE_CHAR = {sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.ANY, sre_c.IN}


class _Gen:
    """Strings that (parts of) one parsed pattern accept."""

    def __init__(self, source: str, flags: int) -> None:
        self.tree = sre_parse.parse(source, flags)
        self.state = self.tree.state
        self.flags = flags
        self._chars: dict[int, list[str]] = {}

    def chars(self, node: tuple) -> list[str]:
        """The characters of POOL that a one-character node accepts."""
        key = id(node)
        if key not in self._chars:
            try:
                one = sre_compile.compile(sre_parse.SubPattern(self.state, [node]), self.flags)
                accepted = [c for c in POOL if one.fullmatch(c)]
            except Exception:  # a node that cannot stand alone: fall back to a letter
                accepted = []
            self._chars[key] = [c for c in accepted if c != "\n"] or accepted or ["a"]
        return self._chars[key]

    def text(self, data, k: int = 0) -> str:
        """One string the node sequence accepts; `k` varies the characters and branches chosen."""
        out = []
        for node in data:
            op, av = node
            if op in _ONE_CHAR:
                choices = self.chars(node)
                out.append(choices[k % len(choices)])
            elif op in _REPEATS:
                lo, hi, sub = av
                out.append(self.text(sub, k) * min(max(lo, 1), hi))
            elif op is sre_c.SUBPATTERN:
                out.append(self.text(av[-1], k))
            elif op is sre_c.BRANCH:
                alts = av[1]
                out.append(self.text(alts[k % len(alts)], k))
            elif op is sre_c.GROUPREF_EXISTS:
                out.append(self.text(av[1], k))
            elif getattr(sre_c, "ATOMIC_GROUP", None) is op:
                out.append(self.text(av, k))
            # AT, ASSERT, ASSERT_NOT, GROUPREF: nothing to add
        return "".join(out)

    def repeats(self, data=None):
        """Every repeat node, with the nodes before and after it on the way from the root."""
        items = list(self.tree if data is None else data)
        for i, node in enumerate(items):
            before, after = items[:i], items[i + 1 :]
            if node[0] in _REPEATS:
                yield before, node, after
            for sub in _children(*node):
                for b, rep, a in self.repeats(sub):
                    yield before + [("__wrap__", b)], rep, [("__wrap__", a)] + after

    def flat(self, data, k: int) -> str:
        out = []
        for node in data:
            if node[0] == "__wrap__":
                out.append(self.flat(node[1], k))
            else:
                out.append(self.text([node], k))
        return "".join(out)

    def literals(self, data=None) -> list[str]:
        """Runs of literal characters anywhere in the pattern."""
        data = self.tree if data is None else data
        found, run = [], []
        for op, av in data:
            if op is sre_c.LITERAL:
                run.append(chr(av))
                continue
            if run:
                found.append("".join(run))
                run = []
            for sub in _children(op, av):
                found.extend(self.literals(sub))
        if run:
            found.append("".join(run))
        return found


def _children(op, av) -> list:
    if op in _REPEATS:
        return [av[2]]
    if op is sre_c.SUBPATTERN:
        return [av[-1]]
    if op is sre_c.BRANCH:
        return list(av[1])
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [av[1]]
    if op is sre_c.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]
    return []


def _fill(prefix: str, unit: str, tail: str, size: int) -> str:
    if not unit:
        return ""
    count = max(1, (size - len(prefix) - len(tail)) // len(unit))
    return prefix + unit * count + tail


def attack_lines(source: str, flags: int, anchors: tuple[str, ...] = (), size: int = SIZE) -> dict[str, str]:
    """Hostile lines for one pattern, each about `size` characters, keyed by how they were made."""
    gen = _Gen(source, flags)
    lines: dict[str, str] = {}
    seen: set[str] = set()

    def add(name: str, text: str) -> None:
        if text and text not in seen and name not in lines:
            seen.add(text)
            lines[name] = text

    for b_nodes, rep, a_nodes in gen.repeats():
        body = rep[1][2]
        samples = list(dict.fromkeys(gen.text(body, k) for k in range(4)))
        samples = [s for s in samples if s][:3] or ["a"]
        for k in range(2):
            before, after = gen.flat(b_nodes, k), gen.flat(a_nodes, k)
            first_literal = next((lit for lit in gen.literals(_unwrap(a_nodes)) if lit), "")
            units = list(samples)
            units += [samples[0] + sep for sep in SEPARATORS]
            units += [samples[0] + frag for frag in (after[:1], first_literal, after[:-1]) if frag]
            tails = {"tail": after, "tail-no-first": after[1:], "tail-no-last": after[:-1], "no-tail": ""}
            for u in dict.fromkeys(units):
                for tname, tail in tails.items():
                    add(
                        f"repeat {rep[1][:2]} of {u[:12]!r} after {before[:16]!r}, {tname}",
                        _fill(before, u, tail, size),
                    )
    witness = [gen.text(gen.tree, k) for k in range(3)]
    for lit in sorted(set(gen.literals()) | set(anchors), key=len, reverse=True)[:6]:
        for sep in ("", " ", "\n" if flags & re.MULTILINE else "\t"):
            add(f"literal {lit[:20]!r} repeated, sep {sep!r}", _fill("", lit + sep, "", size))
    for w in dict.fromkeys(witness):
        cut = w[:-1]
        for sep in ("", " ", ":"):
            add(f"match cut short {cut[:20]!r} repeated, sep {sep!r}", _fill("", cut + sep, "", size))
    return lines


def _unwrap(nodes):
    out = []
    for node in nodes:
        if node[0] == "__wrap__":
            out.extend(_unwrap(node[1]))
        else:
            out.append(node)
    return out


# --- timing --------------------------------------------------------------------------------------


class _Slow(Exception):
    pass


def _alarm(*_):
    raise _Slow


def timed(fn, *args, timeout: float = TIMEOUT_S) -> float:
    """Seconds `fn(*args)` took; a call past `timeout` is interrupted and reported as taking `timeout`."""
    guarded = hasattr(signal, "setitimer")
    if guarded:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        fn(*args)
        return time.perf_counter() - start
    except _Slow:
        return timeout
    finally:
        if guarded:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def steady(fn, *args) -> float:
    """The time of one call; a slow one is timed twice more and the fastest counts (the machine may be busy)."""
    first = timed(fn, *args)
    if first < LIMIT_S:
        return first
    return min(first, *(timed(fn, *args) for _ in range(2)))


def _applications(case: Case, regex: re.Pattern[str], line: str):
    """(what, callable, args): the ways buildlog applies this regex to text made of `line`."""
    if case.mode == "match":
        yield "match", regex.match, line
    elif case.mode == "sub":
        yield "sub", regex.sub, "", line
    elif case.mode == "context":
        yield "search", regex.search, line
        short = line[: len(line) // 16]
        yield "search 16 lines", regex.search, "\n".join([short] * 16)
    elif case.mode == "multiline":
        yield "search", regex.search, line
        short = line[: len(line) // 4]
        yield "search 7 lines", regex.search, "\n".join([short] * 7)
    else:
        yield "search", regex.search, line


def slowest(case: Case) -> list[tuple[float, str]]:
    """(seconds, description) of every attack on the case, slowest first.

    Every line is tried at SIZE; the RETRY slowest recipes are made again at BIG and tried again, so
    a pattern that is quadratic but cheap at SIZE still shows.
    """
    regex = re.compile(case.source, case.flags)
    results = []
    for name, line in attack_lines(case.source, case.flags, case.anchors, SIZE).items():
        for how, fn, *args in _applications(case, regex, line):
            results.append((steady(fn, *args), name, f"{how} {len(line) // 1024} KB: {name}"))
    results.sort(reverse=True)
    retry = list(dict.fromkeys(name for _, name, _ in results))[:RETRY]
    big = attack_lines(case.source, case.flags, case.anchors, BIG)
    for name in retry:
        line = big.get(name, "")
        for how, fn, *args in _applications(case, regex, line) if line else ():
            results.append((steady(fn, *args), name, f"{how} {len(line) // 1024} KB: {name}"))
    return sorted(((s, what) for s, _, what in results), reverse=True)


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c.origin for c in CASES])
def test_no_line_stalls_a_pattern(case: Case) -> None:
    worst = slowest(case)
    slow = [f"{t:.2f}s {what}" for t, what in worst if t >= LIMIT_S]
    assert not slow, f"{case.origin} ({case.source!r}) is slow on:\n" + "\n".join(slow[:8])


def test_every_kind_of_pattern_is_attacked() -> None:
    kinds = {c.origin.split(":")[-1].strip().split(".")[0] for c in CASES if c.origin.startswith("rule ")}
    assert {"pattern", "context", "command", "not_command", "facts"} <= kinds
    assert any(c.origin.startswith("fact ") for c in CASES) and any(c.origin.startswith("stage ") for c in CASES)


def test_the_generator_finds_the_known_cubic_line() -> None:
    """The undefined-symbol pattern as it was (34 s on a 4 KB line) is caught even on a short line."""
    old = r"(?P<library>[^\s:]+\.so[\w.]*): undefined symbol: (?P<symbol>\S+)"
    regex = re.compile(old)
    lines = attack_lines(old, 0, size=1500)
    slow = next((name for name, line in lines.items() if timed(regex.search, line, timeout=LIMIT_S) >= LIMIT_S), None)
    assert slow, "no generated line makes the old cubic pattern slow"
    new = next(c for c in CASES if c.origin == "rule undefined-symbol-import: pattern")
    assert new.source != old
