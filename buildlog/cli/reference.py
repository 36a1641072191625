"""Reference commands: what buildlog knows (causes, rules, one rule in full), the published schemas,
and `rules test`, which runs a rule folder's own examples."""

from __future__ import annotations

import sys

import click

from buildlog.cli.base import EXIT_FAILURES_FOUND, EXIT_OK, friendly, knowledge_with, main, rules_option, settings


@main.command()
@click.option("--rules", "rule_schema", is_flag=True, help="The schema of a rule file instead (for your own rules).")
@friendly
def schema(rule_schema: bool) -> None:
    """Print the JSON schema of `explain --format json` (or, with --rules, of a rule file)."""
    if rule_schema:
        import json

        from buildlog.knowledge.schema import RuleFile

        data = RuleFile.model_json_schema()
        data["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        data["title"] = "buildlog rule file"
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    from buildlog.render.jsonout import json_schema

    sys.stdout.write(json_schema())


@main.command()
@friendly
def causes() -> None:
    """List the root-cause ids buildlog can report."""
    for cause in knowledge_with(settings()).causes.values():
        click.echo(f"{cause.id:32} {cause.title}")


@main.group(invoke_without_command=True)
@click.option("--cause", "cause", default=None, help="Only the rules for this cause id.")
@rules_option
@click.pass_context
@friendly
def rules(ctx: click.Context, cause: str | None, rules: tuple[str, ...]) -> None:
    """List the detection rules (yours too): id, role or cause, title, and where a user rule comes from.

    \b
    Examples:
      buildlog rules --cause compiler_oom
      buildlog rules --rules team-rules/
      buildlog rule torch-cuda-major-mismatch
      buildlog rules test team-rules/
    """
    if ctx.invoked_subcommand is not None:
        return
    for rule in knowledge_with(settings(), rules).rules:
        if cause and rule.cause != cause:
            continue
        where = "" if rule.origin == "bundled" else f"  ({rule.origin})"
        click.echo(f"{rule.id:34} {rule.cause or rule.role:30} {rule.title}{where}")


@rules.command("test")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, path_type=str))
@friendly
def rules_test(folder: str) -> None:
    """Run a rule folder's own examples: each `fire` text must be found, each `quiet` one not.

    Each example runs through the whole pipeline with the bundled rules and the folder's, as a
    log would. Exit code 1 when any example fails; 2 when a rule file is invalid.
    """
    from pathlib import Path

    from buildlog.knowledge.artefact import bundled
    from buildlog.knowledge.load import load_rule_files
    from buildlog.pipeline import Options, trace

    base = bundled()
    mine = load_rule_files([Path(folder)], base)
    knowledge = base.with_rules(mine)
    failures = 0
    for rule in mine:
        for kind, texts in (("fire", rule.examples.fire), ("quiet", rule.examples.quiet)):
            for text in texts:
                fired = rule.id in trace(text.encode("utf-8"), knowledge, options=Options(use_model=False)).fired
                ok = fired if kind == "fire" else not fired
                failures += not ok
                mark = "ok  " if ok else "FAIL"
                click.echo(f"{mark} {rule.id} {kind}: {text.splitlines()[0][:100]}")
    click.echo(f"{len(mine)} rules, {failures} failing examples")
    sys.exit(EXIT_FAILURES_FOUND if failures else EXIT_OK)


@main.command()
@click.argument("rule_id", metavar="ID")
@rules_option
@friendly
def rule(rule_id: str, rules: tuple[str, ...]) -> None:
    """Print one rule in full: what it finds, why it matters, an example line, the fix, references."""
    from buildlog.errors import BuildlogError

    knowledge = knowledge_with(settings(), rules)
    found = knowledge.rule_by_id.get(rule_id)
    if found is None:
        raise BuildlogError(f"no rule has the id {rule_id!r} (see `buildlog rules`)")
    cause = knowledge.causes.get(found.cause)
    out = [f"{found.id}  ({found.cause or found.role}, priority {found.priority})", "", found.title]
    if cause:
        out += ["", f"Cause: {cause.id} — {cause.title}"]
    if found.description:
        out += ["", "Why it matters:", *("  " + line for line in found.description.splitlines())]
    out += ["", "Example:", *("  " + line for line in found.examples.fire[0].splitlines())]
    if found.fix:
        out += ["", "Fix:", *("  " + line for line in found.fix.splitlines())]
    if found.references:
        out += ["", "References:", *(f"  - {r}" for r in found.references)]
    if found.origin != "bundled":
        out += ["", f"From: {found.origin}"]
    click.echo("\n".join(out))
