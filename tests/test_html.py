"""The HTML report: self-contained, and in a real headless Chromium it loads cleanly and draws the timeline."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.conftest import CORPUS

SESSION = CORPUS / "flash-attn-blackwell-uv-venv-session.log"
MISMATCH = CORPUS / "apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130.log"
RED, GREEN = (0xCF, 0x22, 0x2E), (0x1A, 0x7F, 0x37)


def html_of(*logs: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "buildlog", "explain", *map(str, logs), "-f", "html"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_page_needs_no_network_and_holds_the_report():
    page = html_of(SESSION)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)  # nothing fetched
    assert "@import" not in page and "url(" not in page
    assert page.count('class="attempt ') == 6  # one bar per attempt of the session
    assert len(re.findall(r'class="attempt failure"', page)) == 5 and 'class="attempt success"' in page
    assert "resolved in attempt 6 by" in page
    assert re.search(r'<td class="n">939</td>', page)  # evidence with its line number
    assert "Facts from the log" in page and "Risks" in page


def test_user_text_is_escaped(tmp_path):
    log = tmp_path / "x.log"
    log.write_bytes(MISMATCH.read_bytes().replace(b"apex", b"<script>alert(1)</script>", 1))
    assert "<script>alert(1)" not in html_of(log)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium: apt-get install -y chromium")


def _load(page: Path, shot: Path) -> str:
    """Open the page in headless Chromium, take a screenshot, return what it logged (console messages)."""
    proc = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr",
         "--v=0", "--window-size=1200,900", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shot.exists(), proc.stderr[-2000:]
    return proc.stderr


def _console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line or "Failed to load resource" in line]


def _pixels(png: Path) -> set[tuple[int, int, int]]:
    """The colours of a PNG screenshot (8-bit RGB or RGBA, as Chromium writes them)."""
    data = png.read_bytes()
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour = header[0], header[1], header[2], header[3]
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride, prev, seen = width * bpp, bytearray(width * bpp), set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if row < 400:  # the timeline is at the top of the page
            seen.update(tuple(line[i : i + 3]) for i in range(0, stride, bpp))
        prev = line
    return seen


def test_chromium_loads_it_cleanly_and_the_screenshot_shows_the_timeline(tmp_path):
    control = tmp_path / "control.html"
    control.write_text("<!DOCTYPE html><title>x</title><script>console.error('a console error')</script>")
    assert _console_errors(_load(control, tmp_path / "control.png")), "the console check would see nothing"

    page = tmp_path / "report.html"
    page.write_text(html_of(SESSION), encoding="utf-8")
    shot = tmp_path / "report.png"
    logged = _load(page, shot)
    assert _console_errors(logged) == []
    colours = _pixels(shot)
    assert RED in colours and GREEN in colours  # failed and succeeded attempts, drawn
