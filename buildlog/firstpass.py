"""The first pass: bytes -> candidate lines -> events, selected by the anchors of every rule,
fact pattern, stage marker and grammar.

It needs the scanner, the cleaner and the grammars, not the rules engine or the report models:
the anchors and their budgets are remembered in the user cache, keyed by the knowledge files
they come from, so a run can start reading its input before the rest of buildlog is loaded
(see cli/ahead.py). Working them out loads and checks every rule, which is left to the first
run after the knowledge changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from buildlog import __version__
from buildlog.cache import remembered
from buildlog.ingest.clean import clean_line
from buildlog.knowledge.sources import knowledge_text, toml_texts
from buildlog.parse.events import GRAMMAR_ANCHORS, Event, parse_line
from buildlog.scan.scanner import Candidate, Scanner, ScanSummary

PLAN_FORMAT = "1"  # bump when what the plan is made of changes beyond the knowledge files

# A log that floods the scan (a hundred thousand compiler errors, the same message in a loop) is
# analysed by its first and its last candidate lines: the first say what went wrong, the last how
# it ended. Without a bound, every candidate becomes an event and memory and time grow with the
# input. The real logs of the corpus stay far below (at most about 1,700 candidates).
KEEP_FIRST = 5_000
KEEP_FIRST_BYTES = 8 << 20
KEEP_LAST = 1_000
KEEP_LAST_BYTES = 2 << 20


@cache
def anchor_plan() -> tuple[tuple[bytes, ...], dict[bytes, int]]:
    """(anchors, budgets), remembered per version of buildlog and of the knowledge files."""
    texts = [t for _, t in toml_texts("rules")]
    texts += [knowledge_text(name) for name in ("causes.toml", "facts.toml", "stages.toml")]
    key = "\0".join([__version__, PLAN_FORMAT, *GRAMMAR_ANCHORS, *texts]).encode("utf-8")
    words, budgets = remembered("anchors", key, work_out_plan)
    return tuple(words), dict(budgets)


def work_out_plan() -> tuple[list[bytes], dict[bytes, int]]:
    """The plan from the validated knowledge: the anchors, and which of them have a budget.

    An anchor that some unbudgeted record (a rule, an unbudgeted fact pattern or stage marker,
    a grammar) also uses has no budget: its lines are always wanted.
    """
    from buildlog.diagnose.rules import load_rules
    from buildlog.facts import fact_patterns
    from buildlog.segment import stage_markers

    rules = load_rules()
    budgeted = [(r.anchors, r.budget) for r in fact_patterns()] + [(m.anchors, m.budget) for m in stage_markers()]
    words: set[str] = set(GRAMMAR_ANCHORS)
    unlimited: set[str] = set(GRAMMAR_ANCHORS)
    for rule in rules:
        words.update(rule.anchors)
        unlimited.update(rule.anchors)
    budgets: dict[str, int] = {}
    for record_words, budget in budgeted:
        words.update(record_words)
        for word in record_words:
            if budget:
                budgets[word] = max(budget, budgets.get(word, 0))
            else:
                unlimited.add(word)
    plan = sorted(w.encode("utf-8") for w in words)
    return plan, {w.encode("utf-8"): n for w, n in budgets.items() if w not in unlimited}


def parse_events(chunks: Iterable[bytes], summary: ScanSummary, redact_paths: bool = False) -> list[Event]:
    """Scan, clean (secrets masked) and parse the candidate lines; at most the first KEEP_FIRST
    and the last KEEP_LAST of them (and as many bytes), counting the others in summary.skipped.

    Budgets start afresh at each command, as the scan waits on the command's line.
    """
    words, budgets = anchor_plan()
    scanner = Scanner(words, after=6, budgets=budgets)
    events: list[Event] = []
    kept_bytes = 0
    candidates = scanner.scan(chunks, summary)
    for cand in candidates:
        event = _event(cand, redact_paths)
        if event.kind == "command":
            scanner.reset_budgets()
        events.append(event)
        kept_bytes += cand.size
        if len(events) >= KEEP_FIRST or kept_bytes >= KEEP_FIRST_BYTES:
            scanner.keep_last(KEEP_LAST, KEEP_LAST_BYTES, summary)
            break
    events += [_event(cand, redact_paths) for cand in candidates]
    return events


def _event(cand: Candidate, redact_paths: bool) -> Event:
    after = tuple(clean_line(raw, redact_paths) for raw in cand.after)
    return parse_line(cand.number, clean_line(cand.raw, redact_paths), after)
