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
        out = {mask(k) if isinstance(k, str) else k: _item(k, v, mask) for k, v in value.items()}
        if isinstance(value.get("command"), str) and isinstance(value.get("env"), dict):
            out["env"] = _env_of(value["env"], value["command"], out["command"], mask)
        return out
    if isinstance(value, list):
        return [_walk(v, mask) for v in value]
    return value


def _item(key: object, value: Any, mask: Mask) -> Any:
    """A mapping's value is masked with its key in front: `AWS_SECRET_ACCESS_KEY` says what the
    bare value beside it is (an attempt's environment, a risk's facts)."""
    if isinstance(key, str) and isinstance(value, str):
        masked = mask(f"{key}={value}")
        return masked[len(key) + 1 :] if masked.startswith(f"{key}=") else mask(value)
    return _walk(value, mask)


def _env_of(env: dict[str, Any], command: str, masked_command: str, mask: Mask) -> dict[str, Any]:
    """An attempt's variables: a value its command line shows, but the masked command no longer
    does, was (part of) a secret there, whatever the value looks like alone."""

    def hidden(v: Any) -> bool:
        core = v.strip("'\"") if isinstance(v, str) else ""
        return bool(core) and core in command and core not in masked_command

    return {mask(k): "***" if hidden(v) else _item(k, v, mask) for k, v in env.items()}
