"""The user cache only ever saves work: what comes out of it equals what it stands for."""

from __future__ import annotations

import datetime

import pytest

from buildlog.cache import remembered
from buildlog.knowledge.sources import knowledge_text, parse_toml, parse_toml_now


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BUILDLOG_CACHE_DIR", str(tmp_path))
    return tmp_path


def counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_a_value_is_built_once_per_source(cache):
    build, calls = counting({"a": [1, 2.5, "x"]})
    assert remembered("thing", b"v1", build) == {"a": [1, 2.5, "x"]}
    assert remembered("thing", b"v1", build) == {"a": [1, 2.5, "x"]}
    assert len(calls) == 1
    remembered("thing", b"v2", build)
    assert len(calls) == 2


def test_a_damaged_entry_is_rebuilt(cache):
    build, calls = counting(["ok"])
    remembered("thing", b"v1", build)
    for entry in cache.glob("thing-*"):
        entry.write_bytes(b"\xff\x00 not marshal")
    assert remembered("thing", b"v1", build) == ["ok"]
    assert len(calls) == 2


def test_values_marshal_cannot_keep_are_returned_not_stored(cache):
    build, calls = counting({"when": datetime.date(2026, 1, 2)})
    assert remembered("dated", b"v1", build)["when"] == datetime.date(2026, 1, 2)
    assert not list(cache.glob("dated-*"))


def test_an_unwritable_cache_costs_nothing_but_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BUILDLOG_CACHE_DIR", str(blocker / "cache"))
    build, calls = counting([1])
    assert remembered("thing", b"v1", build) == [1]
    assert remembered("thing", b"v1", build) == [1]
    assert len(calls) == 2


def test_remembered_knowledge_equals_the_parsed_file(cache):
    text = knowledge_text("checks.toml")
    first = parse_toml(text, "checks.toml")
    assert list(cache.glob("toml.checks-*"))
    assert parse_toml(text, "checks.toml") == first == parse_toml_now(text)
