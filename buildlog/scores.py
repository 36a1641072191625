"""The results of an evaluation: plain data shared by `buildlog eval` and its renderer."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class CaseResult:
    """How one case came out."""

    slug: str
    expected: list[str]
    predicted: list[str]
    status: str
    problems: list[str] = field(default_factory=list)
    chosen: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class EvalResult:
    """All case results with per-cause counts and the confusion of primary causes."""

    results: list[CaseResult]
    counts: dict[str, Counter[str]]
    confusion: Counter[tuple[str, str]]
    undiagnosed: int = 0  # cases whose thread never named a cause: left out, since no answer is known

    @property
    def misses(self) -> list[CaseResult]:
        return [r for r in self.results if not r.ok]

    def precision(self, cause: str) -> float:
        c = self.counts[cause]
        return c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0

    def recall(self, cause: str) -> float:
        c = self.counts[cause]
        return c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
