"""Secrets never leave: the one mask, applied to every text of a Report before anyone sees it.

Masking happens here, where text leaves the analysis, rather than on every line read: a report
holds a few hundred lines at most, a log millions. The store and exports apply the same mask
(knowledge.mask(), whose rule set is buildlog/knowledge/secrets.toml) to what they keep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from buildlog.report.schema import Report

Mask = Callable[[str], str]


def mask_report(report: Report, mask: Mask) -> Report:
    """The report with every string in it masked."""
    return Report.model_validate(_walk(report.model_dump(), mask))


def _walk(value: Any, mask: Mask) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {mask(k) if isinstance(k, str) else k: _walk(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, mask) for v in value]
    return value
