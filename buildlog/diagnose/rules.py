"""Rule records: loaded from TOML, validated with pydantic, compiled once.

A rule is knowledge, not code: the kind of line it matches (a literal anchor for the scanner and a
regex with named groups), the cause it proves, a fix template, and examples that must fire and
near-misses that must stay quiet. Loading fails loudly on unknown keys, bad regexes, unknown cause
ids and examples that contradict the pattern, so a broken rule never ships.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from buildlog.cache import validated, write_cache
from buildlog.errors import BuildlogError
from buildlog.knowledge.sources import knowledge_text, load_toml, parse_toml, toml_texts

Role = Literal["cause", "symptom", "success", "noise"]


class Examples(BaseModel):
    """Short texts the rule must fire on, and near-misses it must not fire on."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    fire: list[str] = Field(min_length=1)
    quiet: list[str] = Field(default_factory=list)


class Rule(BaseModel):
    """One detection rule, as written in buildlog/knowledge/rules/*.toml."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    role: Role = "cause"
    cause: str = ""
    title: str = Field(min_length=5)
    description: str = ""
    priority: int = Field(50, ge=0, le=100)
    confidence: float = Field(0.9, ge=0.0, le=1.0)
    anchors: list[str] = Field(min_length=1)
    pattern: str
    multiline: bool = False
    events: list[str] = Field(default_factory=lambda: ["any"])
    context: str | None = None
    not_context: str | None = None
    command: str | None = None
    not_command: str | None = None
    facts: dict[str, str] = Field(default_factory=dict)
    show_facts: list[str] = Field(default_factory=list, description="facts whose lines join the evidence")
    overrides: list[str] = Field(default_factory=list)
    fix: str = ""
    references: list[str] = Field(default_factory=list)
    examples: Examples

    @field_validator("pattern", "context", "not_context", "command", "not_command")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"bad regex {value!r}: {exc}") from None
        return value

    @field_validator("facts")
    @classmethod
    def _fact_regexes(cls, value: dict[str, str]) -> dict[str, str]:
        for key, regex in value.items():
            try:
                re.compile(regex)
            except re.error as exc:
                raise ValueError(f"bad regex for fact {key}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Rule:
        if self.role == "cause" and not self.cause:
            raise ValueError("a cause rule needs a cause id")
        if self.role != "cause" and self.cause:
            raise ValueError(f"a {self.role} rule names no cause")
        return self

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def cause_ids() -> dict[str, str]:
    """Cause id -> title, from knowledge/causes.toml."""
    return {c["id"]: c["title"] for c in load_toml("causes.toml")["cause"]}


def _check_examples(rule: Rule) -> list[str]:
    """Each example that fires must contain an anchor and match the pattern.

    Near-misses are checked through the whole pipeline by the tests: some stay quiet only because
    of a condition (the facts, the command, the context) that a bare regex cannot see.
    """
    problems = []
    for text in rule.examples.fire:
        if not any(anchor in text for anchor in rule.anchors):
            problems.append(f"example contains no anchor: {text!r}")
        lines = text.splitlines()
        if not any(rule.regex.search("\n".join(lines[i:])) for i in range(len(lines))):
            problems.append(f"pattern does not fire on its example: {text!r}")
    return problems


def _validate(raw: dict, origin: str, causes: dict[str, str]) -> Rule:
    try:
        rule = Rule.model_validate(raw)
    except ValidationError as exc:
        raise BuildlogError(f"{origin}: invalid rule {raw.get('id', '?')}: {exc}") from None
    if rule.role == "cause" and rule.cause not in causes:
        raise BuildlogError(f"{origin}: rule {rule.id} names unknown cause {rule.cause!r}")
    unknown = [c for c in rule.overrides if c not in causes]
    if unknown:
        raise BuildlogError(f"{origin}: rule {rule.id} overrides unknown causes {unknown}")
    problems = _check_examples(rule)
    if problems:
        raise BuildlogError(f"{origin}: rule {rule.id}: " + "; ".join(problems))
    return rule


def parse_rules(documents: list[tuple[str, dict]], causes: dict[str, str]) -> tuple[Rule, ...]:
    """Validate rule documents (name, parsed TOML); ids must be unique across files."""
    rules: list[Rule] = []
    seen: set[str] = set()
    for name, doc in documents:
        extra = set(doc) - {"rule"}
        if extra:
            raise BuildlogError(f"{name}: unknown top-level keys {sorted(extra)}")
        for raw in doc.get("rule", []):
            rule = _validate(raw, name, causes)
            if rule.id in seen:
                raise BuildlogError(f"{name}: duplicate rule id {rule.id}")
            seen.add(rule.id)
            rules.append(rule)
    return tuple(rules)


@cache
def load_rules() -> tuple[Rule, ...]:
    """All bundled rules, validated — fully once per version of the rule files.

    Validation compiles every regex and checks every example, which costs more than explaining a
    small log. Once a set of rule files has passed, the cache remembers it, and later runs build
    the same records without re-checking; regexes are then compiled when first needed.
    """
    texts = toml_texts("rules")
    ok, marker = validated("rules", [t for _, t in texts] + [knowledge_text("causes.toml")])
    documents = [(name, parse_toml(text, f"rules.{name}")) for name, text in texts]
    if ok:
        return tuple(_trusted(raw) for _, doc in documents for raw in doc.get("rule", []))
    rules = parse_rules(documents, cause_ids())
    write_cache(marker, b"")
    return rules


def _trusted(raw: dict) -> Rule:
    """A rule from files that already passed validation (same bytes, see load_rules)."""
    examples = Examples.model_construct(**{"quiet": [], **raw["examples"]})
    return Rule.model_construct(**{**_defaults(), **raw, "examples": examples})


@cache
def _defaults() -> dict:
    """Every optional field's default, so that building a trusted rule needs no factory calls."""
    out = {}
    for name, info in Rule.model_fields.items():
        if not info.is_required():
            out[name] = info.get_default(call_default_factory=True)
    return out
