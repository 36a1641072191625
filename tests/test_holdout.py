"""Honest measurement: a rule is not credited on the repository it was written from."""

from __future__ import annotations

from dataclasses import replace

from buildlog.knowledge.artefact import bundled
from buildlog.learn.holdout import _without_rules_from, fold_of, holdout
from buildlog.learn.training import source_of
from buildlog.store.cases import iter_cases
from tests.conftest import CORPUS

PASTED = list(iter_cases(CORPUS.parent / "pasted"))


def test_rules_written_from_a_repository_are_off_for_its_cases():
    k = bundled()
    rule = k.rule_by_id["torch-cuda-major-mismatch"]
    marked = k.with_rules((), [rule.id]).with_rules([replace(rule, written_from=("org/repo",))])
    assert "torch-cuda-major-mismatch" not in _without_rules_from(marked, "org/repo").rule_by_id
    assert "torch-cuda-major-mismatch" in _without_rules_from(marked, "other/repo").rule_by_id


def test_every_repository_is_held_out_in_exactly_one_fold():
    sources = {source_of(c) for c in PASTED}
    assert len(sources) >= 40
    assert {s: fold_of(s, 5) for s in sources} == {s: fold_of(s, 5) for s in sorted(sources)}


def test_holdout_reports_each_engine_on_the_measured_cases():
    k = bundled()
    train = list(iter_cases(CORPUS))[:60]
    measured = [c for c in PASTED if c.sidecar.causes[0] in k.causes][:8]
    result = holdout(train + measured, k, measured, folds=2)
    assert result.both.cases == result.rules.cases == result.model.cases == len(measured)
    assert 0 <= result.both.right <= len(measured) and result.model.precision >= 0


def test_a_log_that_quotes_a_held_out_repositorys_thread_does_not_train_its_fold():
    from buildlog.learn.training import may_train, repositories_of

    own = next(c for c in iter_cases(CORPUS) if "github.com/Dao-AILab/flash-attention" in c.sidecar.source)
    assert "dao-ailab/flash-attention" in repositories_of(own)
    assert not may_train(own, frozenset({"dao-ailab/flash-attention"}))
    assert may_train(own, frozenset({"some/other-repo"}))
    paste = PASTED[0]
    assert not may_train(paste, frozenset({source_of(paste).lower()}))
    plain = next(c for c in iter_cases(CORPUS) if not repositories_of(c))
    assert may_train(plain, frozenset(source_of(c).lower() for c in PASTED))  # logs made here train every fold
