"""The Python API, used as its documentation shows, and the packaging metadata a user sees."""

from __future__ import annotations

import gzip
import io
import sys
import zipfile

import pytest

import buildlog
from buildlog.errors import BuildlogError
from tests.conftest import CORPUS, ROOT

MISMATCH = CORPUS / "apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130.log"
NO_CUDA = CORPUS / "cmake-no-cuda-compiler-found.log"


def test_explain_takes_a_path_bytes_or_a_stream_and_says_the_same():
    by_path = buildlog.explain(MISMATCH)
    by_str = buildlog.explain(str(MISMATCH))
    by_bytes = buildlog.explain(MISMATCH.read_bytes())
    with open(MISMATCH, "rb") as stream:
        by_stream = buildlog.explain(stream)
    by_gzip = buildlog.explain(gzip.compress(MISMATCH.read_bytes()))
    assert isinstance(by_path, buildlog.Report)
    for report in (by_path, by_str, by_bytes, by_stream, by_gzip):
        assert report.status == "failure" and report.root_causes[0].id == "cuda_version_mismatch"
        assert report.root_causes[0].evidence == by_path.root_causes[0].evidence
    assert by_bytes.source == "<bytes>" and by_stream.source == str(MISMATCH)


def test_explain_all_reads_every_log_of_an_archive():
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        archive.write(MISMATCH, "job/1_build.txt")
        archive.write(NO_CUDA, "job/2_cmake.txt")
    reports = buildlog.explain_all(packed.getvalue())
    assert [r.root_causes[0].id for r in reports] == ["cuda_version_mismatch", "cuda_home_missing"]
    with pytest.raises(BuildlogError, match="explain_all"):
        buildlog.explain(packed.getvalue())


def test_the_api_is_what_the_cli_prints():
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "buildlog", "explain", str(MISMATCH), "-f", "json", "--no-seen-before"],
                          capture_output=True, text=True)  # fmt: skip
    assert buildlog.Report.model_validate_json(proc.stdout) == buildlog.explain(MISMATCH)


def test_a_bad_input_is_a_buildlog_error_not_a_traceback(tmp_path):
    with pytest.raises(BuildlogError, match="no such file"):
        buildlog.explain(tmp_path / "missing.log")


def test_one_version_and_the_metadata_a_user_expects():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] != "buildlog"  # taken on the public index by an unrelated tool
    assert "version" not in project and project["dynamic"] == ["version"]
    assert "__version__" in (ROOT / "buildlog" / "__init__.py").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    license_said = project.get("license") == "MIT" or any(c.startswith("License :: ") for c in project["classifiers"])
    assert license_said and "Typing :: Typed" in project["classifiers"]  # an SPDX expression replaces the classifier
    assert (ROOT / "buildlog" / "py.typed").exists()
    readme = (ROOT / "README.md").read_text()
    for way in ("pip install", "pipx install", "uv tool install"):
        assert way in readme
