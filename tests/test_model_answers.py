"""Where the classifier answers: logs no rule explains, with the fix that belongs to the cause."""

from __future__ import annotations

import re

from buildlog.diagnose import verdict
from buildlog.knowledge.artefact import bundled
from buildlog.learn.classifier import Prediction
from buildlog.learn.training import may_train
from buildlog.store.cases import Case, Sidecar
from tests.conftest import analyse_text

# A cut-off paste: an error the rules do not know, and no line that says the build failed.
CUT_OFF = (
    "Collecting somepkg==1.0\n  Downloading somepkg-1.0.tar.gz (12 kB)\nerror: somepkg could not find its odd part\n"
)
# The same paste where nothing went wrong yet, and a build that went on past its warning to link and copy.
NO_FAILURE = (
    "Collecting somepkg==1.0\n  Downloading somepkg-1.0.tar.gz (12 kB)\nsomepkg: WARNING: could not find its odd part\n"
)
BUILT = (
    "$ python setup.py build_ext --inplace\nrunning build_ext\nbuilding 'somepkg' extension\n"
    "somepkg: ERROR: could not find its odd part, using the plain one\ng++ -O2 -shared build/temp/a.o -o build/lib/somepkg.so\n"
    "copying build/lib/somepkg.so -> somepkg\n"
)
# Installed, then a check that fails in a way no rule knows.
CHECK_FAILED = (
    "$ pip install ./x\nProcessing ./x\nSuccessfully installed x-0.1\n$ python -c 'import x'\n"
    'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nImportError: x could not load its odd part\n'
)


def _confident(cause: str):  # type: ignore[no-untyped-def]
    return lambda data, span: Prediction(cause, 0.93, True, ((cause, 0.93),))


def test_a_cause_whose_rules_are_all_switched_off_keeps_its_fix():
    k = bundled()
    ours = [r for r in k.rules if r.cause == "disk_full"]
    best = max(ours, key=lambda r: r.priority)
    assert k.fix_for("disk_full") == best.fix and best.fix
    off = k.with_rules((), [r.id for r in ours])
    assert not [r for r in off.rules if r.cause == "disk_full"]
    assert off.fix_for("disk_full") == best.fix
    assert k.fix_for("no_such_cause") is None


def test_a_classifier_answer_gets_the_fix_its_cause_names_not_one_packages_own():
    k = bundled()
    cause = k.causes["cuda_toolkit_incomplete"]
    assert cause.fix_rule and k.rule_by_id[cause.fix_rule].cause == cause.id
    ours = [r for r in k.rules if r.cause == cause.id]
    assert max(ours, key=lambda r: r.priority).id != cause.fix_rule  # a package's own rule ranks higher
    assert k.fix_for(cause.id) == k.rule_by_id[cause.fix_rule].fix
    off = k.with_rules((), [cause.fix_rule])
    assert off.fix_for(cause.id) == k.rule_by_id[cause.fix_rule].fix  # switched off, the fix stays


def test_a_confident_classifier_answers_where_no_failure_line_was_found(monkeypatch):
    monkeypatch.setattr(verdict, "_classify", lambda data, span: None)  # a classifier that abstains
    plain = analyse_text(CUT_OFF).report
    assert plain.status == "unknown" and not plain.root_causes
    monkeypatch.setattr(verdict, "_classify", _confident("disk_full"))
    report = analyse_text(CUT_OFF).report
    assert report.status == "failure" and [r.id for r in report.root_causes] == ["disk_full"]
    assert report.root_causes[0].engine == "model" and report.root_causes[0].fix


def test_a_confident_classifier_names_no_cause_where_the_log_shows_no_failure(monkeypatch):
    monkeypatch.setattr(verdict, "_classify", _confident("disk_full"))
    for text in (NO_FAILURE, BUILT):  # nothing failed yet; a success that no line marks
        report = analyse_text(text).report
        assert report.status == "unknown" and not report.root_causes, text
        assert report.missing  # the honest "not enough log"
    # the error said in a warning, or before the build went on: the same guard the holdout measures
    assert not verdict.may_classify(analyse_text(BUILT).events, analyse_text(BUILT).attempts[-1], "unknown")
    cut = analyse_text(CUT_OFF)
    assert verdict.may_classify(cut.events, cut.attempts[-1], "unknown")


