"""The one loader of knowledge: TOML sources -> checked data -> the Knowledge object.

Each kind of file has its schema (knowledge/schema.py); across files, every reference is checked:
the cause ids rules, checks and resolutions name, the fact names and event kinds rules use, the
values fix templates name, the symptom rules hints are keyed by. Examples run: a rule's `fire`
texts must contain an anchor and match, so a broken rule never loads. Bundled knowledge goes
through here when its artefact is built (knowledge/artefact.py); a user's rule files every run.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.knowledge.bundle import Knowledge, rule_from
from buildlog.knowledge.records import Rule
from buildlog.knowledge.vocabulary import DERIVED_VALUES, FACT_GROUP_ALIASES, FACT_GROUPS_COMBINED, FACTS, GRAMMARS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_PLACEHOLDER = re.compile(r"\{(\w+)[|}]")

# Knowledge files at the top of buildlog/knowledge and the schema each one follows.
FILES = {
    "causes.toml": "CausesFile", "facts.toml": "FactsFile", "stages.toml": "StagesFile",
    "hints.toml": "HintsFile", "resolution.toml": "ResolutionFile", "checks.toml": "ChecksFile",
    "compat/gpus.toml": "GpusFile", "compat/cuda.toml": "CudaFile", "compat/torch.toml": "TorchFile",
    "compat/drivers.toml": "DriversFile", "compat/torch_cpp_extension.toml": "BoundsFile",
}  # fmt: skip


def source_texts(root: Any = None) -> dict[str, str]:
    """Every source file of the bundled knowledge, by its path under buildlog/knowledge."""
    node = root if root is not None else resources.files("buildlog.knowledge")
    out = {name: node.joinpath(*name.split("/")).read_text("utf-8") for name in FILES}
    for extra in ("lines.toml", "secrets.toml"):
        out[extra] = node.joinpath(extra).read_text("utf-8")
    for folder, suffix in (("rules", ".toml"), ("grammars", ".lark")):
        for entry in sorted(node.joinpath(folder).iterdir(), key=lambda p: p.name):
            if entry.name.endswith(suffix):
                out[f"{folder}/{entry.name}"] = entry.read_text("utf-8")
    return out


def parse_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BuildlogError(f"{origin}: not valid TOML ({exc})") from None


def _validated(model_name: str, doc: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """The document as its schema reads it, defaults filled in; a clear error naming the field."""
    from pydantic import ValidationError

    from buildlog.knowledge import schema

    model = getattr(schema, model_name)
    try:
        return model.model_validate(doc).model_dump(exclude_unset=False)  # type: ignore[no-any-return]
    except ValidationError as exc:
        raise BuildlogError(f"{origin}: {_first_problem(exc, doc)}") from None


def _first_problem(exc: Any, doc: Mapping[str, Any]) -> str:
    problems = []
    for error in exc.errors()[:3]:
        loc = list(error["loc"])
        where = ""
        if len(loc) >= 2 and isinstance(loc[1], int):  # [[rule]] number n: name it by its id
            records = doc.get(str(loc[0]), [])
            ident = records[loc[1]].get("id") if loc[1] < len(records) and isinstance(records[loc[1]], dict) else None
            where = f"{loc[0]} {ident or '#' + str(loc[1] + 1)}"
            loc = loc[2:]
        field = ".".join(str(p) for p in loc)
        message = error["msg"].removeprefix("Value error, ")
        problems.append(f"{where + ': ' if where else ''}{'field ' + field + ': ' if field else ''}{message}")
    more = len(exc.errors()) - 3
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def load_sources(texts: Mapping[str, str]) -> dict[str, Any]:
    """Checked data of the bundled knowledge from its source texts (see source_texts)."""
    docs = {name: parse_toml(texts[name], name) for name in FILES}
    valid = {name: _validated(model, docs[name], name) for name, model in FILES.items()}
    causes = valid["causes.toml"]["cause"]
    cause_ids = {c["id"] for c in causes}
    rules: list[dict[str, Any]] = []
    for name in sorted(n for n in texts if n.startswith("rules/")):
        rules += check_rules(_validated("RuleFile", parse_toml(texts[name], name), name)["rule"], name, cause_ids)
    _unique([r["id"] for r in rules], "rule")
    lines = parse_toml(texts["lines.toml"], "lines.toml")
    data: dict[str, Any] = {
        "causes": causes,
        "rules": rules,
        "facts": _check_facts(valid["facts.toml"]["fact"]),
        "stages": valid["stages.toml"]["stage"],
        "hints": valid["hints.toml"]["hint"],
        "resolution": valid["resolution.toml"]["cause"],
        "checks": valid["checks.toml"]["check"],
        "jobs": valid["checks.toml"]["jobs"],
        "compat": {
            "gpus": valid["compat/gpus.toml"]["gpu"],
            "cuda": valid["compat/cuda.toml"]["cuda"],
            "torch": valid["compat/torch.toml"]["torch"],
            "drivers": valid["compat/drivers.toml"]["driver"],
            "bounds": valid["compat/torch_cpp_extension.toml"]["bound"],
        },  # fmt: skip
        "grammar_anchors": list(lines["command"]) + list(lines["structure"]),
        "command_anchors": list(lines["command"]),
        "grammars": _grammars(texts),
        "secrets": _secrets(texts),
    }
    _check_references(data, cause_ids)
    return data


def _secrets(texts: Mapping[str, str]) -> list[dict[str, Any]]:
    from buildlog.mask import checked_records

    return checked_records(parse_toml(texts["secrets.toml"], "secrets.toml"), "secrets.toml")


def _grammars(texts: Mapping[str, str]) -> dict[str, Any]:
    from buildlog.knowledge.parsers import serialise

    return {name: serialise(texts[f"grammars/{name}.lark"]) for name in GRAMMARS}


def _unique(ids: Sequence[str], what: str, origin: str = "") -> None:
    seen: set[str] = set()
    for ident in ids:
        if ident in seen:
            raise BuildlogError(f"{origin + ': ' if origin else ''}duplicate {what} id {ident}")
        seen.add(ident)


def check_rules(rules: Iterable[dict[str, Any]], origin: str, cause_ids: set[str]) -> list[dict[str, Any]]:
    """Cross-checks of validated rules: causes, template values, examples. Returns them."""
    out = []
    for raw in rules:
        where = f"{origin}: rule {raw['id']}"
        if raw["role"] == "cause" and raw["cause"] not in cause_ids:
            raise BuildlogError(f"{where}: field cause: unknown cause id {raw['cause']!r} (see `buildlog causes`)")
        unknown = [c for c in raw["overrides"] if c not in cause_ids]
        if unknown:
            raise BuildlogError(f"{where}: field overrides: unknown cause ids {unknown}")
        groups = set(re.compile(raw["pattern"]).groupindex)
        bad = [n for n in _template_names(raw["fix"]) if not _known_value(n, groups)]
        if bad:
            raise BuildlogError(
                f"{where}: field fix: unknown template values {bad} (named groups, facts or {sorted(DERIVED_VALUES)[:4]}...)"
            )
        problems = example_problems(rule_from(raw))
        if problems:
            raise BuildlogError(f"{where}: field examples: " + "; ".join(problems))
        out.append(_compact(raw))
    return out


def _compact(raw: dict[str, Any]) -> dict[str, Any]:
    """Drop fields at their defaults, so the artefact stays small and readable."""
    from buildlog.knowledge.schema import RuleSpec

    defaults = {
        name: f.get_default(call_default_factory=True)
        for name, f in RuleSpec.model_fields.items()
        if not f.is_required()
    }
    return {k: v for k, v in raw.items() if k not in defaults or v != defaults[k]}


def _template_names(template: str) -> list[str]:
    return _PLACEHOLDER.findall(template)  # every `{name` of a placeholder, at any depth of fallbacks


def _known_value(name: str, groups: set[str]) -> bool:
    return name in groups or name in FACTS or name in DERIVED_VALUES or name.startswith("pkg_")


def example_problems(rule: Rule) -> list[str]:
    """Each example that fires must contain an anchor and match the pattern.

    Near-misses are checked through the whole pipeline by the tests (and `buildlog rules test`):
    some stay quiet only because of a condition (facts, command, context) a bare regex cannot see.
    """
    problems = []
    for text in rule.examples.fire:
        if not any(anchor.lstrip("\n") in text for anchor in rule.anchors):
            problems.append(f"example contains no anchor: {text!r}")
        lines = text.splitlines()
        if not any(rule.regex.search("\n".join(lines[i:])) for i in range(len(lines))):
            problems.append(f"pattern does not fire on its example: {text!r}")
    return problems


def _check_facts(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    known = set(FACTS) | set(FACT_GROUP_ALIASES) | FACT_GROUPS_COMBINED
    for fact in facts:
        unknown = sorted(set(re.compile(fact["pattern"]).groupindex) - known)
        if unknown:
            raise BuildlogError(f"facts.toml: fact {fact['id']}: field pattern: groups name no fact: {unknown}")
    _unique([f["id"] for f in facts], "fact", "facts.toml")
    return facts


def _check_references(data: Mapping[str, Any], cause_ids: set[str]) -> None:
    rule_ids = {r["id"] for r in data["rules"]}
    cause_of = {r["id"]: r.get("cause", "") for r in data["rules"]}
    for cause in data["causes"]:
        if cause.get("fix_rule") and cause_of.get(cause["fix_rule"]) != cause["id"]:
            raise BuildlogError(f"causes.toml: cause {cause['id']}: field fix_rule: no rule of this cause has that id")
    for hint in data["hints"]:
        if hint["when"] not in rule_ids:
            raise BuildlogError(f"hints.toml: hint {hint['when']}: field when: no rule has that id")
    for bearing in data["resolution"]:
        for cause in [bearing["cause"], *bearing["proves_past"]]:
            if cause not in cause_ids:
                raise BuildlogError(f"resolution.toml: cause {bearing['cause']}: unknown cause id {cause!r}")
    for check in data["checks"]:
        if check["covers"] and check["covers"] not in cause_ids:
            raise BuildlogError(f"checks.toml: check {check['id']}: field covers: unknown cause id {check['covers']!r}")


# ------------------------------------------------------------------------------------------
# A user's rules


def load_rule_files(paths: Iterable[Path], base: Knowledge) -> list[Rule]:
    """Rules from user rule files or folders (every *.toml in a folder), checked like bundled ones.

    A user rule may not reuse the id of a bundled rule that is still on.
    """
    rules: list[Rule] = []
    taken = {r.id: r.origin for r in base.rules}
    for path in paths:
        for file in _rule_files(path):
            origin = str(file)
            try:
                text = file.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise BuildlogError(f"{origin}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
            for rule in rules_from_document(parse_toml(text, origin), origin, base):
                if rule.id in taken:
                    raise BuildlogError(
                        f"{origin}: rule {rule.id}: field id: already used by {taken[rule.id]}; choose another id "
                        "(or switch the bundled rule off with `disable`)"
                    )
                taken[rule.id] = origin
                rules.append(rule)
    return rules


def rules_from_document(doc: Mapping[str, Any], origin: str, base: Knowledge) -> list[Rule]:
    """The rules of one parsed rule file, validated and cross-checked against `base`."""
    checked = check_rules(_validated("RuleFile", doc, origin)["rule"], origin, set(base.causes))
    _unique([r["id"] for r in checked], "rule", origin)
    return [rule_from(raw, origin=origin) for raw in checked]


def _rule_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".toml" and p.is_file())
    if path.is_file():
        return [path]
    raise BuildlogError(f"{path}: no such rule file or folder")


def with_user_rules(base: Knowledge, paths: Sequence[Path], disabled: Sequence[str] = ()) -> Knowledge:
    """The bundled knowledge with rules switched off by id and the user's rules added."""
    unknown = [d for d in disabled if d not in base.rule_by_id]
    if unknown:
        raise BuildlogError(f"disable: no bundled rule has the id {', '.join(unknown)} (see `buildlog rules`)")
    if not paths and not disabled:
        return base
    trimmed = base.with_rules((), disabled)
    return trimmed.with_rules(load_rule_files(paths, trimmed))
