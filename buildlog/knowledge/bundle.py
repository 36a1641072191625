"""Knowledge: one frozen object holding everything buildlog knows, passed to every stage.

It is built from checked data (a plain dict: see knowledge/load.py, which checks sources, and
knowledge/artefact.py, which keeps the bundled knowledge checked and built in one file), so the
same records come out whether the data was just validated or read back from the artefact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from buildlog.knowledge.compat import Compat, CudaRelease, Gpu, TorchRelease
from buildlog.knowledge.conditions import condition_anchors, condition_texts
from buildlog.knowledge.records import Bearing, Cause, CheckText, Examples, FactPattern, Hint, Jobs, Rule, StageMarker

if TYPE_CHECKING:
    from lark import Lark

    from buildlog.mask import Mask


# The most sets of anchors whose records are remembered (Knowledge._records).
ANCHOR_SETS = 4096


class AnchorPlan(NamedTuple):
    """What the scanner looks for: every anchor, the budgeted ones, and which records use each.

    An anchor that some unbudgeted record also uses has no budget: its lines are always wanted.
    `resets` are the anchors of command lines: budgets start afresh after each command.
    `conditions`: the sets of texts a line that the rules' context conditions can match holds one of
    (knowledge.conditions), None where a condition reduces to none.
    """

    anchors: tuple[str, ...]
    budgets: Mapping[str, int]
    resets: frozenset[str]
    conditions: tuple[tuple[bytes, ...], ...] | None = ()
    condition_anchors: tuple[tuple[str, tuple[bytes, ...]], ...] = ()  # each condition, the texts that find its lines


@dataclass(frozen=True)
class Knowledge:
    """Rules, fact patterns, stage markers, hints, resolutions, checks, tables and grammars."""

    causes: Mapping[str, Cause]
    rules: tuple[Rule, ...]
    facts: tuple[FactPattern, ...]
    stages: tuple[StageMarker, ...]
    hints: tuple[Hint, ...]
    bearings: Mapping[str, Bearing]
    checks: Mapping[str, CheckText]
    jobs: Jobs
    compat: Compat
    grammar_data: Mapping[str, Any] = field(repr=False)
    grammar_anchors: tuple[str, ...] = ()
    command_anchors: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)  # what it was built from

    @cached_property
    def plan(self) -> AnchorPlan:
        words: set[str] = set(self.grammar_anchors)
        unlimited: set[str] = set(self.grammar_anchors)
        for rule in self.rules:
            words.update(rule.anchors)
            unlimited.update(rule.anchors)
        budgets: dict[str, int] = {}
        for record in (*self.facts, *self.stages):
            words.update(record.anchors)
            for word in record.anchors:
                if record.budget:
                    budgets[word] = max(record.budget, budgets.get(word, 0))
                else:
                    unlimited.add(word)
        kept = {w: n for w, n in budgets.items() if w not in unlimited}
        return AnchorPlan(
            tuple(sorted(words)),
            kept,
            frozenset(self.command_anchors),
            condition_texts(self.rules),
            condition_anchors(self.rules),
        )

    def fix_for(self, cause: str) -> str | None:
        """The fix of a cause: its `fix_rule`'s, else its rules' own (the highest priority), or where
        every rule of it is switched off, the bundled one (detection is the rules' part; a fix
        belongs to the cause); None for a cause no rule knows."""
        named = self.causes[cause].fix_rule if cause in self.causes else ""
        raw = [r for r in self.data["rules"] if r.get("cause", "") == cause]
        if named:
            return next(r.get("fix", "") for r in raw if r["id"] == named)
        rules = [r for r in self.rules if r.cause == cause]
        if rules:
            return max(rules, key=lambda r: r.priority).fix
        return max(raw, key=lambda r: r.get("priority", 50)).get("fix", "") if raw else None

    @cached_property
    def rule_by_id(self) -> Mapping[str, Rule]:
        return {r.id: r for r in self.rules}

    @cached_property
    def _by_anchor(self) -> dict[str, dict[str, tuple[int, ...]]]:
        out: dict[str, dict[str, tuple[int, ...]]] = {}
        for kind, records in (("rules", self.rules), ("facts", self.facts), ("stages", self.stages)):
            index: dict[str, list[int]] = {}
            for i, record in enumerate(records):
                for anchor in record.anchors:
                    index.setdefault(anchor, []).append(i)
            out[kind] = {a: tuple(ids) for a, ids in index.items()}
        return out

    def rules_for(self, anchors: Iterable[str]) -> tuple[Rule, ...]:
        """The rules that use any of these anchors (the scanner's anchors of a line), in order."""
        return self._records("rules", self.rules, anchors)

    def facts_for(self, anchors: Iterable[str]) -> tuple[FactPattern, ...]:
        return self._records("facts", self.facts, anchors)

    def stages_for(self, anchors: Iterable[str]) -> tuple[StageMarker, ...]:
        return self._records("stages", self.stages, anchors)

    def _records(self, kind: str, records: tuple[Any, ...], anchors: Iterable[str]) -> tuple[Any, ...]:
        """The records of `kind` that use any of the anchors, in order. A log's lines carry a few
        distinct sets of anchors (a frozenset each, one object per set from the scanner), and every
        event is asked about by several stages: each set is looked up once."""
        key = (kind, anchors) if isinstance(anchors, frozenset) else None
        found = self._found.get(key) if key is not None else None
        if found is None:
            index = self._by_anchor[kind]
            found = tuple(records[i] for i in sorted({i for a in anchors for i in index.get(a, ())}))
            if key is not None and len(self._found) < ANCHOR_SETS:
                self._found[key] = found
        return found

    @cached_property
    def _found(self) -> dict[tuple[str, frozenset[str]], tuple[Any, ...]]:
        return {}

    def parser(self, name: str) -> Lark:
        """The LALR parser of one grammar, built from the artefact's tables when first asked for."""
        parsers = self._parsers
        if name not in parsers:
            from buildlog.knowledge.parsers import parser_from

            parsers[name] = parser_from(self.grammar_data[name])
        return parsers[name]

    @cached_property
    def _parsers(self) -> dict[str, Lark]:
        return {}

    @cached_property
    def classifier_data(self) -> Mapping[str, Any] | None:
        """The bundled classifier as exported by training (knowledge/classifier.json), read on first use;
        None when no model has been trained."""
        import json
        from importlib import resources

        node = resources.files("buildlog.knowledge").joinpath("classifier.json")
        return json.loads(node.read_text("utf-8")) if node.is_file() else None

    def mask(self, paths: bool = False) -> Mask:
        """The one secret mask (with `paths`, also user names, home folders and host names), built on first use."""
        masks = self._masks
        if paths not in masks:
            from buildlog.mask import Mask, patterns_from

            masks[paths] = Mask(patterns_from(self.data["secrets"]), paths=paths)
        return masks[paths]

    @cached_property
    def _masks(self) -> dict[bool, Mask]:
        return {}

    def with_rules(self, rules: Iterable[Rule], disabled: Iterable[str] = ()) -> Knowledge:
        """This knowledge with some rules switched off by id and others added after them."""
        from dataclasses import replace

        off = set(disabled)
        kept = tuple(r for r in self.rules if r.id not in off)
        new = replace(self, rules=kept + tuple(rules))
        for kept_as_is in ("_parsers", "classifier_data", "_masks"):  # what does not depend on the rules
            if kept_as_is in self.__dict__:
                new.__dict__[kept_as_is] = self.__dict__[kept_as_is]
        return new


def rule_from(raw: Mapping[str, Any], origin: str = "bundled") -> Rule:
    """A rule record from checked data."""
    examples = raw["examples"]
    return Rule(
        id=raw["id"], title=raw["title"], anchors=tuple(raw["anchors"]), pattern=raw["pattern"],
        examples=Examples(tuple(examples["fire"]), tuple(examples.get("quiet", ()))),
        role=raw.get("role", "cause"), cause=raw.get("cause", ""), description=raw.get("description", ""),
        priority=raw.get("priority", 50), confidence=raw.get("confidence", 0.9), multiline=raw.get("multiline", False),
        events=frozenset(raw.get("events", ("any",))), context=raw.get("context"), not_context=raw.get("not_context"),
        command=raw.get("command"), not_command=raw.get("not_command"), facts=dict(raw.get("facts", {})),
        show_facts=tuple(raw.get("show_facts", ())), overrides=tuple(raw.get("overrides", ())), fix=raw.get("fix", ""),
        references=tuple(raw.get("references", ())), written_from=tuple(raw.get("written_from", ())), origin=origin,
    )  # fmt: skip


def knowledge_from(data: Mapping[str, Any]) -> Knowledge:
    """The Knowledge object of checked data (sources just validated, or the artefact read back)."""
    compat = data["compat"]
    bounds = {b["cuda"]: b.get("torch_gcc_max") for b in compat["bounds"]}
    return Knowledge(
        causes={
            c["id"]: Cause(
                c["id"], c["title"], c.get("summary", ""), c.get("classifier_needs", ""), c.get("fix_rule", "")
            )
            for c in data["causes"]
        },
        rules=tuple(rule_from(r) for r in data["rules"]),
        facts=tuple(
            FactPattern(
                f["id"],
                tuple(f["anchors"]),
                f["pattern"],
                f.get("multiline", False),
                f.get("all_matches", False),
                f.get("budget", 0),
                f.get("change", False),
                f.get("says", ""),
                f.get("role", "stated"),
            )
            for f in data["facts"]
        ),  # fmt: skip
        stages=tuple(
            StageMarker(s["stage"], tuple(s["anchors"]), s["pattern"], s.get("budget", 0)) for s in data["stages"]
        ),
        hints=tuple(Hint(h["when"], h["text"], h.get("missing", "")) for h in data["hints"]),
        bearings={
            b["cause"]: Bearing(tuple(b["changes"]), frozenset(b.get("proves_past", ()))) for b in data["resolution"]
        },
        checks={
            c["id"]: CheckText(c["id"], c["title"], c["severity"], c["consequence"], c["fix"], c.get("covers", ""))
            for c in data["checks"]
        },
        jobs=Jobs(data["jobs"]["ram_share"], dict(data["jobs"]["per_job_gb"])),
        compat=Compat(
            gpus=tuple(Gpu(g["name"], tuple(m.lower() for m in g.get("match", ())), g["cc"]) for g in compat["gpus"]),
            cuda={
                c["version"]: CudaRelease(
                    c["version"],
                    c["sm_min"],
                    c["sm_max"],
                    c.get("gcc_max"),
                    c.get("driver_min_linux"),
                    bounds.get(c["version"]),
                )
                for c in compat["cuda"]
            },  # fmt: skip
            torch={t["version"]: TorchRelease(t["version"], tuple(t["cuda"])) for t in compat["torch"]},
            drivers={int(d["branch"]): d["cuda"] for d in compat["drivers"]},
        ),
        grammar_data=data["grammars"],
        grammar_anchors=tuple(data["grammar_anchors"]),
        command_anchors=tuple(data["command_anchors"]),
        data=data,
    )
