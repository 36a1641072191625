"""Renders an evaluation: per-cause precision and recall, the confusion matrix, and each miss."""

from __future__ import annotations

import json

from buildlog.scores import EvalResult


def render_eval_text(result: EvalResult, title: str = "") -> str:
    total = len(result.results)
    passed = total - len(result.misses)
    out = [
        f"{title}{passed}/{total} cases pass"
        + (f" (left out: {result.undiagnosed} whose thread never named a cause)" if result.undiagnosed else ""),
        "",
        f"{'cause':32} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4}",
    ]
    for cause in sorted(result.counts):
        c = result.counts[cause]
        out.append(
            f"{cause:32} {result.precision(cause):9.2f} {result.recall(cause):7.2f} {c['tp']:4} {c['fp']:4} {c['fn']:4}"
        )
    out += ["", "confusion (expected primary -> reported primary), off-diagonal only:"]
    off = [(k, n) for k, n in sorted(result.confusion.items()) if k[0] != k[1]]
    out += [f"  {e} -> {p}: {n}" for (e, p), n in off] or ["  none"]
    for miss in result.misses:
        out += ["", f"MISS {miss.slug} (status {miss.status})"]
        out += [f"  - {p}" for p in miss.problems]
        out += [f"    {line:>6} | {text[:160]}" for line, text in miss.chosen[:6]]
    return "\n".join(out) + "\n"


def render_eval_json(result: EvalResult) -> str:
    data = {
        "cases": len(result.results),
        "passed": len(result.results) - len(result.misses),
        "undiagnosed": result.undiagnosed,
        "causes": {
            c: {"precision": result.precision(c), "recall": result.recall(c), **result.counts[c]}
            for c in sorted(result.counts)
        },
        "confusion": [{"expected": e, "reported": p, "count": n} for (e, p), n in sorted(result.confusion.items())],
        "misses": [
            {
                "case": m.slug,
                "status": m.status,
                "expected": m.expected,
                "reported": m.predicted,
                "problems": m.problems,
                "lines": [{"line": n, "text": t} for n, t in m.chosen],
            }
            for m in result.misses
        ],  # fmt: skip
    }
    return json.dumps(data, indent=2) + "\n"
