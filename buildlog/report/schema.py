"""The typed records that flow between stages, ending in the Report that renderers draw.

Every stage speaks in these models so that a renderer can be tested with a hand-built Report and
the JSON output has one published schema (`buildlog schema`).
"""

# No `from __future__ import annotations` here: pydantic would then evaluate each field's type from
# its text as every model is defined, at every start (some 15 million instructions, 1-2 ms).
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "2"

Outcome = Literal["success", "failure", "unknown"]
Status = Literal["failure", "success", "unknown", "empty"]


def _list() -> list[Any]:
    """An empty list, as a default factory.

    pydantic reads the signature of every default factory when it builds a model; for the builtin
    `list` or `dict` that means parsing a text signature (about half a millisecond a field), for a
    plain function it is one attribute read.
    """
    return []


def _dict() -> dict[str, Any]:
    """An empty dict, as a default factory (see `_list`)."""
    return {}


class Frozen(BaseModel):
    """Base for records that never change once built.

    Validators are built when a model is first used, not when it is defined: a run uses only
    some of the models, and building them all would add to the start-up of every command.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Evidence(Frozen):
    """One line of the original log that supports a finding."""

    line: int = Field(description="1-based line number in the original input")
    text: str = Field(description="the line as it reads after cleaning (colour, CI prefixes removed)")


class FactValue(Frozen):
    """A value the log states, and where it says so."""

    value: str
    line: int


class Facts(Frozen):
    """The environment as the log describes it; absent means the log does not say."""

    nvcc: FactValue | None = Field(None, description="CUDA release of the nvcc that compiles, e.g. 13.0")
    cuda_home: FactValue | None = None
    torch: FactValue | None = Field(None, description="torch version with local tag, e.g. 2.9.1+cu128")
    torch_cuda: FactValue | None = Field(None, description="CUDA release torch was built with")
    driver: FactValue | None = None
    driver_cuda: FactValue | None = Field(None, description="highest CUDA the driver supports (nvidia-smi)")
    gpus: list[FactValue] = Field(default_factory=_list)
    gpu_cc: list[FactValue] = Field(default_factory=_list, description="compute capabilities stated")
    gcc: FactValue | None = None
    python: FactValue | None = None
    interpreter: FactValue | None = None
    venv: FactValue | None = None
    max_jobs: FactValue | None = None
    jobs: FactValue | None = Field(None, description="parallel compile jobs the build actually ran (ninja -j)")
    nvcc_threads: FactValue | None = None
    arch_list: FactValue | None = Field(None, description="TORCH_CUDA_ARCH_LIST")
    gencode: list[FactValue] = Field(default_factory=_list, description="-gencode / -arch targets")
    ram_gb: FactValue | None = None
    cores: FactValue | None = None
    os: FactValue | None = None
    packages: dict[str, FactValue] = Field(default_factory=_dict, description="package versions named")


class Statement(Frozen):
    """One of the values a contradicted fact is given, where, and by what kind of line."""

    value: str
    line: int
    says: str = Field(description="what stated it: pip install, nvcc --version, the build's nvcc command, ...")
    used: bool = Field(False, description="the build's own output shows it used this value")


class Contradiction(Frozen):
    """One fact that the log states two ways, where nothing in between changed it."""

    fact: str = Field(description="the fact's name, as in facts: torch, torch_cuda, nvcc, python, cuda_home")
    values: list[Statement] = Field(description="each distinct value, in the order the log states them")
    used: Statement | None = Field(None, description="the build's own line that shows the value it used, if any")
    note: str = Field("", description="what the compatibility checks say of each value, where they differ")
    attempts: list[int] = Field(default_factory=_list, description="attempts where it occurred")


class RootCause(Frozen):
    """A diagnosed cause of failure with its proof and remedy."""

    id: str = Field(description="cause id, e.g. cuda_version_mismatch, or unknown")
    title: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=_list)
    fix: str = ""
    rule: str | None = Field(None, description="id of the rule that found it")
    engine: Literal["rules", "model", "checks"] = "rules"
    attempts: list[int] = Field(default_factory=_list, description="attempts where it occurred")


class Risk(Frozen):
    """Something the facts predict will break, whether or not an error line says so."""

    id: str
    title: str
    facts: dict[str, str] = Field(default_factory=_dict)
    consequence: str = ""
    fix: str = ""
    severity: Literal["error", "warning"] = "warning"
    lines: list[int] = Field(default_factory=_list)


class Check(Frozen):
    """A check run after a build: an import, a version, a test run. Not an attempt of its own."""

    line: int
    command: str
    outcome: Literal["passed", "failed"] = "passed"
    end_line: int = 0


class Attempt(Frozen):
    """One command that tried to build or install, and how it ended."""

    number: int
    line: int
    command: str
    env: dict[str, str] = Field(default_factory=_dict)
    interpreter: str | None = None
    outcome: Outcome = "unknown"
    stage: str | None = Field(None, description="furthest stage reached: resolve, build-deps, compile, link, install")
    incidents: list[str] = Field(default_factory=_list)
    end_line: int = 0
    checks: list[Check] = Field(default_factory=_list, description="checks run after this attempt, in order")


class Resolution(Frozen):
    """The attempt where an incident stopped occurring and the change that made the difference."""

    attempt: int
    change: str
    kind: str = Field("", description="what kind of change: toolkit, jobs, interpreter, isolation, packages, ...")
    other_changes: list[str] = Field(default_factory=_list)


class Incident(Frozen):
    """One distinct root cause across a session."""

    id: str
    cause: str
    attempts: list[int]
    resolved_by: Resolution | None = None


class Similar(Frozen):
    """A past failure that looks like this one."""

    key: str
    cause: str
    title: str
    score: float
    fix: str = ""
    seen: int = 1
    last_seen: str = ""
    origin: Literal["corpus", "store"] = "corpus"
    exact: bool = Field(False, description="the same failure lines as this log: a repeat, not a neighbour")


class Repeat(Frozen):
    """A message the log repeats: counted rather than analysed again."""

    line: int = Field(description="where it first appeared beyond the copies analysed")
    text: str
    count: int


class Volume(Frozen):
    """How much of the log was looked at: every selected line is analysed or counted, none dropped."""

    candidates: int = Field(0, description="lines the scan selected (they hold an anchor of some rule, fact or grammar)")
    analysed: int = Field(0, description="of which parsed and judged")
    repeated: int = Field(
        0, description="of which counted as repeats of a message already analysed since the last command"
    )
    top_repeats: list[Repeat] = Field(default_factory=_list, description="the most repeated messages")


class Report(Frozen):
    """Everything buildlog concluded about one log."""

    schema_version: str = SCHEMA_VERSION
    source: str
    lines: int
    status: Status
    headline: str
    narrative: list[str] = Field(
        default_factory=_list, description="the session attempt by attempt, in a few sentences (sessions only)"
    )
    root_causes: list[RootCause] = Field(default_factory=_list)
    facts: Facts = Field(default_factory=lambda: Facts())
    attempts: list[Attempt] = Field(default_factory=_list)
    incidents: list[Incident] = Field(default_factory=_list)
    risks: list[Risk] = Field(default_factory=_list)
    contradictions: list[Contradiction] = Field(
        default_factory=_list, description="facts the log states two ways: all the values, and which the build used"
    )
    relevant: list[Evidence] = Field(default_factory=_list, description="lines worth reading when no cause is certain")
    missing: str = Field("", description="what part of the log is missing, when it is too short to tell")
    volume: Volume = Field(default_factory=lambda: Volume())
    similar: list[Similar] = Field(default_factory=_list)
