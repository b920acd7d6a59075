"""pip installs a working package from the source tree, offline."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON


def have_pip() -> bool:
    return subprocess.run([sys.executable, "-m", "pip", "--version"],
                          capture_output=True).returncode == 0


def test_pip_install(tmp_path: Path) -> None:
    if not have_pip():
        pytest.skip(f"no pip for {sys.executable}")
    # A copy: setuptools writes its build files next to the sources.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PYTHON / name, source / name)
    shutil.copytree(PYTHON / "noclobber", source / "noclobber",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
         "--no-deps", "--no-build-isolation", "--target", str(target),
         str(source)], capture_output=True, text=True, timeout=300)
    if "No module named" in result.stderr and "setuptools" in result.stderr:
        pytest.skip(f"no setuptools for {sys.executable}")
    if "invalid command 'bdist_wheel'" in result.stderr:
        pytest.skip(f"no wheel package for {sys.executable}'s setuptools")
    assert result.returncode == 0, result.stderr
    package = target / "noclobber"
    assert (package / "py.typed").is_file()
    assert (package / "__init__.py").is_file()
    env = dict(os.environ, PYTHONPATH=str(target))
    check = subprocess.run(
        [sys.executable, "-c", "import noclobber as nc; "
         "print(nc.__file__); print(nc.probe().noreplace_name)"],
        env=env, capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    where, name = check.stdout.split()
    assert Path(where).parent == package
    assert name in {"honoured", "ignored", "partial", "rejected",
                    "replaces"}
