"""The built wheel carries the grammars, rules and tables the package reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.conftest import ROOT


def _build_wheel(tmp_path):
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
    (wheel,) = tmp_path.glob("buildlog_gpu-*.whl")  # the distribution's name; the package is `buildlog`
    return wheel


def test_installed_wheel_explains_a_log(tmp_path):
    """Installed from the wheel (not this checkout), the command line runs end to end."""
    import os
    import site

    wheel = _build_wheel(tmp_path / "dist")
    target = tmp_path / "installed"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    log = tmp_path / "b.log"
    log.write_text("$ pip install flash-attn\nnvcc error   : 'cicc' died due to signal 9 (Kill signal)\n")
    code = (
        "import sys, buildlog; assert buildlog.__file__.startswith(sys.argv[1]), buildlog.__file__\n"
        "from buildlog.cli import main; sys.argv = ['buildlog', 'explain', sys.argv[2], '-f', 'json']; main()"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), *site.getsitepackages()])}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(target), str(log)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"compiler_oom"' in proc.stdout


def test_wheel_contains_package_data(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for grammar in ("command", "diagnostic", "python", "ninja", "pip", "banner"):
        assert f"buildlog/knowledge/grammars/{grammar}.lark" in names
    for data in ("causes.toml", "facts.toml", "stages.toml", "resolution.toml"):
        assert f"buildlog/knowledge/{data}" in names
    assert "buildlog/knowledge/corpus_index.json" in names and "buildlog/learn/features.py" in names
    assert "buildlog/py.typed" in names  # the API is typed for its users' checkers
    rules = [n for n in names if n.startswith("buildlog/knowledge/rules/") and n.endswith(".toml")]
    assert len(rules) >= 4


def test_every_package_is_listed_for_the_build():
    """A sub-package missing from [tool.setuptools] packages works in a checkout but not once installed."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "buildlog").rglob("__init__.py")}
    assert found <= listed, f"not listed in pyproject.toml: {sorted(found - listed)}"
