"""Turns a log into a store Entry: analyse it, take its failure lines and label, and keep it masked.

The analysis reads the log in chunks as `explain` does, and masks what it reports (the report
and the failure lines); the log kept (whole, or an excerpt of a long one) goes through the same
mask before it is stored, so no token ever reaches the database.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from buildlog.errors import BuildlogError
from buildlog.ingest.clean import decode
from buildlog.ingest.reader import Source, iter_chunks, open_source
from buildlog.knowledge.bundle import Knowledge
from buildlog.learn.features import fingerprint, tokens
from buildlog.pipeline import Analysis, Options, trace
from buildlog.store.records import Entry

MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_KEPT_BYTES = 1024 * 1024  # a longer log is kept as an excerpt: its start, the proof with context, its end
KEEP_HEAD, KEEP_TAIL, KEEP_AROUND, KEEP_LINE = 100, 200, 40, 4096
MAX_KEY_LINES = 8
MAX_TITLE = 100


def read_log(path: str, limit: int | None = None) -> tuple[str, bytes]:
    """The display name and bytes of a log (file, .gz or - for stdin), read in chunks and refused
    as soon as it passes `limit` (MAX_LOG_BYTES), however far a compressed file would unpack."""
    limit = MAX_LOG_BYTES if limit is None else limit
    source = open_source(path)
    data = bytearray()
    with source.stream:
        for chunk in iter_chunks(source.stream):
            data += chunk
            if len(data) > limit:
                raise BuildlogError(
                    f"{source.name}: over {limit // (1024 * 1024)} MiB; the store keeps whole logs, so cut it to "
                    "the failing attempt first"
                )  # fmt: skip
    return source.name, bytes(data)


def check_cause(cause: str, knowledge: Knowledge, where: str = "--cause") -> str:
    """The cause id itself when known (or unknown); otherwise an error that says where to look."""
    if cause != "unknown" and cause not in knowledge.causes:
        raise BuildlogError(f"{where}: unknown cause id {cause!r} (see `buildlog causes`)")
    return cause


def features(lines: Sequence[str]) -> Counter[str]:
    """Token counts of failure lines, the input of TF-IDF similarity."""
    return Counter(tokens("\n".join(lines)))


def entry_from_bytes(
    name: str, data: bytes, knowledge: Knowledge, *, redact_paths: bool = False, use_model: bool = True, **labels: Any
) -> Entry:
    """Analyse a log and describe it for the store; the labels (`cause`, `title`, `key_lines`, `fix`,
    `ticket`) override the analysis, as for entry_from."""
    analysis = analyse_data(data, knowledge, redact_paths=redact_paths, use_model=use_model)
    return entry_from(name, data, analysis, knowledge, redact_paths=redact_paths, **labels)


def analyse_data(
    data: bytes, knowledge: Knowledge, *, redact_paths: bool = False, use_model: bool = True, engine: str = "auto",
    cache: Path | None = None,
) -> Analysis:  # fmt: skip
    """The analysis of a log's bytes, read in chunks as `explain` reads a file (the pipeline masks
    what it reports: the report and the failure lines). `engine` and `cache` as for explain: with
    a cache folder, the scan engine's compiled database is loaded rather than compiled per log."""
    options = Options(redact_paths=redact_paths, use_model=use_model, engine=engine, cache=cache)
    return trace(Source("<log>", len(data), io.BytesIO(data)), knowledge, options=options)


def entry_from(
    name: str,
    data: bytes,
    analysis: Analysis,
    knowledge: Knowledge,
    *,
    cause: str | None = None,
    title: str | None = None,
    fix: str = "",
    ticket: str = "",
    key_lines: Sequence[str] = (),
    redact_paths: bool = False,
    kept: tuple[str, str] | None = None,
) -> Entry:
    """The store entry of an analysed log; `cause`, `title` and `key_lines` override the analysis. A log
    that shows no failure has nothing to remember unless a cause is given by hand. The log kept (its
    bytes, or `kept`: an excerpt already made, and its note) is masked here."""
    mask = knowledge.mask(redact_paths)
    report = analysis.report
    if report.status == "empty":
        raise BuildlogError(f"{name}: the log is empty; nothing to store")
    found = report.root_causes[0].id if report.root_causes else None
    if cause is None:
        if report.status == "success":
            raise BuildlogError(f"{name}: the log shows no failure; give --cause ID to store it anyway")
        cause = found or "unknown"
    check_cause(cause, knowledge)
    lines = list(analysis.failure)
    key_lines = tuple(mask(k) for k in key_lines) or _key_lines(analysis, cause)
    text, note = kept if kept is not None else excerpt(decode(data), _proof_lines(analysis))
    text = mask(text)
    return Entry(
        fingerprint=fingerprint(lines, cause),
        shape=fingerprint(lines),
        cause=cause,
        title=mask(title) if title else _title(analysis, cause, key_lines, knowledge),
        source=mask(name),
        outcome="unknown" if report.status == "unknown" else "failure",
        key_lines=key_lines,
        failure=tuple(lines),
        counts=features(lines),
        log=text,
        fix=mask(fix),
        ticket=knowledge.mask()(ticket),
        kept=note,
    )


