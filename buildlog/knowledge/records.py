"""The records knowledge is made of, as the stages use them: small immutable records.

They are built from checked data only (knowledge/load.py), so they carry no validation of their
own; regexes are compiled on first use, since a run needs only those of the lines it meets.
They are NamedTuples rather than frozen dataclasses: read by name, compared and hashed by value
all the same, but about ten times cheaper to define, which every run does (a frozen, slotted
dataclass costs about half a millisecond to create, compiling its generated methods). Rule stays
a frozen dataclass: user rules and tests derive variants of it with dataclasses.replace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple


@cache
def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled once per process, whichever record asks."""
    return re.compile(pattern, flags)


class Cause(NamedTuple):
    id: str
    title: str
    summary: str = ""
    classifier_needs: str = ""  # a regex one of the classifier's lines must match before it names this cause
    fix_rule: str = ""  # the rule whose fix a classifier answer of this cause gets


class Examples(NamedTuple):
    fire: tuple[str, ...]
    quiet: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rule:
    """One detection rule: the kind of line it matches, the cause it proves, the fix it suggests."""

    id: str
    title: str
    anchors: tuple[str, ...]
    pattern: str
    examples: Examples
    role: str = "cause"
    cause: str = ""
    description: str = ""
    priority: int = 50
    confidence: float = 0.9
    multiline: bool = False
    events: frozenset[str] = frozenset({"any"})
    context: str | None = None
    not_context: str | None = None
    command: str | None = None
    not_command: str | None = None
    facts: Mapping[str, str] = field(default_factory=dict)
    show_facts: tuple[str, ...] = ()
    overrides: tuple[str, ...] = ()
    fix: str = ""
    references: tuple[str, ...] = ()
    written_from: tuple[str, ...] = ()  # repositories whose logs the rule was written from
    origin: str = "bundled"  # the file a user rule came from

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.pattern)


class FactPattern(NamedTuple):
    """A statement of facts in passing (knowledge/facts.toml): each named group is a fact."""

    id: str
    anchors: tuple[str, ...]
    pattern: str
    multiline: bool = False
    all_matches: bool = False
    budget: int = 0
    change: bool = False  # the line reports a change (an install), not just the state
    says: str = ""  # what kind of statement it is ("pip install", "the build's nvcc"), for contradictions
    role: str = "stated"  # "used": the build's own output; "candidate": a version considered, not in force

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.pattern, re.MULTILINE)


class StageMarker(NamedTuple):
    """A kind of line that shows a build reached a stage (knowledge/stages.toml)."""

    stage: str
    anchors: tuple[str, ...]
    pattern: str
    budget: int = 0

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.pattern)


class Hint(NamedTuple):
    """What to say when a symptom rule fired and no cause explains the failure."""

    when: str
    text: str
    missing: str = ""


class Bearing(NamedTuple):
    """Which kinds of change can resolve a cause, and which causes a failure with it has got past."""

    changes: tuple[str, ...]
    proves_past: frozenset[str] = frozenset()


class CheckText(NamedTuple):
    """The words of a cross-fact check; its logic is diagnose/checks.py under the same id."""

    id: str
    title: str
    severity: str
    consequence: str
    fix: str
    covers: str = ""


class Jobs(NamedTuple):
    """Peak memory of one compile job, by package, for the MAX_JOBS advice."""

    ram_share: float
    per_job_gb: Mapping[str, float]
