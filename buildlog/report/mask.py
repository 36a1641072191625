"""Secrets never leave: the one mask, applied to every text of a Report before anyone sees it.

Masking happens here, where text leaves the analysis, rather than on every line read: a report
holds a few hundred lines at most, a log millions. The store applies the same mask to what it keeps.
"""

from __future__ import annotations

from typing import Any

from buildlog.ingest.redact import redact
from buildlog.report.schema import Report


def mask_text(text: str, paths: bool = False) -> str:
    """One text with every secret masked (and, with `paths`, user names, home folders and hosts)."""
    return redact(text, paths=paths)


def mask_report(report: Report, paths: bool = False) -> Report:
    """The report with every string in it masked."""
    return Report.model_validate(_walk(report.model_dump(), paths))


def _walk(value: Any, paths: bool) -> Any:
    if isinstance(value, str):
        return mask_text(value, paths)
    if isinstance(value, dict):
        return {_walk(k, paths) if isinstance(k, str) else k: _walk(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, paths) for v in value]
    return value
