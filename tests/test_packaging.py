"""The packaging metadata a user (and pip) expects: one version, a license file, honest classifiers."""

from __future__ import annotations

import re
import sys

from tests.conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]


def test_the_version_is_written_in_one_place():
    assert "version" not in PROJECT and "version" in PROJECT["dynamic"]
    assert SETUPTOOLS["dynamic"]["version"] == {"attr": "buildlog.__version__"}
    written = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "buildlog").rglob("*.py")
        if re.search(r"^__version__\s*=", path.read_text("utf-8"), re.MULTILINE)
    ]
    assert written == ["buildlog/__init__.py"]


def test_the_license_is_an_spdx_expression_and_its_file_ships():
    assert PROJECT["license"] == "MIT"  # a string: the table form is deprecated in setuptools
    assert PROJECT["license-files"] and all((ROOT / f).is_file() for f in PROJECT["license-files"])
    assert "MIT License" in (ROOT / PROJECT["license-files"][0]).read_text("utf-8")
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]  # superseded by the expression


def test_classifiers_name_the_pythons_that_requires_python_allows():
    low = int(re.fullmatch(r">=3\.(\d+)", PROJECT["requires-python"]).group(1))
    minors = sorted(
        int(c.rsplit(".", 1)[1])
        for c in PROJECT["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert minors and minors[0] == low and minors == list(range(low, minors[-1] + 1))
    assert "Typing :: Typed" in PROJECT["classifiers"] and (ROOT / "buildlog" / "py.typed").is_file()


def test_no_invented_project_urls():
    """There is no public repository address yet: no URL rather than a made-up one."""
    for url in PROJECT.get("urls", {}).values():
        assert not re.search(r"OWNER|example|<|>", url), url
