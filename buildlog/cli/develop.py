"""Commands for working on buildlog's knowledge: eval on a folder of cases, train the classifier."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from buildlog.cli.base import (
    EXIT_FAILURES_FOUND,
    EXIT_OK,
    friendly,
    main,
)  # fmt: skip

if TYPE_CHECKING:
    from pathlib import Path


@main.command("eval")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False, path_type=str))
@click.option("--holdout", "holdout_dirs", multiple=True, metavar="DIR", type=click.Path(file_okay=False, path_type=str),
              help="Measure honestly instead: every case of DIR (and of these folders) judged by a classifier "
                   "trained without its repository, and without the rules written from that repository's logs; "
                   "top-1 is reported on the cases of these folders (e.g. --holdout corpus/pasted).")  # fmt: skip
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--engine", type=click.Choice(["both", "rules", "model"]), default="both", show_default=True,
              help="both: rules, then the classifier where no rule fires; rules: rules alone; "
                   "model: the classifier alone, by 5-fold cross-validation (needs scikit-learn).")  # fmt: skip
@friendly
def eval_cmd(folder: str, holdout_dirs: tuple[str, ...], fmt: str, engine: str) -> None:
    """Measure buildlog on a folder of cases (a log beside a .toml sidecar; see corpus/README.md).

    Prints per-cause precision and recall, the confusion of primary causes, and every miss with
    the lines it chose. Exit code 1 when any case misses.

    \b
    Examples:
      buildlog eval corpus/cases
      buildlog eval corpus/cases --engine model
      buildlog eval my-team-store/ --format json
    """
    from pathlib import Path

    from buildlog.cli.base import knowledge_with, settings
    from buildlog.evaluate import evaluate, evaluate_model
    from buildlog.pipeline import Options, analyse
    from buildlog.render.evaluation import render_eval_json, render_eval_text
    from buildlog.store.cases import iter_cases
    from buildlog.store.similar import PastFailures

    cases = list(iter_cases(Path(folder)))
    if holdout_dirs:
        _holdout(cases, [c for d in holdout_dirs for c in iter_cases(Path(d))], fmt)
        return
    if engine == "model":
        result = evaluate_model(cases)
    else:
        knowledge = knowledge_with(settings())
        options = Options(use_model=engine == "both")
        recall = PastFailures(None)  # the bundled examples, as users see them; never the user's own store
        result = evaluate(cases, lambda case: analyse(case.read_bytes(), knowledge, recall, options))
    title = f"engine {engine}: "
    sys.stdout.write(render_eval_json(result) if fmt == "json" else render_eval_text(result, title))
    sys.exit(EXIT_FAILURES_FOUND if result.misses else EXIT_OK)


@main.command()
@click.argument("folders", metavar="DIR...", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=str))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Where to write the model (default: the package's own classifier.json).")  # fmt: skip
@friendly
def train(folders: tuple[str, ...], output: str | None) -> None:
    """Train the classifier on folders of cases and export it for use without scikit-learn.

    Cases whose thread never named a cause (`diagnosed = false`) and labels buildlog cannot
    report are left out; training is the same as a fold of `eval --holdout`, with nothing held out.
    `buildlog rebuild corpus/cases corpus/pasted` trains the bundled model: the tests check that it
    was trained on those folders as they are.

    \b
    Examples:
      buildlog train corpus/cases corpus/pasted
      buildlog train my-team-store/ -o my-model.json
    """
    from pathlib import Path

    from buildlog.learn.training import train as fit_corpus
    from buildlog.learn.training import training_cases, write_model

    cases = training_cases(Path(f) for f in folders)
    data = fit_corpus(cases)
    target = Path(output) if output else _classifier_path()
    write_model(data, target)
    words = data["vocabulary"].count("\n") + 1 if data["vocabulary"] else 0
    click.echo(
        f"trained on {len(cases)} cases of {', '.join(folders)}: {len(data['classes'])} causes, {words} features, "
        f"answer threshold {data['threshold']:.2f} -> {target}"
    )


def _holdout(cases: list, measured: list, fmt: str) -> None:
    import json

    from buildlog.cli.base import knowledge_with, settings
    from buildlog.learn.holdout import holdout

    result = holdout(cases + measured, knowledge_with(settings()), measured)
    rows = {"rules": result.rules, "classifier": result.model, "both": result.both}
    undiagnosed = sum(not c.sidecar.diagnosed for c in measured)
    if fmt == "json":
        data = {
            name: {"cases": t.cases, "top1": round(t.top1, 3), "precision": round(t.precision, 3)}
            for name, t in rows.items()
        }
        data.update(folds=result.folds, sources=result.sources, classifier_adds=result.model_adds,
                    undiagnosed=undiagnosed,
                    classifier_leads={"answered": result.model_in_both.answered, "precision": round(result.model_in_both.precision, 3)},
                    thresholds=result.thresholds, class_thresholds=result.class_thresholds,
                    misses=[{"case": c, "expected": e, "reported": g, "engine": n} for c, e, g, n in result.misses])  # fmt: skip
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    click.echo(
        f"held out by repository: {result.sources} sources in {result.folds} folds; measured on {result.both.cases} cases"
        + (f" (left out: {undiagnosed} whose thread never named a cause)" if undiagnosed else "")
    )
    click.echo(f"{'engine':12} {'top-1':>7} {'right':>6} {'answered':>9} {'precision':>10}")
    for name, t in rows.items():
        click.echo(f"{name:12} {t.top1:7.1%} {t.right:6} {t.answered:9} {t.precision:10.1%}")
    lead = result.model_in_both
    click.echo(
        f"the classifier adds {len(result.model_adds)} cases that rules alone miss; where its answer leads "
        f"the report it is right {lead.answered_right} of {lead.answered} ({lead.precision:.1%})"
    )
    click.echo(
        "answer thresholds, chosen inside each fold's training data: "
        + ", ".join(f"{t:.2f}" for t in result.thresholds)
    )
    for fold, lower in enumerate(result.class_thresholds, start=1):
        if lower:
            click.echo(f"  fold {fold}, causes answered lower: " + ", ".join(f"{c} {t:.2f}" for c, t in lower.items()))
    for case, expected, got, engine in result.misses:
        click.echo(
            f"MISS {case}: expected {expected}, got {got}"
            + (f" (by the {'classifier' if engine == 'model' else engine})" if engine else "")
        )


@main.command()
@click.argument("folders", metavar="[DIR]...", nargs=-1, type=click.Path(file_okay=False, path_type=str))
@click.option("--check", is_flag=True, help="Only say whether each is current (exit 1 when one is stale).")
@friendly
def rebuild(folders: tuple[str, ...], check: bool) -> None:
    """Rebuild what is derived: the knowledge artefact (buildlog/knowledge/bundled.json, from the
    knowledge files), and with DIRs the classifier (trained on all of them, as a holdout fold is)
    and the seen-before index (from the first).

    Run it after changing a rule, a table or a grammar, and after adding cases:
    the tests fail while any of them is stale.

    \b
    Examples:
      buildlog rebuild
      buildlog rebuild corpus/cases corpus/pasted
      buildlog rebuild --check corpus/cases corpus/pasted
    """
    import json
    from pathlib import Path

    from buildlog.knowledge import artefact
    from buildlog.store import index

    stale = []
    if check:
        if not artefact.is_current():
            stale.append(str(artefact.default_path()))
        if folders:
            path = index.default_index_path()
            current = json.loads(path.read_text("utf-8")).get("corpus_hash") if path.is_file() else None
            if current != index.corpus_hash(Path(folders[0])):
                stale.append(str(path))
            if not _classifier_current([Path(f) for f in folders]):
                stale.append(str(_classifier_path()))
        click.echo("stale: " + ", ".join(stale) if stale else "up to date")
        sys.exit(EXIT_FAILURES_FOUND if stale else EXIT_OK)
    data = artefact.write()
    artefact.bundled.cache_clear()  # what follows (training) reads the knowledge just written
    click.echo(f"{artefact.default_path()}: {len(data['rules'])} rules, {len(data['facts'])} fact patterns")
    if folders:
        click.get_current_context().invoke(train, folders=folders, output=None)
        built = index.build_index(Path(folders[0]))
        index.default_index_path().write_text(index.dump_index(built), "utf-8")
        click.echo(f"{index.default_index_path()}: {len(built['cases'])} cases")


def _classifier_path() -> Path:
    """The package's own classifier.json, where `train` writes by default."""
    from pathlib import Path

    import buildlog.knowledge

    return Path(buildlog.knowledge.__file__).resolve().parent / "classifier.json"


def _classifier_current(folders: list[Path]) -> bool:
    """Whether the bundled classifier was trained on these corpus folders as they are."""
    import json

    from buildlog.learn.training import corpus_hash, training_cases

    path = _classifier_path()
    stored = json.loads(path.read_text("utf-8")).get("corpus_hash") if path.is_file() else None
    return stored == corpus_hash(training_cases(folders))
