"""The corpus proves the rules: one test per case, generated from corpus/cases."""

from __future__ import annotations

from collections import defaultdict

import pytest

from buildlog.analyze import run
from buildlog.diagnose.rules import cause_ids, load_rules
from buildlog.evaluate import check_case
from buildlog.store.cases import iter_cases
from tests.conftest import CORPUS

CASES = list(iter_cases(CORPUS))


def _analysis(case):
    return run(case.slug, [case.read_bytes()])


@pytest.mark.parametrize("case", CASES, ids=[c.slug for c in CASES])
def test_case(case):
    result = check_case(case, _analysis(case).report)
    assert result.ok, "\n".join(result.problems)


@pytest.fixture(scope="module")
def fired_by_rule():
    fired = defaultdict(set)
    for case in CASES:
        for finding in _analysis(case).findings:
            fired[finding.rule.id].add(case.slug)
    return fired


def test_every_cause_rule_fires_on_two_corpus_logs(fired_by_rule):
    weak = {r.id: sorted(fired_by_rule[r.id]) for r in load_rules() if r.role == "cause" and len(fired_by_rule[r.id]) < 2}
    assert not weak, f"cause rules proven by fewer than two corpus logs: {weak}"


def test_the_two_logs_differ(fired_by_rule):
    by_slug = {c.slug: c for c in CASES}
    for rule_id, slugs in fired_by_rule.items():
        texts = {by_slug[s].read_bytes() for s in slugs}
        assert len(slugs) < 2 or len(texts) >= 2, f"{rule_id} is proven only by identical logs"


def test_every_cause_has_cases():
    labelled = {c for case in CASES for c in case.sidecar.causes}
    assert set(cause_ids()) <= labelled, f"causes without a corpus case: {sorted(set(cause_ids()) - labelled)}"


def test_sidecars_name_known_causes():
    known = set(cause_ids()) | {"unknown"}
    for case in CASES:
        assert set(case.sidecar.causes) <= known, f"{case.slug}: unknown cause ids {case.sidecar.causes}"
