"""Renderers are pure functions of a Report: exact output from a hand-built one."""

from __future__ import annotations

import io
import json

from rich.console import Console

from buildlog.render.jsonout import json_schema, render_json
from buildlog.render.markdown import render_markdown
from buildlog.render.terminal import render_terminal
from buildlog.report.schema import Report, Similar
from tests.sample_report import sample_report

TERMINAL = """\
✓ The build succeeded after 2 attempts; 1 problem(s) resolved on the way.
build.log · 120 lines

The first attempt (`pip install flash-attn --no-build-isolation`) failed: the compiler ran out of
memory. Attempt 2 set MAX_JOBS=20 and got past that; the build succeeded.

Timeline
#1  line 10  pip install flash-attn --no-build-isolation              failed: compiler_oom
#2  line 61  MAX_JOBS=20 pip install flash-attn --no-build-isolation  succeeded

Solved on the way
✓ compiler_oom  The compiler ran out of memory during a parallel build
  line 40: nvcc error   : 'cicc' died due to signal 9 (Kill signal)
  fixed in attempt 2: MAX_JOBS=20 (unset before)

Risks
! TORCH_CUDA_ARCH_LIST does not cover the GPU
  facts: TORCH_CUDA_ARCH_LIST=10.0, GPU=RTX PRO 6000 Blackwell (12.0)
  Kernels will fail at run time with "no kernel image is available".
  $ export TORCH_CUDA_ARCH_LIST="12.0"

Facts from the log
nvcc (CUDA)  12.8
torch        2.9.1+cu128 (CUDA 12.8)
RAM (GB)     432
"""

MARKDOWN = """\
## ✓ The build succeeded after 2 attempts; 1 problem(s) resolved on the way.

`build.log` · 120 lines

The first attempt (`pip install flash-attn --no-build-isolation`) failed: the compiler ran out of memory. \
Attempt 2 set MAX_JOBS=20 and got past that; the build succeeded.

### Timeline

| # | line | command | outcome |
|---|---|---|---|
| 1 | 10 | `pip install flash-attn --no-build-isolation` | failed: compiler_oom |
| 2 | 61 | `MAX_JOBS=20 pip install flash-attn --no-build-isolation` | succeeded |

### Solved on the way

- ✓ `compiler_oom` The compiler ran out of memory during a parallel build — \
`line 40: nvcc error   : 'cicc' died due to signal 9 (Kill signal)` — fixed in attempt 2: MAX_JOBS=20 (unset before)

### Risks

- **TORCH_CUDA_ARCH_LIST does not cover the GPU** (`TORCH_CUDA_ARCH_LIST=10.0`, `GPU=RTX PRO 6000 Blackwell (12.0)`)
  Kernels will fail at run time with "no kernel image is available".
  ```bash
  export TORCH_CUDA_ARCH_LIST="12.0"
  ```

### Facts from the log

| fact | value |
|---|---|
| nvcc (CUDA) | `12.8` |
| torch | `2.9.1+cu128 (CUDA 12.8)` |
| RAM (GB) | `432` |
"""


NARRATIVE = [
    "The first attempt (`pip install flash-attn --no-build-isolation`) failed: the compiler ran out of memory.",
    "Attempt 2 set MAX_JOBS=20 and got past that; the build succeeded.",
]


def session_report() -> Report:
    return sample_report().model_copy(update={"narrative": NARRATIVE})


def test_terminal_plain():
    out = io.StringIO()
    render_terminal(session_report(), Console(file=out, width=100, color_system=None, highlight=False))
    assert out.getvalue() == TERMINAL


def test_terminal_colour_codes_only_when_asked():
    out = io.StringIO()
    render_terminal(sample_report(), Console(file=out, width=100, force_terminal=True, color_system="standard"))
    assert "\x1b[" in out.getvalue()
    assert "MAX_JOBS=20" in out.getvalue()


def test_markdown():
    assert render_markdown(session_report()) == MARKDOWN


