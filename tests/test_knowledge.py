"""Knowledge: one loader, one checked artefact that is current, and nothing loaded from outside."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from buildlog.errors import BuildlogError
from buildlog.knowledge import artefact
from buildlog.knowledge.artefact import bundled, sources_hash
from buildlog.knowledge.bundle import knowledge_from
from buildlog.knowledge.load import load_sources, source_texts, with_user_rules
from buildlog.knowledge.vocabulary import GRAMMAR_RULES, GRAMMARS, EventKind
from tests.conftest import analyse_text

K = bundled()


def test_the_artefact_is_current():
    """bundled.json is built from the sources as they are: rebuild it with buildlog rebuild."""
    stored = json.loads(artefact.default_path().read_text("utf-8"))
    assert stored["sources"] == sources_hash(source_texts()), "run: buildlog rebuild"


def test_the_artefact_holds_what_the_sources_say():
    fresh = knowledge_from(load_sources(source_texts()))  # straight from the sources (slow)
    assert [r.id for r in fresh.rules] == [r.id for r in K.rules]
    assert fresh.rules == K.rules and fresh.facts == K.facts and fresh.stages == K.stages
    assert fresh.compat == K.compat and fresh.checks == K.checks and fresh.plan == K.plan


def test_rebuild_check_says_whether_it_is_stale():
    from click.testing import CliRunner

    from buildlog.cli import main

    result = CliRunner().invoke(main, ["rebuild", "--check"])
    assert result.exit_code == 0 and "up to date" in result.output
    assert artefact.is_current()


def test_every_grammar_rule_has_an_event_kind_and_the_parsers_come_from_the_artefact():
    from lark import Tree

    for name in GRAMMARS:
        parser = K.parser(name)
        alternatives = {str(r.origin.name) for r in parser.rules if str(r.origin.name) not in ("start",)}
        start = (
            {str(r.expansion[0].name).lower() for r in parser.rules if r.origin.name == "start"}
            if name != "command"
            else {"start"}
        )
        assert start, name
        for rule in start:
            assert (name, rule) in GRAMMAR_RULES, f"{name}:{rule} has no EventKind"
        assert alternatives
    tree = K.parser("python").parse('File "/x.py", line 3, in <module>')
    assert isinstance(tree, Tree)
    assert {k for k in GRAMMAR_RULES.values()} <= set(EventKind)


def test_a_hostile_parser_cache_in_the_shared_temporary_folder_is_never_loaded(tmp_path):
    """lark's own cache (a pickle in /tmp under a predictable name) is not used: planting one runs nothing."""
    marker = tmp_path / "planted-ran"
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('x')"

    class Boom:
        def __reduce__(self):
            return (exec, (payload,))

    import pickle

    planted = []
    for name in ("command", "diagnostic", "python", "ninja", "pip", "banner"):
        for suffix in ("", "_3_11", "_3.11"):
            path = Path(tempfile.gettempdir()) / f".lark_cache_{os.getuid()}_planted_{name}{suffix}.tmp"
            path.write_bytes(pickle.dumps(Boom()))
            planted.append(path)
    try:
        import subprocess
        import sys

        code = "from buildlog.knowledge.artefact import bundled; k = bundled(); [k.parser(n) for n in ('command','pip','python')]"
        subprocess.run([sys.executable, "-c", code], check=True)
        analyse_text("$ pip install flash-attn\nERROR: Failed building wheel for flash-attn\n")
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
    assert not marker.exists()
    from buildlog.knowledge import parsers

    assert "cache" not in parsers.OPTIONS  # lark is never asked to read or write its cache


def test_cross_references_are_load_errors():
    texts = source_texts()
    broken = dict(texts)
    broken["hints.toml"] = texts["hints.toml"] + '\n[[hint]]\nwhen = "no-such-rule"\ntext = "x"\n'
    with pytest.raises(BuildlogError, match="hints.toml: hint no-such-rule: field when"):
        load_sources(broken)
    broken = dict(texts)
    broken["facts.toml"] = texts["facts.toml"].replace("(?P<torch>", "(?P<tourch>", 1)
    with pytest.raises(BuildlogError, match="groups name no fact"):
        load_sources(broken)
    broken = dict(texts)
    name = next(n for n in texts if n.startswith("rules/"))
    broken[name] = texts[name].replace('fix = """', 'fix = """{no_such_value} ', 1)
    with pytest.raises(BuildlogError, match="unknown template values"):
        load_sources(broken)
    broken = dict(texts)
    broken["causes.toml"] = texts["causes.toml"].replace('fix_rule = "cuda-header-missing"', 'fix_rule = "disk-full"')
    with pytest.raises(BuildlogError, match="cause cuda_toolkit_incomplete: field fix_rule: no rule of this cause"):
        load_sources(broken)


RULE = """
[[rule]]
id = "team-cuda-12-only"
cause = "cuda_version_mismatch"
title = "Our cluster images ship only CUDA 12 toolkits"
anchors = ["TEAM-CHECK: toolkit"]
pattern = 'TEAM-CHECK: toolkit (?P<found>\\d+\\.\\d+) is not allowed'
priority = 95
fix = \"\"\"Use the cluster's CUDA 12 image; {found} is not supported here.\"\"\"

[rule.examples]
fire = ["TEAM-CHECK: toolkit 13.0 is not allowed"]
quiet = ["TEAM-CHECK: toolkit 12.8 is fine"]
"""


def test_a_user_rule_is_selected_by_the_scanner_like_a_bundled_one(tmp_path):
    (tmp_path / "team.toml").write_text(RULE)
    mine = with_user_rules(K, [tmp_path])
    log = b"$ pip install ext\n" + b"noise line\n" * 5000 + b"TEAM-CHECK: toolkit 13.0 is not allowed\nerror: failed\n"
    from buildlog.pipeline import analyse

    report = analyse(log, mine)
    assert [c.rule for c in report.root_causes][:1] == ["team-cuda-12-only"]
    assert "13.0 is not supported here" in report.root_causes[0].fix
    assert "TEAM-CHECK: toolkit" in mine.plan.anchors and "TEAM-CHECK: toolkit" not in K.plan.anchors


def test_a_bundled_rule_can_be_switched_off(tmp_path):
    off = with_user_rules(K, [], ["torch-cuda-major-mismatch"])
    assert "torch-cuda-major-mismatch" not in off.rule_by_id and "torch-cuda-major-mismatch" in K.rule_by_id
    with pytest.raises(BuildlogError, match="no bundled rule has the id nope"):
        with_user_rules(K, [], ["nope"])


@pytest.mark.parametrize(
    "change, message",
    [
        (("priority = 95", "priority = 950"), "team.toml: rule team-cuda-12-only: field priority"),
        (('cause = "cuda_version_mismatch"', 'cause = "cuda_mismatch"'), "field cause: unknown cause id"),
        (('anchors = ["TEAM-CHECK: toolkit"]', 'anchors = ["TEAM-CHECK: toolkit"]\ncolour = 1'), "field colour"),
        (("(?P<found>", "(?P<found"), "field pattern"),
        (('id = "team-cuda-12-only"', 'id = "torch-cuda-major-mismatch"'), "already used by bundled"),
        (('is not allowed"]', 'is refused"]'), "field examples: pattern does not fire"),
    ],
)
def test_a_bad_user_rule_names_the_file_and_the_field(tmp_path, change, message):
    (tmp_path / "team.toml").write_text(RULE.replace(*change))
    with pytest.raises(BuildlogError, match=message):
        with_user_rules(K, [tmp_path])
