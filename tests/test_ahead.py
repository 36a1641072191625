"""Reading in a child process gives exactly what reading here gives, and fails the same way."""

from __future__ import annotations

import os
import sys

import pytest

from buildlog.cli import ahead
from buildlog.cli.ahead import FirstPass
from buildlog.errors import BuildlogError
from buildlog.ingest.reader import open_source
from tests.conftest import CORPUS

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="the child process is for Linux machines with two cores",
)

SESSION = CORPUS / "flash-attn-blackwell-uv-venv-session.log"


def _read(path, minimum, redact_paths=False):
    source = open_source(str(path))
    with source.stream:
        first = FirstPass.start(source, redact_paths, minimum=minimum)
        forked = first.pid != 0
        events, summary = first.result()
    return forked, events, (summary.lines, summary.bytes, list(summary.tail))


def test_the_child_reads_what_this_process_reads():
    forked, events, summary = _read(SESSION, minimum=0)
    here, events_here, summary_here = _read(SESSION, minimum=1 << 40)
    assert forked and not here
    assert events == events_here and summary == summary_here
    assert any(e.kind == "command" for e in events)


def test_redaction_applies_in_the_child(tmp_path):
    log = tmp_path / "b.log"
    log.write_text("$ pip install x --index-url https://user:hunter2@index.example/simple\nERROR: boom\n")
    _, events, _ = _read(log, minimum=0, redact_paths=True)
    assert events and not any("hunter2" in e.text for e in events)


def test_streams_and_compressed_files_are_read_here(tmp_path):
    import gzip

    log = tmp_path / "b.log.gz"
    log.write_bytes(gzip.compress(b"error: x\n"))
    forked, events, _ = _read(log, minimum=0)
    assert not forked and events


def test_a_child_that_dies_is_replaced_by_reading_here(monkeypatch):
    parent = os.getpid()
    real = ahead._first_pass

    def dies_in_child(source, redact_paths):
        if os.getpid() != parent:
            raise RuntimeError("child trouble")
        return real(source, redact_paths)

    monkeypatch.setattr(ahead, "_first_pass", dies_in_child)
    forked, events, summary = _read(SESSION, minimum=0)
    monkeypatch.setattr(ahead, "_first_pass", real)
    assert forked and (events, summary) == _read(SESSION, minimum=1 << 40)[1:]


def test_an_unreadable_input_reads_as_the_same_message(monkeypatch):
    parent = os.getpid()
    real = ahead._first_pass

    def unreadable(source, redact_paths):  # only the child fails, so the message must come from it
        if os.getpid() != parent:
            raise BuildlogError("cannot read input: [Errno 5] Input/output error")
        return real(source, redact_paths)

    monkeypatch.setattr(ahead, "_first_pass", unreadable)
    with pytest.raises(BuildlogError, match="Input/output error"):
        _read(SESSION, minimum=0)


def test_a_refused_fork_reads_here(monkeypatch):
    def no_more_processes():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_more_processes)
    forked, events, summary = _read(SESSION, minimum=0)
    monkeypatch.undo()
    assert not forked and (events, summary) == _read(SESSION, minimum=1 << 40)[1:]
