"""A run writes a report's JSON without pydantic; the model in report/schema.py stays the contract."""

from __future__ import annotations

import pytest

from buildlog.knowledge.artefact import bundled
from buildlog.pipeline import trace
from buildlog.render.jsonout import render_json
from buildlog.report.schema import Attempt, Evidence, Report, RootCause, model
from buildlog.store.cases import iter_cases
from buildlog.store.similar import PastFailures
from tests.conftest import CORPUS

PASTED = list(iter_cases(CORPUS.parent / "pasted"))


def assert_the_models_json(report: Report) -> None:
    """The JSON a run writes is valid for the pydantic model, which writes back the same bytes."""
    text = render_json(report)
    assert model(Report).model_validate_json(text).model_dump_json(indent=2) + "\n" == text
    assert Report.model_validate_json(text) == report


@pytest.mark.parametrize("case", PASTED, ids=[c.slug for c in PASTED])
def test_every_paste_with_seen_before(case):
    """corpus/cases are checked in test_corpus.test_case; the pastes here, with "seen before"."""
    assert_the_models_json(trace(case.read_bytes(), bundled(), PastFailures(None)).report)


def test_seen_before_is_covered():
    reports = [trace(c.read_bytes(), bundled(), PastFailures(None)).report for c in PASTED[:20]]
    assert any(r.similar for r in reports) and any(r.root_causes for r in reports)


def test_a_record_is_checked_and_frozen_like_its_model():
    with pytest.raises(TypeError, match="no field colour"):
        Evidence(line=1, text="x", colour="red")
    with pytest.raises(TypeError, match="text is required"):
        Evidence(line=1)
    evidence = Evidence(line=1, text="x")
    with pytest.raises(TypeError, match="frozen"):
        evidence.line = 2  # type: ignore[misc]
    given = [evidence]
    cause = RootCause(id="a", title="A", confidence=1, evidence=given)
    given.append(evidence)
    assert cause.confidence == 1.0 and isinstance(cause.confidence, float) and cause.evidence == [evidence]
    assert cause.model_copy(update={"id": "b"}).id == "b" and cause.id == "a"
    attempt = Attempt(number=1, line=3, command="pip install .")
    assert attempt.model_dump(exclude_defaults=True) == {"number": 1, "line": 3, "command": "pip install ."}
    assert attempt.model_dump_json() == model(Attempt)(number=1, line=3, command="pip install .").model_dump_json()
