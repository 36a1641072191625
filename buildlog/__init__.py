"""buildlog: explains failed GPU builds from their logs, offline.

The Python API is what the command line uses::

    import buildlog

    report = buildlog.explain("build.log")       # a path, bytes, or a binary stream
    if report.status == "failure":
        cause = report.root_causes[0]
        print(cause.id, cause.title)              # e.g. cuda_version_mismatch
        print(cause.evidence[0].line, cause.fix)  # the line that proves it, the fix filled in
    print(report.model_dump_json(indent=2))       # the same JSON as `buildlog explain --format json`

    for report in buildlog.explain_all("logs_1234.zip"):   # every log of an archive
        print(report.source, report.headline)

A path may be plain or compressed (.gz, .xz, .bz2, .zst, recognised by their first bytes) or, for
`explain_all`, a .zip archive. The Report (`buildlog.Report`, a frozen record with pydantic's
`model_dump`, `model_dump_json` and `model_validate_json`; its JSON schema is `buildlog schema`) holds the status, the headline, the root causes with evidence and
fix, the attempts of a session, the incidents and what resolved them, the risks and the facts.
Nothing is read from the environment or a config file here: pass `rules` (folders or files of
your own rules) and `redact_paths` as arguments. Secrets are always masked.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Union

__version__ = "0.1.0"

from buildlog.report.schema import Report

if TYPE_CHECKING:  # pragma: no cover
    from buildlog.pipeline import Analysis, Options, Recall

Input = Union[str, "os.PathLike[str]", bytes, BinaryIO]

__all__ = ["Report", "explain", "explain_all", "__version__"]


def explain(log: Input, *, rules: Sequence[str | os.PathLike[str]] = (), redact_paths: bool = False) -> Report:
    """The report for one log: a path (plain or compressed), the log's bytes, or a binary stream.

    Raises `buildlog.errors.BuildlogError` (with a one-line message) when it cannot be read, or
    when a path is an archive of several logs (use `explain_all`).
    """
    reports = explain_all(log, rules=rules, redact_paths=redact_paths)
    if len(reports) != 1:
        from buildlog.errors import BuildlogError

        raise BuildlogError(
            f"{reports[0].source.rsplit(':', 1)[0]} holds {len(reports)} logs: use buildlog.explain_all"
        )
    return reports[0]


def explain_all(
    log: Input, *, rules: Sequence[str | os.PathLike[str]] = (), redact_paths: bool = False
) -> list[Report]:
    """The reports for every log an input holds: one, or each log of a .zip archive."""
    from pathlib import Path

    from buildlog.knowledge.artefact import bundled
    from buildlog.knowledge.load import with_user_rules
    from buildlog.pipeline import Options

    knowledge = with_user_rules(bundled(), [Path(p) for p in rules], ()) if rules else bundled()
    return [a.report for a in analyses([log], knowledge, None, Options(redact_paths=redact_paths))]


def analyses(logs: Iterable[Input], knowledge: Any, recall: Recall | None, options: Options) -> Iterator[Analysis]:
    """Every stage over each log the inputs hold, in order (the command line's way in, too)."""
    from buildlog.ingest.reader import Source, open_sources, sources_of
    from buildlog.pipeline import trace

    for log in logs:
        if isinstance(log, (bytes, bytearray, memoryview)):
            found = sources_of(Source("<bytes>", len(log), io.BufferedReader(io.BytesIO(bytes(log)))))  # type: ignore[arg-type]
        elif isinstance(log, (str, os.PathLike)):
            found = open_sources(os.fspath(log))
        else:
            stream = log if hasattr(log, "peek") else io.BufferedReader(log)  # type: ignore[arg-type]
            name = getattr(log, "name", None)
            found = sources_of(Source(name if isinstance(name, str) else "<stream>", None, stream))  # type: ignore[arg-type]
        for source in found:
            with source.stream:
                yield trace(source, knowledge, recall, options)
