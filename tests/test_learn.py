"""The classifier: pure-Python scoring equals scikit-learn's, the bundled model fits the corpus,
and explaining a log never imports scikit-learn."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from buildlog.errors import BuildlogError
from buildlog.knowledge.artefact import bundled
from buildlog.learn.classifier import model_from_dict, model_of
from buildlog.learn.features import fingerprint, idf_from, mask, tfidf, tokens
from buildlog.store.cases import iter_cases
from tests.conftest import CORPUS

DOCS = [
    "ModuleNotFoundError: No module named 'torch'\nGetting requirements to build wheel ... error",
    "error: externally-managed-environment\nThis environment is externally managed",
    "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\nninja: build stopped: subcommand failed.",
    "ModuleNotFoundError: No module named 'packaging'",
]


def test_mask_hides_volatile_text():
    line = 'File "/tmp/pip-build-env-k2j3h4/overlay/lib/python3.11/site-packages/setuptools/build_meta.py", line 317'
    assert mask(line) == 'File " build_meta.py ", line 0'
    assert fingerprint(["/tmp/a1/x.py:12 boom"]) == fingerprint(["/tmp/b2/x.py:99 boom"])
    assert fingerprint(["x"], "disk_full") != fingerprint(["x"], "compiler_oom")


def test_tfidf_matches_scikit_learn():
    sklearn = pytest.importorskip("sklearn.feature_extraction.text")
    docs = [tokens(d) for d in DOCS]
    vectorizer = sklearn.TfidfVectorizer(analyzer=lambda d: d, sublinear_tf=True, norm="l2", smooth_idf=True)
    matrix = vectorizer.fit_transform(docs)
    idf = idf_from(docs)
    for row, doc in enumerate(docs):
        ours = tfidf(doc, idf)
        theirs = {w: matrix[row, i] for w, i in vectorizer.vocabulary_.items() if matrix[row, i]}
        assert ours.keys() == theirs.keys()
        assert all(abs(ours[w] - theirs[w]) < 1e-9 for w in ours)


def test_exported_model_scores_like_scikit_learn():
    pytest.importorskip("sklearn")
    from buildlog.learn.training import Sample, fit

    samples = [
        Sample(str(i), (d,), label) for i, (d, label) in enumerate(zip(DOCS * 3, ["a", "b", "c", "d"] * 3, strict=True))
    ]
    model = model_from_dict(fit(samples, "test"))
    assert model.predict([DOCS[2]]).cause == "c"
    assert model.predict(["completely unrelated words nobody wrote"]) is None


def test_model_format_is_checked():
    with pytest.raises(BuildlogError, match="retrain"):
        model_from_dict({"format": 999, "features_version": "1"})


def test_a_matrix_that_does_not_fit_the_vocabulary_is_refused():
    data = dict(bundled().classifier_data)
    data["vocabulary"] = data["vocabulary"].rsplit("\n", 1)[0]
    with pytest.raises(BuildlogError, match="damaged"):
        model_from_dict(data)


def test_bundled_model_was_trained_on_this_corpus():
    pytest.importorskip("sklearn")
    from buildlog.learn.training import corpus_hash

    model = model_of(bundled().classifier_data)
    assert model is not None, "no bundled model: run `buildlog rebuild corpus/cases corpus/pasted`"
    assert model.corpus_hash == corpus_hash(list(iter_cases(CORPUS)) + list(iter_cases(CORPUS.parent / "pasted"))), (
        "corpus changed: run `buildlog rebuild corpus/cases corpus/pasted`"
    )


def test_what_ships_is_trained_as_a_holdout_fold_is(tmp_path, monkeypatch):
    """`buildlog train` (which `rebuild` runs) and every holdout fold train through fold_training, on the
    same cases, the shipped one with nothing held out and a fold without its repositories: one code path."""
    import shutil

    from click.testing import CliRunner

    from buildlog.cli import main
    from buildlog.learn import holdout as holdout_module
    from buildlog.learn import training
    from buildlog.learn.holdout import fold_of, holdout
    from buildlog.learn.training import source_of

    k = bundled()
    pasted = [c for c in iter_cases(CORPUS.parent / "pasted") if c.sidecar.causes[0] in k.causes][:12]
    pasted += [c for c in iter_cases(CORPUS.parent / "pasted") if not c.sidecar.diagnosed][:2]
    cases = list(iter_cases(CORPUS))[:12]
    for folder, chosen in (("cases", cases), ("pasted", pasted)):
        (tmp_path / folder).mkdir()
        for case in chosen:
            shutil.copy(case.log_path, tmp_path / folder)
            shutil.copy(case.log_path.with_name(case.slug + ".toml"), tmp_path / folder)
    calls = []

    def spy(cases, knowledge, held=frozenset(), corpus=None, samples=None):  # type: ignore[no-untyped-def]
        calls.append((sorted(c.slug for c in cases), held, corpus))
        return dict(bundled().classifier_data)  # a real model, without the cost of fitting one

    monkeypatch.setattr(training, "fold_training", spy)
    monkeypatch.setattr(holdout_module, "fold_training", spy)
    out = tmp_path / "model.json"
    run = CliRunner().invoke(main, ["train", str(tmp_path / "cases"), str(tmp_path / "pasted"), "-o", str(out)])
    assert run.exit_code == 0, run.output
    every = sorted(c.slug for c in cases + pasted)
    assert calls == [(every, frozenset(), None)]  # all of both folders, nothing held out, the corpus hash
    assert json.loads(out.read_text()) == json.loads(json.dumps(dict(bundled().classifier_data)))
    calls.clear()
    copied = list(iter_cases(tmp_path / "cases")) + list(iter_cases(tmp_path / "pasted"))
    holdout(copied, k, [c for c in copied if c.sidecar.provenance == "pasted"], folds=2)
    folds = {f: frozenset(source_of(c).lower() for c in pasted[:12] if fold_of(source_of(c), 2) == f) for f in (0, 1)}
    assert calls == [(every, folds[f], f"holdout-{f}") for f in (0, 1) if folds[f]]


def test_explaining_a_log_does_not_import_scikit_learn(tmp_path):
    log = tmp_path / "b.log"
    log.write_text("$ pip install flash-attn\nnvcc error   : 'cicc' died due to signal 9 (Kill signal)\n")
    code = (
        f"import sys; from buildlog.cli import main; sys.argv=['buildlog','explain',{str(log)!r},'-f','json'];\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sklearn'))), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_the_classifier_breaks_ties_between_causes_the_rules_rank_alike():
    """Two open causes of equal rule priority come out in the same order whatever their line order."""
    from tests.conftest import analyse_text

    pep668 = "error: externally-managed-environment\n× This environment is externally managed\n"
    disk = "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n"
    one = analyse_text("$ pip install flash-attn\n" + pep668 + disk).report
    two = analyse_text("$ pip install flash-attn\n" + disk + pep668).report
    assert {r.id for r in one.root_causes} == {"externally_managed_pip", "disk_full"}
    assert [r.id for r in one.root_causes] == [r.id for r in two.root_causes]


def test_model_tokens_share_the_parts_of_compound_names_and_mark_complaints():
    from buildlog.learn.features import model_tokens

    words = model_tokens(["fatal error: cusolverDn.h: No such file or directory", "  running build_ext"])
    assert {"~cusolver", "~dn", "!cusolverdn", "fatal error"} <= set(words)
    assert {"~build", "~ext"} <= set(words) and "!build_ext" not in words  # a progress line is no complaint
    assert model_tokens(["/tmp/a1/x.py:12 boom"]) == model_tokens(["/tmp/b2/x.py:99 boom"])


def test_failure_lines_that_are_only_pips_summary_give_the_classifier_nothing():
    from buildlog.learn.features import model_tokens

    summary = [
        "error: subprocess-exited-with-error",
        "× python setup.py bdist_wheel did not run successfully.",
        "│ exit code: 1",
        "╰─> [9 lines of output]",
        "ERROR: Failed building wheel for flash-attn",
        "Failed to build flash-attn",
        "ERROR: Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects",
    ]
    assert model_tokens(summary) == []
    told = model_tokens(summary[:4] + ["error: Remote end closed connection without response"] + summary[4:])
    assert {"!remote", "closed", "connection"} <= set(told)  # one line of its own: the whole failure is read


def test_a_compiler_that_exited_is_no_more_than_the_summary_to_the_classifier():
    """setuptools' "error: command '...nvcc' failed", ninja's and torch's stop say a compiler failed,
    whatever the cause: a paste of only them gets no guess; with the compiler's own error, it does."""
    from buildlog.learn.features import model_tokens

    exited = [
        "error: command '/usr/local/cuda-10.2/bin/nvcc' failed with exit status 1",
        "ninja: build stopped: subcommand failed.",
        "RuntimeError: Error compiling objects for extension",
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        "error: command 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin\\nvcc.exe' failed with exit code 2",
    ]
    assert model_tokens(exited) == []
    told = model_tokens(["nvcc fatal   : Unsupported gpu architecture 'compute_86'", *exited])
    assert {"!unsupported", "gpu", "architecture"} <= set(told)