def test_a_confident_classifier_names_no_cause_where_the_build_succeeded(monkeypatch):
    plain = analyse_text(CHECK_FAILED).report
    assert plain.status == "failure" and plain.attempts[0].outcome == "success"
    monkeypatch.setattr(verdict, "_classify", _confident("abi_mismatch"))
    report = analyse_text(CHECK_FAILED).report
    assert [r.id for r in report.root_causes] == ["unknown"] and "best guess" not in report.root_causes[0].fix


def test_an_unsure_classifier_leaves_an_unknown_log_unknown(monkeypatch):
    monkeypatch.setattr(verdict, "_classify", lambda data, span: Prediction("disk_full", 0.3, False, ()))
    assert analyse_text(CUT_OFF).report.status == "unknown"


def _case(diagnosed: bool) -> Case:
    side = Sidecar(title="t", provenance="pasted", outcome="failure", causes=["unknown"], repository="a/b",
                   source="https://github.com/a/b/issues/1", diagnosed=diagnosed)  # fmt: skip
    return Case(slug="x", log_path="x.log", sidecar=side)


def test_a_paste_whose_thread_never_diagnosed_it_trains_no_fold():
    assert may_train(_case(True), frozenset({"c/d"}))
    assert not may_train(_case(False), frozenset({"c/d"}))


def test_every_cause_has_a_fix_the_classifier_can_give_without_the_rules_captures():
    """The classifier borrows a cause's fix with no rule's captures: no `<name>` may be left in it."""
    from buildlog.diagnose.template import fill

    k = bundled()
    holes = {c: re.findall(r"<\w+>", fill(k.fix_for(c) or "", {})) for c in k.causes}
    assert not {c: h for c, h in holes.items() if h}
    assert re.findall(r"<\w+>", fill("torch {torch} is here", {})) == ["<torch>"]  # the check sees a hole


class _Says:
    """A classifier that always names one cause, confidently."""

    def __init__(self, cause: str) -> None:
        self.cause = cause

    def predict(self, lines):  # type: ignore[no-untyped-def]
        return Prediction(self.cause, 0.93, True, ((self.cause, 0.93),))


def test_the_classifier_names_a_missing_piece_of_cuda_only_where_a_line_names_one(monkeypatch):
    # cuda_toolkit_incomplete needs a line that names CUDA's headers, libraries or toolset (causes.toml)
    assert bundled().causes["cuda_toolkit_incomplete"].classifier_needs
    monkeypatch.setattr(verdict, "model_of", lambda data: _Says("cuda_toolkit_incomplete"))
    other = CUT_OFF.replace("could not find its odd part", "could not find cblas.h for its odd part")
    cuda = CUT_OFF.replace("could not find its odd part", "could not find nvToolsExt for its odd part")
    assert analyse_text(other).report.root_causes == []
    assert [r.id for r in analyse_text(cuda).report.root_causes] == ["cuda_toolkit_incomplete"]
    # a cause without such a condition is answered from any lines
    monkeypatch.setattr(verdict, "model_of", lambda data: _Says("disk_full"))
    assert [r.id for r in analyse_text(other).report.root_causes] == ["disk_full"]


class _Unsure:
    """A classifier that is never sure, counting how often it is asked."""

    def __init__(self) -> None:
        self.asked = 0

    def predict(self, lines):  # type: ignore[no-untyped-def]
        self.asked += 1
        return Prediction("disk_full", 0.5, False, (("disk_full", 0.5),))


def test_the_classifier_reads_an_unexplained_attempt_once(monkeypatch):
    # its answer decides whether it leads the report, and its guess is shown where it does not
    unsure = _Unsure()
    monkeypatch.setattr(verdict, "model_of", lambda data: unsure)
    failed = CUT_OFF + "error: subprocess-exited-with-error\n"
    report = analyse_text(failed).report
    assert [r.id for r in report.root_causes] == ["unknown"]
    assert "disk_full (50%)" in report.root_causes[0].fix
    assert unsure.asked == 1
