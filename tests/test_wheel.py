"""The built wheel carries the grammars, rules and tables the package reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.conftest import ROOT


def test_wheel_contains_package_data(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("buildlog-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for grammar in ("command", "diagnostic", "python", "ninja", "pip", "banner"):
        assert f"buildlog/grammars/{grammar}.lark" in names
    for data in ("causes.toml", "facts.toml", "stages.toml", "resolution.toml"):
        assert f"buildlog/knowledge/{data}" in names
    assert "buildlog/knowledge/corpus_index.json" in names and "buildlog/learn/features.py" in names
    rules = [n for n in names if n.startswith("buildlog/knowledge/rules/") and n.endswith(".toml")]
    assert len(rules) >= 4