def test_wilson_bound_is_below_the_rate_and_tightens_with_more_answers():
    from buildlog.learn.training import wilson_lower

    assert wilson_lower(0, 0) == 0.0
    assert wilson_lower(9, 10) < wilson_lower(90, 100) < 0.9 < wilson_lower(990, 1000) < 0.99


def _samples(n_groups: int, noisy: bool):  # type: ignore[no-untyped-def]
    from buildlog.learn.training import Sample

    out = []
    for g in range(n_groups):
        for i, (doc, label) in enumerate(zip(DOCS, "abcd", strict=True)):
            shown = "abcd"[(g + i) % 4] if noisy else label  # noisy: the label says nothing about the text
            out.append(Sample(f"{g}-{i}", (doc, f"extra words {g}"), shown, f"repo{g}"))
    return out


def test_the_answer_threshold_is_chosen_inside_the_training_data():
    pytest.importorskip("sklearn")
    from buildlog.learn.training import THRESHOLDS, choose_threshold, fit

    clear = choose_threshold(_samples(12, noisy=False))
    assert clear < THRESHOLDS[-1]  # answers that cross-validate well earn a lower threshold
    assert choose_threshold(_samples(12, noisy=True)) == THRESHOLDS[-1]  # labels unrelated to the text: shy
    assert fit(_samples(12, noisy=False), "t")["threshold"] == clear
    assert fit(_samples(12, noisy=False), "t", threshold=0.7)["threshold"] == 0.7


