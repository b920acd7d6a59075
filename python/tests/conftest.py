"""Shared fixtures: the source tree, a C compiler, a small model."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

import noclobber as nc

HERE = Path(__file__).resolve().parent
PYTHON = HERE.parent
ROOT = PYTHON.parent

# A 47-bit x86-64-like space without ASLR, whatever machine runs this.
SMALL = dict(page_size=4096, mmap_min_addr=0x10000,
             task_size=0x7ffffffff000, thp=-1)
PAGE = 4096
RW = nc.PROT_READ | nc.PROT_WRITE
ANON = nc.MAP_PRIVATE | nc.MAP_ANONYMOUS


@pytest.fixture
def space() -> Iterator[nc.AddressSpace]:
    """An empty model with SMALL's options."""
    with nc.AddressSpace(**SMALL) as s:
        yield s


@pytest.fixture
def cc() -> str:
    """The C compiler, or skip."""
    path = shutil.which(os.environ.get("CC", "cc"))
    if not path:
        pytest.skip("no C compiler")
    return path


@pytest.fixture
def header() -> Path:
    """include/ of the source tree, or skip."""
    include = ROOT / "include"
    if not (include / "noclobber.h").is_file():
        pytest.skip("not run from the source tree: no include/noclobber.h")
    return include


def python_env(**extra: str) -> Dict[str, str]:
    """The environment for a child Python that imports this binding."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PYTHON)
    env.update(extra)
    return env


def run_python(args: List[str],
               **env: str) -> "subprocess.CompletedProcess[str]":
    """Run this interpreter with args; its output as text."""
    return subprocess.run([sys.executable] + args, env=python_env(**env),
                          capture_output=True, text=True, timeout=120)