def test_json_round_trips_and_matches_the_schema_keys():
    text = render_json(sample_report())
    data = json.loads(text)
    assert Report.model_validate(data) == sample_report()
    schema = json.loads(json_schema())
    assert {"root_causes", "facts", "attempts", "incidents", "risks"} <= set(schema["properties"])
    assert set(data) <= set(schema["properties"])


def test_empty_report_renders():
    report = Report(source="-", lines=0, status="empty", headline="The log is empty: there is nothing to explain.")
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=80, color_system=None))
    assert out.getvalue() == "· The log is empty: there is nothing to explain.\n- · 0 lines\n"
    assert render_markdown(report).startswith("## · The log is empty")


def test_a_flooded_log_says_what_it_counted():
    from buildlog.report.schema import Repeat, Volume

    top = Repeat(line=40, text='x.cu(3): error: identifier "h" is undefined', count=93000)
    volume = Volume(candidates=100_000, analysed=6000, repeated=94000, top_repeats=[top])
    report = sample_report().model_copy(update={"volume": volume})
    note = (
        "94,000 lines repeat messages already analysed and were counted; the most repeated (93,000 more times "
        'from line 40): x.cu(3): error: identifier "h" is undefined'
    )
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=300, color_system=None, highlight=False))
    assert out.getvalue().splitlines()[2] == note
    assert f"> {note}" in render_markdown(report)
    assert json.loads(render_json(report))["volume"]["repeated"] == 94000
    assert "counted" not in render_markdown(sample_report())


def test_published_schema_is_current():
    """docs/report.schema.json is what `buildlog schema` prints: regenerate it when the Report changes."""
    from tests.conftest import ROOT

    published = (ROOT / "docs" / "report.schema.json").read_text("utf-8")
    assert published == json_schema(), "run: buildlog schema > docs/report.schema.json"


def _similar(key: str, fix: str, origin: str = "corpus") -> Similar:
    return Similar(key=key, cause="compiler_oom", title="t", score=0.8, fix=fix, origin=origin)


def test_seen_before_is_one_line_per_distinct_fix_with_the_users_own_apart():
    report = sample_report().model_copy(update={"similar": [
        _similar("a", "set MAX_JOBS=2"), _similar("b", "set MAX_JOBS=2"), _similar("c", "set MAX_JOBS=2"),
        _similar("d", "add swap"), _similar("mine-1", "set MAX_JOBS=2", origin="store"),
    ]})  # fmt: skip
    text = render_markdown(report)
    assert text.index("### Seen before: your own past failures") < text.index("### Seen before: bundled examples")
    assert text.count("fixed by: set MAX_JOBS=2") == 2 and text.count("fixed by: add swap") == 1
    assert "and 2 more like it" in text
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=200, color_system=None, highlight=False))
    assert out.getvalue().count("fixed by: set MAX_JOBS=2") == 2


def test_a_failing_session_keeps_full_causes():
    report = sample_report().model_copy(update={"status": "failure", "headline": "The build failed."})
    text = render_markdown(report)
    assert "### Cause 1: `compiler_oom`" in text and "Solved on the way" not in text


def test_a_solved_cause_is_proved_by_its_message_not_the_source_line_that_raised_it():
    from buildlog.render.common import solved_summaries
    from buildlog.report.schema import Evidence

    report = sample_report()
    cause = report.root_causes[0].model_copy(update={"evidence": [
        Evidence(line=38, text="Emitting ninja build file /tmp/b/build.ninja..."),
        Evidence(line=39, text="raise RuntimeError('nvcc died: %s' % sig)"),
        Evidence(line=40, text="RuntimeError: nvcc error   : 'cicc' died due to signal 9 (Kill signal)"),
    ]})  # fmt: skip
    ((_, proof, fixed),) = solved_summaries(report.model_copy(update={"root_causes": [cause]}))
    assert proof.startswith("line 40: RuntimeError: nvcc error") and fixed.startswith("attempt 2:")
