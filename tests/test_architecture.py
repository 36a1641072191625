"""The layering in pyproject.toml ([tool.importlinter]) holds: stages import only earlier stages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def test_import_contracts_are_kept():
    script = Path(sys.executable).parent / "lint-imports"
    if not script.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    proc = subprocess.run([str(script)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_lint_is_clean():
    """ruff's checks and its formatter (pyproject.toml) hold for the package, the tests and the benchmark."""
    script = Path(sys.executable).parent / "ruff"
    if not script.exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    for command in (["check"], ["format", "--check"]):
        proc = subprocess.run(
            [str(script), *command, "buildlog", "tests", "bench"], cwd=ROOT, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout[-3000:]
