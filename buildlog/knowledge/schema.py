"""The schema of every kind of knowledge file, as strict pydantic models (unknown keys are errors).

Only the loader imports this module: bundled knowledge is checked when its artefact is built, a
user's rule files when they are loaded. `buildlog schema --rules` publishes RuleFile's JSON schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from buildlog.knowledge.vocabulary import CHANGE_KINDS, FACTS, ROLES, STAGES, EventKind


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"bad regex {value!r}: {exc}") from None
    return value


def _only(known: Collection[str], what: str, label: str = "") -> Callable[[list[str]], list[str]]:
    """A check of a list of names: each is one of `known` (listed in the message under `label`)."""

    def check(value: list[str]) -> list[str]:
        unknown = [v for v in value if v not in known]
        if unknown:
            raise ValueError(f"unknown {what} {unknown}" + (f" ({label}: {', '.join(sorted(known))})" if label else ""))
        return value

    return check


class ExamplesSpec(Strict):
    """Texts the rule must fire on, and near-misses it must stay quiet on."""

    fire: list[str] = Field(min_length=1, description="texts (one or more lines) the rule must fire on")
    quiet: list[str] = Field(default_factory=list, description="near-misses the rule must not fire on")


class RuleSpec(Strict):
    """One detection rule."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="permanent id, e.g. my-team-cuda-12-only")
    role: Literal["cause", "symptom", "success", "noise"] = Field("cause", description=f"one of {ROLES}")
    cause: str = Field("", description="the cause id it proves (role cause); see `buildlog causes`")
    title: str = Field(min_length=5, description="one line: what the rule finds")
    description: str = Field("", description="why it matters; printed by `buildlog rule ID`")
    priority: int = Field(50, ge=0, le=100, description="a specific rule outranks a generic one")
    confidence: float = Field(0.9, ge=0.0, le=1.0)
    anchors: list[str] = Field(min_length=1, description="literal texts every matching line contains")
    pattern: str = Field(description="a Python regex with named groups, searched in the line")
    multiline: bool = Field(False, description="also search the line joined with the next ones")
    events: list[str] = Field(default_factory=lambda: ["any"], description="event kinds the line may be")
    context: str | None = Field(None, description="a regex some line of the same attempt must match")
    not_context: str | None = Field(None, description="a regex no line of the same attempt may match")
    command: str | None = Field(None, description="a regex the attempt's command must match")
    not_command: str | None = Field(None, description="a regex the attempt's command must not match")
    facts: dict[str, str] = Field(default_factory=dict, description="fact name -> regex its value must match")
    show_facts: list[str] = Field(default_factory=list, description="facts whose lines join the evidence")
    overrides: list[str] = Field(default_factory=list, description="cause ids this rule replaces in its attempt")
    fix: str = Field(
        "",
        description="the fix: {name} is filled from named groups and facts; lines starting '$ ' are commands (bash: printed in PowerShell for a Windows log); a line starting '[windows] ' is kept only for a Windows log, '[linux] ' only for any other",
    )
    references: list[str] = Field(default_factory=list, description="where the message comes from")
    written_from: list[str] = Field(
        default_factory=list,
        description="repositories (owner/name) whose users' logs the rule was written from: honest evaluation credits it only elsewhere",
    )
    examples: ExamplesSpec

    _check_regexes = field_validator("pattern", "context", "not_context", "command", "not_command")(_regex)

    @field_validator("facts")
    @classmethod
    def _fact_regexes(cls, value: dict[str, str]) -> dict[str, str]:
        for key, regex in value.items():
            if key not in FACTS:
                raise ValueError(f"unknown fact {key!r} (facts: {', '.join(FACTS)})")
            _regex(regex)
        return value

    _known_facts = field_validator("show_facts")(_only(FACTS, "facts"))
    _known_events = field_validator("events")(_only({k.value for k in EventKind} | {"any"}, "event kinds", "kinds"))

    @field_validator("anchors")
    @classmethod
    def _anchors(cls, value: list[str]) -> list[str]:
        for anchor in value:
            if not anchor.strip("\n") or "\n" in anchor.lstrip("\n") or anchor.startswith("\n\n"):
                raise ValueError(
                    f"an anchor is literal text on one line (a leading \\n means a line start): {anchor!r}"
                )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> RuleSpec:
        if self.role == "cause" and not self.cause:
            raise ValueError("a cause rule needs a cause id")
        if self.role != "cause" and self.cause:
            raise ValueError(f"a {self.role} rule names no cause")
        return self


