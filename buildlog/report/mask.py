"""Secrets never leave: the one mask, applied to every text of a Report before anyone sees it.

Masking happens here, where text leaves the analysis, rather than on every line read: a report
holds a few hundred lines at most, a log millions. The store and exports apply the same mask
(knowledge.mask(), whose rule set is buildlog/knowledge/secrets.toml) to what they keep.

Only what changes is copied: a part of the report with no secret in it is kept as it is, so a
report of thousands of attempts is not held twice while it is masked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from buildlog.report.schema import Frozen, Report

Mask = Callable[[str], str]


def mask_report(report: Report, mask: Mask) -> Report:
    """The report with every string in it masked."""
    return _walk(report, mask)


def _walk(value: Any, mask: Mask) -> Any:
    """The value masked; the very same object where nothing in it changes."""
    if isinstance(value, str):
        masked = mask(value)
        return value if masked == value else masked
    if isinstance(value, Frozen):
        return _model(value, mask)
    if isinstance(value, dict):
        out = {mask(k) if isinstance(k, str) else k: _item(k, v, mask) for k, v in value.items()}
        return value if _same(value, out) else out
    if isinstance(value, (list, tuple)):
        items = [_walk(v, mask) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else type(value)(items)
    return value


def _same(before: dict[Any, Any], after: dict[Any, Any]) -> bool:
    return len(before) == len(after) and all(k in before and before[k] is v for k, v in after.items())


def _model(model: Frozen, mask: Mask) -> Frozen:
    command, env = getattr(model, "command", None), getattr(model, "env", None)
    with_env = isinstance(command, str) and isinstance(env, dict)  # an attempt: its env is masked with its command
    changes = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        masked = value if with_env and name == "env" else _walk(value, mask)
        if masked is not value:
            changes[name] = masked
    if with_env:
        masked_env = _env_of(env, command, changes.get("command", command), mask)
        if not _same(env, masked_env):
            changes["env"] = masked_env
    return model.model_copy(update=changes) if changes else model


def _item(key: object, value: Any, mask: Mask) -> Any:
    """A mapping's value is masked with its key in front: `AWS_SECRET_ACCESS_KEY` says what the
    bare value beside it is (an attempt's environment, a risk's facts)."""
    if isinstance(key, str) and isinstance(value, str):
        masked = mask(f"{key}={value}")
        masked = masked[len(key) + 1 :] if masked.startswith(f"{key}=") else mask(value)
        return value if masked == value else masked
    return _walk(value, mask)


def _env_of(env: dict[str, Any], command: str, masked_command: str, mask: Mask) -> dict[str, Any]:
    """An attempt's variables: a value its command line shows, but the masked command no longer
    does, was (part of) a secret there, whatever the value looks like alone."""

    def hidden(v: Any) -> bool:
        core = v.strip("'\"") if isinstance(v, str) else ""
        return bool(core) and core in command and core not in masked_command

    return {mask(k): "***" if hidden(v) else _item(k, v, mask) for k, v in env.items()}