def test_rebuild_check_covers_the_classifier(tmp_path):
    """`rebuild --check DIR` names classifier.json stale unless DIR is what it learnt from."""
    import shutil

    from click.testing import CliRunner

    from buildlog.cli import main

    def check(*folders: str) -> str:
        args = [str(tmp_path / f) for f in folders or ("cases", "pasted")]
        return CliRunner().invoke(main, ["rebuild", "--check", *args]).output.strip()

    shutil.copytree(CORPUS, tmp_path / "cases")
    shutil.copytree(CORPUS.parent / "pasted", tmp_path / "pasted")
    assert check() == "up to date"
    assert "classifier.json" in check("cases")  # it learnt from the pastes too
    (tmp_path / "cases" / f"{next(iter_cases(CORPUS)).slug}.toml").unlink()
    assert "classifier.json" in check()


def test_a_cause_whose_answers_stay_right_lower_down_earns_a_lower_threshold():
    from buildlog.learn.training import class_thresholds, wilson_lower

    sure = [("a", 0.9, True)] * 40 + [("b", 0.9, True)] * 40
    lower = [("a", 0.42, True)] * 30 + [("b", 0.42, False)] * 10 + [("b", 0.42, True)] * 10
    chosen = class_thresholds(sure + lower, 0.8)
    assert chosen == {"a": 0.4}  # b's answers at 0.42 are half wrong: it keeps the one threshold
    answered = [right for cause, p, right in sure + lower if p >= chosen.get(cause, 0.8)]
    assert wilson_lower(sum(answered), len(answered)) >= 0.9
    assert class_thresholds([("a", 0.42, False)] * 5 + sure, 0.8) == {}


def test_the_model_answers_a_cause_at_its_own_threshold():
    pytest.importorskip("sklearn")
    from buildlog.learn.training import fit

    data = fit(_samples(12, noisy=False), "t", threshold=0.99)
    assert not model_from_dict(data).predict([DOCS[2]]).confident
    data["class_thresholds"] = {"c": 0.2}
    assert model_from_dict(data).predict([DOCS[2]]).confident