class Disable(Strict):
    ids: list[str] = Field(default_factory=list)


class RuleFile(Strict):
    """A rule file: `[[rule]]` records."""

    rule: list[RuleSpec] = Field(default_factory=list)


class CauseSpec(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    summary: str = ""
    # The kind of line this cause rests on: where it is set, the classifier names the cause only when
    # one of the lines it read matches (a missing piece of CUDA must be named by the log).
    classifier_needs: str = ""
    # The rule whose fix a classifier answer of this cause gets (default: the cause's rule of the
    # highest priority, which may be one package's own: numba's for any missing piece of CUDA).
    fix_rule: str = ""

    _check_regexes = field_validator("classifier_needs")(_regex)


class CausesFile(Strict):
    cause: list[CauseSpec]


class FactSpec(Strict):
    id: str
    anchors: list[str] = Field(min_length=1)
    pattern: str
    multiline: bool = False
    all_matches: bool = False
    budget: int = Field(0, ge=0)
    change: bool = False
    says: str = ""  # what kind of statement it is, as a contradiction names it ("pip install", "the build's nvcc")
    role: Literal["stated", "used", "candidate"] = "stated"  # used: the build's own output shows what it used

    _check_regex = field_validator("pattern")(_regex)


class FactsFile(Strict):
    fact: list[FactSpec]


class StageSpec(Strict):
    stage: str
    anchors: list[str] = Field(min_length=1)
    pattern: str
    budget: int = Field(0, ge=0)

    _check_regex = field_validator("pattern")(_regex)

    @field_validator("stage")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in STAGES:
            raise ValueError(f"unknown stage {value!r} (stages: {', '.join(STAGES)})")
        return value


class StagesFile(Strict):
    stage: list[StageSpec]


class HintSpec(Strict):
    when: str
    text: str
    missing: str = ""


class HintsFile(Strict):
    hint: list[HintSpec]


class BearingSpec(Strict):
    cause: str
    changes: list[str]
    proves_past: list[str] = Field(default_factory=list)

    _kinds = field_validator("changes")(_only(CHANGE_KINDS, "kinds of change"))


class ResolutionFile(Strict):
    cause: list[BearingSpec]


class CheckSpec(Strict):
    id: str
    covers: str = ""
    severity: Literal["error", "warning"]
    title: str
    consequence: str
    fix: str


class JobsSpec(Strict):
    ram_share: float = Field(gt=0, le=1)
    per_job_gb: dict[str, float]


class ChecksFile(Strict):
    check: list[CheckSpec]
    jobs: JobsSpec


class GpuRow(Strict):
    name: str
    match: list[str] = Field(default_factory=list)
    cc: str
    source: str
    notes: str = ""


class CudaRow(Strict):
    version: str
    sm_min: str
    sm_max: str
    gcc_max: str | None = None
    driver_min_linux: str | None = None
    source: str
    notes: str = ""


class TorchRow(Strict):
    version: str
    cuda: list[str]
    source: str
    notes: str = ""


class DriverRow(Strict):
    branch: str
    cuda: str
    source: str
    spot_checked: str = ""
    notes: str = ""


class BoundRow(Strict):
    cuda: str
    torch_gcc_max: str | None = None
    notes: str = ""


class GpusFile(Strict):
    gpu: list[GpuRow]


class CudaFile(Strict):
    cuda: list[CudaRow]


class TorchFile(Strict):
    torch: list[TorchRow]


class DriversFile(Strict):
    driver: list[DriverRow]


class BoundsMeta(Strict):
    source: str
    notes: str = ""


class BoundsFile(Strict):
    meta: BoundsMeta
    bound: list[BoundRow]
