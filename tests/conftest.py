"""Shared helpers for the tests: where the corpus is, and running the pipeline on text."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildlog.knowledge.artefact import bundled
from buildlog.pipeline import Analysis, trace

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "cases"


def analyse_text(text: str | bytes, name: str = "<test>") -> Analysis:
    """Run every stage over an in-memory log."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return trace(data, bundled())


@pytest.fixture
def analyse():
    return analyse_text


@pytest.fixture(autouse=True)
def _no_user_store(tmp_path_factory, monkeypatch):
    """Every test sees an empty store location, never the developer's own store."""
    monkeypatch.setenv("BUILDLOG_STORE", str(tmp_path_factory.mktemp("store") / "store.sqlite"))
