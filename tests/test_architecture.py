"""The layering in pyproject.toml ([tool.importlinter]) holds: stages import only earlier stages."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT


def test_import_contracts_are_kept():
    if shutil.which("lint-imports") is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    proc = subprocess.run(["lint-imports"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
