"""The rule records: they load, cover every cause, and prove themselves on their own examples."""

from __future__ import annotations

import re

import pytest

from buildlog.errors import BuildlogError
from buildlog.knowledge.artefact import bundled
from buildlog.knowledge.load import rules_from_document
from tests.conftest import analyse_text

KNOWLEDGE = bundled()
RULES = KNOWLEDGE.rules


def cause_ids():
    return KNOWLEDGE.causes


def parse_rules(documents, _causes):
    return [rule for name, doc in documents for rule in rules_from_document(doc, name, KNOWLEDGE)]


GOOD = {
    "id": "sample-rule", "cause": "disk_full", "title": "A sample rule", "anchors": ["No space left"],
    "pattern": "No space left on device", "examples": {"fire": ["OSError: [Errno 28] No space left on device"]},
}  # fmt: skip


def _fired(text: str, rule_id: str) -> bool:
    return rule_id in analyse_text(text).fired


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_fires_on_its_examples(rule):
    for text in rule.examples.fire:
        assert _fired(text, rule.id), f"{rule.id} did not fire on {text!r}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.examples.quiet], ids=lambda r: r.id)
def test_rule_stays_quiet_on_its_near_misses(rule):
    for text in rule.examples.quiet:
        assert not _fired(text, rule.id), f"{rule.id} fired on its near-miss {text!r}"


def test_every_cause_rule_has_a_near_miss():
    missing = [r.id for r in RULES if r.role == "cause" and not r.examples.quiet]
    assert not missing, f"cause rules without a near-miss example: {missing}"


def test_every_cause_id_has_a_rule():
    covered = {r.cause for r in RULES if r.role == "cause"}
    assert set(cause_ids()) <= covered, f"no rule for {sorted(set(cause_ids()) - covered)}"


def test_rule_ids_are_unique_and_stable_looking():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]*", i) for i in ids)


# Compiler command lines fill verbose logs; an anchor found in them would select every line.
COMPILER_FLAGS = (
    "/usr/local/cuda/bin/nvcc -I/x/include -c csrc/flash_fwd_hdim128_bf16_sm80.cu -o build/flash_fwd.o "
    "-D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ --expt-relaxed-constexpr "
    "--compiler-options ''\"'\"'-fPIC'\"'\"'' -O3 -std=c++17 -U__CUDA_NO_HALF_OPERATORS__ --use_fast_math "
    "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 --threads 4 "
    "-Werror=return-type -Werror=format -Wno-error=deprecated -DTORCH_API_INCLUDE_EXTENSION_H "
    "-DTORCH_EXTENSION_NAME=flash_attn_2_cuda -D_GLIBCXX_USE_CXX11_ABI=1 -ccbin g++ -fno-strict-aliasing "
    "c++ -MMD -MF build/x.o.d -pthread -Wno-unused-result -Wsign-compare -DNDEBUG -g -fwrapv -O2 -Wall "
    "-fPIC -I/venv/lib/python3.11/site-packages/torch/include -Werror -c csrc/flash_api.cpp -o x.o"
)


@pytest.mark.parametrize("rule", [r for r in RULES if r.role in ("cause", "symptom")], ids=lambda r: r.id)
def test_anchors_do_not_occur_in_compiler_flags(rule):
    hits = [a for a in rule.anchors if a in COMPILER_FLAGS]
    assert not hits, f"{rule.id}: anchors {hits} occur in ordinary compiler flags"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"colour": "red"}, "field colour: Extra inputs"),
        ({"pattern": "(unclosed"}, "bad regex"),
        ({"cause": "no_such_cause"}, "unknown cause"),
        ({"examples": {"fire": ["a line without the anchor"]}}, "contains no anchor"),
        ({"examples": {"fire": ["No space left but not on a device"]}}, "does not fire"),
        ({"role": "symptom"}, "names no cause"),
    ],
)
def test_bad_rules_are_load_errors(change, message):
    with pytest.raises(BuildlogError, match=message):
        parse_rules([("bad.toml", {"rule": [{**GOOD, **change}]})], cause_ids())


def test_duplicate_ids_and_unknown_top_level_keys_are_load_errors():
    with pytest.raises(BuildlogError, match="duplicate"):
        parse_rules([("a.toml", {"rule": [GOOD, GOOD]})], cause_ids())
    with pytest.raises(BuildlogError, match="a.toml: field rules: Extra inputs"):
        parse_rules([("a.toml", {"rules": [GOOD]})], cause_ids())


def test_a_good_rule_loads():
    (rule,) = parse_rules([("good.toml", {"rule": [GOOD]})], cause_ids())
    assert rule.cause == "disk_full" and rule.priority == 50


def test_hints_name_existing_symptom_rules():
    ids = {r.id for r in RULES}
    for hint in KNOWLEDGE.hints:
        assert hint.when in ids, f"hint for unknown rule {hint.when}"
