"""Reading and cleaning: any bytes in, honest line numbers and screen text out."""

from __future__ import annotations

import gzip
import io

import pytest

from buildlog.errors import BuildlogError
from buildlog.ingest.clean import clean_line, screen_text, strip_prefixes
from buildlog.ingest.reader import iter_chunks, open_source


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b"\x1b[31merror\x1b[0m: externally-managed-environment", "error: externally-managed-environment"),
        (b"  10%|#   \r  50%|#####   \r 100%|##########|", " 100%|##########|"),
        (b"Collecting torch\r\n", "Collecting torch"),
        (b"2024-05-01T12:34:56.1234567Z ERROR: Failed building wheel for x", "ERROR: Failed building wheel for x"),
        (b"#12 3.456 ERROR: Failed building wheel for x", "ERROR: Failed building wheel for x"),
        (b"[12:34:56] FAILED: build/x.o", "FAILED: build/x.o"),
        (b"12:34:56  FAILED: build/x.o", "FAILED: build/x.o"),
        (b"[rank0]: RuntimeError: CUDA error", "RuntimeError: CUDA error"),
        (
            b"> > nvcc fatal   : Unsupported gpu architecture 'compute_35'",
            "nvcc fatal   : Unsupported gpu architecture 'compute_35'",
        ),
        (b"  \xe2\x94\x82 exit code: 1", "exit code: 1"),
        (b"caf\xe9 \xff\x00 ok", "caf\ufffd \ufffd ok"),
        (b"[2024-01-01T00:00:00.000Z] + pip install .", "+ pip install ."),
    ],
)
def test_clean_line(raw, expected):
    assert clean_line(raw) == expected


def test_indentation_is_kept_for_the_parser():
    assert clean_line(b"      RuntimeError: x") == "      RuntimeError: x"


def test_prefixes_stack():
    assert strip_prefixes("> 2024-05-01T12:34:56Z error: x") == "error: x"


def test_screen_text_drops_empty_progress_segments():
    assert screen_text("done\r   \r") == "done"


def _chunks(data: bytes, size: int) -> list[bytes]:
    return list(iter_chunks(io.BytesIO(data), size=size))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_chunks_end_on_newlines_and_lose_nothing(size):
    data = b"one\ntwo\r\nthree\rstill three\nfour"
    chunks = _chunks(data, size)
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1])


def test_a_line_longer_than_the_limit_is_passed_on_in_pieces():
    data = b"x" * 1000
    chunks = list(iter_chunks(io.BytesIO(data), size=100, max_line=300))
    assert b"".join(chunks) == data and max(map(len, chunks)) <= 400


def test_open_source_reads_gzip_by_its_magic_bytes(tmp_path):
    path = tmp_path / "build.txt"
    path.write_bytes(gzip.compress(b"hello\n"))
    source = open_source(str(path))
    assert b"".join(iter_chunks(source.stream)) == b"hello\n"


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_open_source_errors_are_friendly(tmp_path, make):
    target = tmp_path / "nope.log"
    if make == "directory":
        target.mkdir()
    with pytest.raises(BuildlogError):
        open_source(str(target))


def test_corrupt_gzip_is_a_friendly_error(tmp_path):
    path = tmp_path / "bad.log.gz"
    path.write_bytes(b"\x1f\x8b" + b"not really gzip")
    with pytest.raises(BuildlogError):
        list(iter_chunks(open_source(str(path)).stream))


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b"32.06   ERROR: Failed building wheel", "  ERROR: Failed building wheel"),  # pip's own indent is kept
        (b"1.181 IndexError: list index out of range", "IndexError: list index out of range"),
        (b"#25 11.14", ""),
        (b"12.1 is the CUDA this needs", "12.1 is the CUDA this needs"),  # a version is not an elapsed time
        (b"11.8", "11.8"),
    ],
)
def test_buildkit_error_excerpt_times_are_a_prefix(raw, expected):
    """BuildKit repeats a failed step's last lines under ` > [3/4] RUN ...:` with only the seconds in front."""
    assert clean_line(raw) == expected
