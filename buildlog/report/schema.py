"""The typed records that flow between stages, ending in the Report that renderers draw.

Every stage speaks in these records so that a renderer can be tested with a hand-built Report and
the JSON output has one published schema (`buildlog schema`). The classes below are that schema:
`model(Report)` makes the pydantic model of it, which prints the JSON schema and validates a
report read back (`Report.model_validate_json`). A run does not build pydantic models: importing
pydantic's BaseModel and building validators costs more than explaining a small log, so a record
is a plain frozen object with pydantic's names for what the stages use (`model_copy`,
`model_dump`, `model_dump_json`), and its JSON is the same bytes as its model's (a test
serialises every corpus report both ways).
"""

# No `from __future__ import annotations`: the fields' types are read from the annotations.
import json
from functools import cache
from types import UnionType
from typing import Any, ClassVar, Literal, NamedTuple, Union, get_args, get_origin

SCHEMA_VERSION = "2"

Outcome = Literal["success", "failure", "unknown"]
Status = Literal["failure", "success", "unknown", "empty"]


class FieldSpec(NamedTuple):
    """One field of a record: its type, its default (`...`: required) and what its schema says."""

    default: Any
    default_factory: Any
    schema: dict[str, Any]
    annotation: Any = None


def Field(default: Any = ..., *, default_factory: Any = None, **schema: Any) -> Any:  # noqa: N802  (pydantic's name)
    """A field's default and its description (or bounds) in the JSON schema."""
    return FieldSpec(default, default_factory, schema)


RECORDS: dict[str, type["Frozen"]] = {}


class Frozen:
    """Base for records that never change once built: fields from the annotations, keyword
    arguments only, unknown names refused; a list or dict given is copied, an int for a float
    field made a float, as the model would."""

    model_fields: ClassVar[dict[str, FieldSpec]] = {}

    def __init_subclass__(cls) -> None:
        fields = {}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            spec = cls.__dict__.get(name, ...)
            spec = spec if isinstance(spec, FieldSpec) else FieldSpec(spec, None, {})
            fields[name] = spec._replace(annotation=annotation)
            if name in cls.__dict__:
                delattr(cls, name)
        cls.model_fields = fields
        kinds = {n: get_origin(f.annotation) or f.annotation for n, f in fields.items()}
        cls._convert = {n: k for n, k in kinds.items() if k in (list, dict, float)}  # type: ignore[attr-defined]
        RECORDS[cls.__name__] = cls

    def __init__(self, **values: Any) -> None:
        unknown = values.keys() - self.model_fields.keys()
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        data = self.__dict__
        convert = self._convert  # type: ignore[attr-defined]
        for name, spec in self.model_fields.items():
            if name in values:
                value = values[name]
                data[name] = convert[name](value) if name in convert else value
            elif spec.default_factory is not None:
                data[name] = spec.default_factory()
            elif spec.default is ...:
                raise TypeError(f"{type(self).__name__}: {name} is required")
            else:
                data[name] = spec.default

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __iter__(self) -> Any:
        return iter(self.__dict__.items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self)})"

    def model_copy(self, update: dict[str, Any] | None = None) -> Any:
        """A copy with some fields replaced (not checked, as pydantic's is not)."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **(update or {}))
        return copy

    def model_dump(self, exclude_defaults: bool = False) -> dict[str, Any]:
        """The record as plain dicts and lists."""
        fields = self.model_fields
        dump = lambda v: v.model_dump(exclude_defaults) if isinstance(v, Frozen) else v  # noqa: E731
        return {k: _each(v, dump) for k, v in self if not (exclude_defaults and _is_default(fields[k], v))}

    def model_dump_json(self, indent: int | None = None, exclude_defaults: bool = False) -> str:
        """The record's JSON, as its pydantic model writes it."""
        data = self.model_dump(exclude_defaults=True) if exclude_defaults else self
        compact = None if indent else (",", ":")
        return json.dumps(data, indent=indent, separators=compact, ensure_ascii=False, default=vars)

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """The record from plain data, checked against the model."""
        return _record(model(cls).model_validate(data))

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Any:
        return _record(model(cls).model_validate_json(text))

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return model(cls).model_json_schema()  # type: ignore[no-any-return]


def _is_default(spec: FieldSpec, value: Any) -> bool:
    return value == (spec.default_factory() if spec.default_factory is not None else spec.default)


def _each(value: Any, leaf: Any) -> Any:
    """`value` with `leaf` applied to everything in its lists and dicts."""
    if isinstance(value, list):
        return [_each(v, leaf) for v in value]
    if isinstance(value, dict):
        return {k: _each(v, leaf) for k, v in value.items()}
    return leaf(value)


