"""Which records (rules, fact patterns) a line may concern, by the literal anchors they name.

Every rule and fact pattern names anchors that its lines must contain. Asking each record in
turn repeats the anchors that records share; here each distinct anchor is looked for once per
line, which keeps the cost per event flat as the knowledge grows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class AnchorIndex(Generic[T]):
    """Records by their anchors; `present` gives those with an anchor in a text, in their order."""

    def __init__(self, records: Sequence[T], anchors_of: Callable[[T], Iterable[str]]) -> None:
        self.records = tuple(records)
        self._by_anchor: dict[str, list[int]] = defaultdict(list)
        for index, record in enumerate(self.records):
            for anchor in anchors_of(record):
                self._by_anchor[anchor].append(index)

    def present(self, text: str) -> list[T]:
        indices = {i for anchor, owners in self._by_anchor.items() if anchor in text for i in owners}
        return [self.records[i] for i in sorted(indices)]