def _proof_lines(analysis: Analysis) -> list[int]:
    report = analysis.report
    numbers = [e.line for c in report.root_causes for e in c.evidence] + [e.line for e in report.relevant]
    return sorted({n for n in numbers if isinstance(n, int) and n > 0})


def excerpt(text: str, proof: Sequence[int], limit: int = MAX_KEPT_BYTES) -> tuple[str, str]:
    """The text to keep, and a note when it is only part of the log (empty when it is all of it).

    A log over `limit` bytes keeps its first and last lines and the lines around each proof line
    (1-based numbers), each line cut at a few KB, the gaps marked, and the whole cut at `limit`.
    """
    if len(text) <= limit // 4 or len(text.encode("utf-8")) <= limit:
        return text, ""
    lines = text.split("\n")
    return excerpt_of_lines(iter(lines), len(lines), proof, limit)


def excerpt_of_lines(
    lines: Iterator[str], count: int, proof: Sequence[int], limit: int = MAX_KEPT_BYTES
) -> tuple[str, str]:
    """excerpt() over lines read one by one (a log too big to hold: only what is kept is held)."""
    wanted: set[int] = set(range(min(KEEP_HEAD, count)))
    wanted.update(range(max(0, count - KEEP_TAIL), count))
    for n in proof:
        wanted.update(range(max(0, n - 1 - KEEP_AROUND), min(count, n + KEEP_AROUND)))
    out: list[str] = []
    size, last, kept = 0, -1, 0
    for index, line in enumerate(lines):
        if index not in wanted:
            continue
        if index != last + 1:
            out.append(f"[buildlog: {index - last - 1} lines left out]")
        if len(line) > KEEP_LINE:
            line = line[:KEEP_LINE] + f" [buildlog: {len(line) - KEEP_LINE} characters left out]"
        size += len(line.encode("utf-8")) + 1
        if size > limit:
            out.append("[buildlog: the rest left out; the excerpt is at its size cap]")
            break
        out.append(line)
        last, kept = index, kept + 1
    note = f"kept an excerpt of {kept:,} of {count:,} lines (logs over {limit // 1024} KiB are not kept whole)"
    return "\n".join(out), note


def entry_from_file(
    path: str, knowledge: Knowledge, *, redact_paths: bool = False, use_model: bool = True, **labels: Any
) -> tuple[str, Entry]:
    """A log file of any size as a store entry, in bounded memory. A plain file over MAX_LOG_BYTES
    is read once to analyse it as a stream and once more for the excerpt kept; anything else
    (standard input, which cannot be read twice; a compressed file, which could unpack without
    end) is held whole up to MAX_LOG_BYTES (read_log)."""
    source = open_source(path)
    big = path != "-" and source.disk is None and (source.size or 0) > MAX_LOG_BYTES
    if not big:
        source.stream.close()
        name, data = read_log(path)
        return name, entry_from_bytes(name, data, knowledge, redact_paths=redact_paths, use_model=use_model, **labels)
    options = Options(redact_paths=redact_paths, use_model=use_model)
    with source.stream:
        analysis = trace(source, knowledge, options=options)
    count = analysis.report.lines
    again = open_source(path)
    with again.stream:
        kept, note = excerpt_of_lines(_lines(again), count, _proof_lines(analysis))
    entry = entry_from(source.name, b"", analysis, knowledge, redact_paths=redact_paths, kept=(kept, note), **labels)
    return source.name, entry


def _lines(source: Source) -> Iterator[str]:
    """The decoded lines of a source, read in chunks (a line cut by the reader continues in the next)."""
    rest = b""
    for chunk in iter_chunks(source.stream):
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for raw in parts:
            yield decode(raw[: 4 * KEEP_LINE])
        if len(rest) > 4 * KEEP_LINE:  # a line without end in sight: only its start can be kept
            rest = rest[: 4 * KEEP_LINE]
    if rest:
        yield decode(rest)


def _title(analysis: Analysis, cause: str, key_lines: Sequence[str], knowledge: Knowledge) -> str:
    """The first proof line when the analysis found this cause (it names the failure: the missing
    module, the versions), else the cause's own title."""
    report = analysis.report
    if key_lines and report.root_causes and report.root_causes[0].id == cause:
        line = " ".join(key_lines[0].split())
        return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1].rstrip() + "…"
    known = knowledge.causes.get(cause)
    return known.title if known else "A failure no rule explains"


def _key_lines(analysis: Analysis, cause: str) -> tuple[str, ...]:
    """The evidence for the stored cause, else for any cause, else the lines worth reading."""
    report = analysis.report
    chosen = [c for c in report.root_causes if c.id == cause] or report.root_causes
    texts = [e.text.strip() for c in chosen for e in c.evidence] or [e.text.strip() for e in report.relevant]
    return tuple(dict.fromkeys(t for t in texts if t))[:MAX_KEY_LINES]
