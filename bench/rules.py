"""The bundled rules as the benchmark sees them: read straight from buildlog/knowledge/rules/*.toml.

The benchmark needs three things from the rules: their cause ids, their `fire` examples (the
messages it buries) and their patterns and anchors (grep's baseline). Reading the TOML itself,
rather than through buildlog's loader, keeps the benchmark working while the loader changes and
keeps it honest: the ground truth does not depend on the code it measures.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

# Keys that make a rule depend on more than its own line: the context around it, the command that
# ran, the facts of the log, or other causes it overrides.
CONDITIONS = ("context", "not_context", "command", "not_command", "facts", "overrides")


@dataclass(frozen=True)
class RuleRecord:
    id: str
    role: str
    cause: str
    pattern: str
    anchors: tuple[str, ...]
    events: tuple[str, ...]
    conditions: tuple[str, ...]
    fire: tuple[str, ...]


def rules_dir() -> Path:
    import buildlog

    return Path(buildlog.__file__).resolve().parent / "knowledge" / "rules"


@cache
def bundled_rules() -> tuple[RuleRecord, ...]:
    """Every bundled rule, files in name order and records in file order."""
    out = []
    for path in sorted(rules_dir().glob("*.toml"), key=lambda p: p.name):
        for raw in tomllib.loads(path.read_text("utf-8")).get("rule", []):
            out.append(
                RuleRecord(
                    id=raw["id"],
                    role=raw.get("role", "cause"),
                    cause=raw.get("cause", ""),
                    pattern=raw["pattern"],
                    anchors=tuple(raw.get("anchors", ())),
                    events=tuple(raw.get("events", ("any",))),
                    conditions=tuple(k for k in CONDITIONS if raw.get(k)),
                    fire=tuple(raw.get("examples", {}).get("fire", ())),
                )
            )
    return tuple(out)


def self_proving(rule: RuleRecord) -> bool:
    """A cause rule whose examples prove the cause wherever they stand: no condition, any event."""
    return rule.role == "cause" and not rule.conditions and rule.events == ("any",)