@cache
def model(record: type[Frozen]) -> Any:
    """The pydantic model of a record type (built when asked for: the schema, validation)."""
    from pydantic import ConfigDict, create_model
    from pydantic import Field as ModelField

    fields = {}
    for name, spec in record.model_fields.items():
        factory = spec.default_factory
        if isinstance(factory, type) and issubclass(factory, Frozen):
            factory = model(factory)
        default = {"default_factory": factory} if factory else {"default": spec.default}
        info = ModelField(**default, **spec.schema)
        fields[name] = (_model_type(spec.annotation), info)
    config = ConfigDict(frozen=True, extra="forbid")
    return create_model(record.__name__, __config__=config, __doc__=record.__doc__, __module__=__name__, **fields)  # type: ignore[call-overload]


def _model_type(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, Frozen):
        return model(annotation)
    args = get_args(annotation)
    if not args or get_origin(annotation) is Literal:
        return annotation
    types = tuple(_model_type(a) for a in args)
    return Union[types] if get_origin(annotation) in (Union, UnionType) else get_origin(annotation)[types]  # noqa: UP007


def _record(value: Any) -> Any:
    """A validated pydantic model's value as records."""
    record = RECORDS.get(type(value).__name__) if hasattr(value, "__pydantic_fields__") else None
    if record is None:
        return value
    return record(**{name: _each(getattr(value, name), _record) for name in record.model_fields})


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
    gpus: list[FactValue] = Field(default_factory=list)
    gpu_cc: list[FactValue] = Field(default_factory=list, description="compute capabilities stated")
    gcc: FactValue | None = None
    python: FactValue | None = None
    interpreter: FactValue | None = None
    venv: FactValue | None = None
    max_jobs: FactValue | None = None
    jobs: FactValue | None = Field(None, description="parallel compile jobs the build actually ran (ninja -j)")
    nvcc_threads: FactValue | None = None
    arch_list: FactValue | None = Field(None, description="TORCH_CUDA_ARCH_LIST")
    gencode: list[FactValue] = Field(default_factory=list, description="-gencode / -arch targets")
    ram_gb: FactValue | None = None
    cores: FactValue | None = None
    os: FactValue | None = None
    packages: dict[str, FactValue] = Field(default_factory=dict, description="package versions named")


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
    attempts: list[int] = Field(default_factory=list, description="attempts where it occurred")


class RootCause(Frozen):
    """A diagnosed cause of failure with its proof and remedy."""

    id: str = Field(description="cause id, e.g. cuda_version_mismatch, or unknown")
    title: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)
    fix: str = ""
    rule: str | None = Field(None, description="id of the rule that found it")
    engine: Literal["rules", "model", "checks"] = "rules"
    attempts: list[int] = Field(default_factory=list, description="attempts where it occurred")


class Risk(Frozen):
    """Something the facts predict will break, whether or not an error line says so."""

    id: str
    title: str
    facts: dict[str, str] = Field(default_factory=dict)
    consequence: str = ""
    fix: str = ""
    severity: Literal["error", "warning"] = "warning"
    lines: list[int] = Field(default_factory=list)


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
    env: dict[str, str] = Field(default_factory=dict)
    interpreter: str | None = None
    outcome: Outcome = "unknown"
    stage: str | None = Field(None, description="furthest stage reached: resolve, build-deps, compile, link, install")
    incidents: list[str] = Field(default_factory=list)
    end_line: int = 0
    checks: list[Check] = Field(default_factory=list, description="checks run after this attempt, in order")


class Resolution(Frozen):
    """The attempt where an incident stopped occurring and the change that made the difference."""

    attempt: int
    change: str
    kind: str = Field("", description="what kind of change: toolkit, jobs, interpreter, isolation, packages, ...")
    other_changes: list[str] = Field(default_factory=list)


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

    candidates: int = Field(
        0, description="lines the scan selected (they hold an anchor of some rule, fact or grammar)"
    )
    analysed: int = Field(0, description="of which parsed and judged")
    repeated: int = Field(
        0, description="of which counted as repeats of a message already analysed since the last command"
    )
    top_repeats: list[Repeat] = Field(default_factory=list, description="the most repeated messages")


class Report(Frozen):
    """Everything buildlog concluded about one log."""

    schema_version: str = SCHEMA_VERSION
    source: str
    lines: int
    status: Status
    headline: str
    narrative: list[str] = Field(
        default_factory=list, description="the session attempt by attempt, in a few sentences (sessions only)"
    )
    root_causes: list[RootCause] = Field(default_factory=list)
    facts: Facts = Field(default_factory=Facts)
    attempts: list[Attempt] = Field(default_factory=list)
    incidents: list[Incident] = Field(default_factory=list)
    risks: list[Risk] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(
        default_factory=list, description="facts the log states two ways: all the values, and which the build used"
    )
    relevant: list[Evidence] = Field(default_factory=list, description="lines worth reading when no cause is certain")
    missing: str = Field("", description="what part of the log is missing, when it is too short to tell")
    volume: Volume = Field(default_factory=Volume)
    similar: list[Similar] = Field(default_factory=list)
