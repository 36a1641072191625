"""`buildlog doctor`: the environment a build would meet, judged before anything is compiled.

The probe is `buildlog run`'s (buildlog/probe.py); its header goes through the same pipeline a log
does, so the compatibility checks (knowledge/checks.toml, compat/) judge it exactly as they judge
the facts of a log. `--for PACKAGE` adds what that package's own install instructions require.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from buildlog.cli.base import EXIT_FAILURES_FOUND, EXIT_OK, _json, friendly, knowledge_with, main, settings
from buildlog.errors import BuildlogError


@main.command()
@click.option("--for", "package", default=None, metavar="PACKAGE",
              help="Also check what this package's source build needs (flash-attn, xformers, apex, torch-extension).")  # fmt: skip
@click.option("--python", "python", default=None, metavar="PATH",
              help="The Python the build will run in (default: python3 on PATH, or the active venv's).")  # fmt: skip
@click.option("-f", "--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@friendly
def doctor(package: str | None, python: str | None, fmt: str) -> None:
    """Check this machine for a GPU build before building: exit 1 when the build would fail.

    It looks at what `buildlog run` records (nvcc and CUDA_HOME, torch and its CUDA, the driver
    and GPUs, gcc, python, venv, RAM, cores, MAX_JOBS, TORCH_CUDA_ARCH_LIST, NVCC_THREADS) and
    judges it with buildlog's compatibility knowledge: nvcc against torch's CUDA, the arch list
    against the GPUs, gcc against nvcc, the driver against the toolkit, jobs against RAM.

    \b
    Examples:
      buildlog doctor
      buildlog doctor --for flash-attn
      buildlog doctor --for xformers --python .venv/bin/python --format json
    """
    from buildlog.cli.run import environment
    from buildlog.pipeline import Options, trace
    from buildlog.probe import PACKAGE_NEEDS, header, package_problems

    if package is not None:
        package = package.lower().replace("_", "-")
        if package not in PACKAGE_NEEDS:
            raise BuildlogError(
                f"--for {package}: not a package buildlog knows the needs of ({', '.join(PACKAGE_NEEDS)})"
            )
    found = environment([python] if python else [])
    text = "\n".join(header(found)) + "\n"
    chosen = settings()
    report = trace(
        text.encode("utf-8"), knowledge_with(chosen), None, Options(engine=chosen.engine, cache=chosen.cache)
    ).report
    predicted = package_problems(found, PACKAGE_NEEDS[package]) if package is not None else []
    problems: list[dict[str, Any]] = [  # a predicted problem's title says its consequence
        {k: getattr(p, k, "") for k in ("id", "severity", "title", "consequence", "fix")}
        for p in [*report.risks, *predicted]
    ]
    fails = any(p["severity"] == "error" for p in problems)
    if fmt == "json":
        _json({
            "ready": not fails, "package": package,
            "environment": report.facts.model_dump(exclude_defaults=True),
            "problems": problems,
        })  # fmt: skip
    else:
        _print(report, problems, package, fails)
    sys.exit(EXIT_FAILURES_FOUND if fails else EXIT_OK)


def _print(report: Any, problems: list[dict[str, Any]], package: str | None, fails: bool) -> None:
    from buildlog.render.common import fact_pairs

    what = f"building {package}" if package else "a GPU build"
    lines = ["This machine, as a build would see it:"]
    width = max((len(k) for k, _ in fact_pairs(report.facts)), default=0)
    lines += [f"  {k:<{width}}  {v}" for k, v in fact_pairs(report.facts)] or [
        "  (nothing found: no nvcc, torch or GPU)"
    ]
    lines.append("")
    if not problems:
        lines.append(f"✓ Nothing found that would stop {what} here.")
    for p in problems:
        mark = "✗" if p["severity"] == "error" else "!"
        lines.append(f"{mark} {p['title']}")
        if p["consequence"]:
            lines.append(f"  {p['consequence']}")
        lines += [f"  {line}" for line in p["fix"].splitlines()]
    if problems:
        lines += ["", f"✗ {what.capitalize()} would fail here: fix the errors above first." if fails
                  else f"! {what.capitalize()} should work here; the warnings above may slow it or break what it builds."]  # fmt: skip
    click.echo("\n".join(lines))
