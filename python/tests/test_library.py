"""Loading the library: NOCLOBBER_LIB, the library path, and what is not
libnoclobber 1.x; the version."""

import os
import re
import subprocess
from pathlib import Path

import pytest

import noclobber as nc
from noclobber import _lib
from conftest import ROOT, run_python

LIB_PATH = os.environ.get("NOCLOBBER_LIB", "")


def import_with(**env: str) -> "subprocess.CompletedProcess[str]":
    code = "import noclobber as nc; print(nc._lib.LIB._name)"
    return run_python(["-c", code], **env)


def define(text: str, name: str) -> int:
    found = re.search(rf"#define {name} (\d+)", text)
    assert found, name
    return int(found[1])


def test_version_is_the_headers(header: Path) -> None:
    text = (header / "noclobber.h").read_text()
    want = tuple(define(text, f"NCB_VERSION_{part}")
                 for part in ("MAJOR", "MINOR", "PATCH"))
    assert nc.version_info() == want
    assert nc.version() == want[0] << 16 | want[1] << 8 | want[2]


def test_package_version_is_the_librarys() -> None:
    makefile = (ROOT / "Makefile")
    if not makefile.is_file():
        pytest.skip("not run from the source tree")
    version = re.search(r"^VERSION := (\S+)$", makefile.read_text(), re.M)
    assert version and nc.__version__ == version[1]


def test_noclobber_lib_is_used() -> None:
    if not LIB_PATH:
        pytest.skip("NOCLOBBER_LIB is not set")
    result = import_with(NOCLOBBER_LIB=LIB_PATH)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == LIB_PATH


def test_missing_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "libnoclobber.so.0")
    result = import_with(NOCLOBBER_LIB=missing)
    assert result.returncode != 0
    assert f"ImportError: noclobber: NOCLOBBER_LIB={missing}: no such file" \
        in result.stderr


def test_not_a_shared_object(tmp_path: Path) -> None:
    text = tmp_path / "lib.so"
    text.write_text("not an ELF file\n")
    result = import_with(NOCLOBBER_LIB=str(text))
    assert result.returncode != 0
    assert f"ImportError: noclobber: NOCLOBBER_LIB={text}: " in result.stderr


def test_another_library() -> None:
    libc = next(m.path for m in nc.maps() if "/libc.so" in m.path or
                "/libc-" in m.path)
    result = import_with(NOCLOBBER_LIB=libc)
    assert result.returncode != 0
    assert f"ImportError: noclobber: {libc} has no ncb_version: not " \
        "libnoclobber" in result.stderr


def impostor(tmp_path: Path, cc: str, version: int) -> Path:
    """A libnoclobber.so.0 that has ncb_version (saying version) alone."""
    source = tmp_path / "impostor.c"
    source.write_text("unsigned int ncb_version(void) { return %#x; }\n"
                      % version)
    lib = tmp_path / "libnoclobber.so.0"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(source)],
                   check=True)
    return lib


def test_another_major_version(tmp_path: Path, cc: str) -> None:
    lib = impostor(tmp_path, cc, 0x020000)
    result = import_with(NOCLOBBER_LIB=str(lib))
    assert result.returncode != 0
    assert f"ImportError: noclobber: {lib} is version 2.x; this binding " \
        "needs 1.x" in result.stderr


def test_a_missing_function(tmp_path: Path, cc: str) -> None:
    lib = impostor(tmp_path, cc, 0x010000)
    result = import_with(NOCLOBBER_LIB=str(lib))
    assert result.returncode != 0
    assert f"{lib} has no ncb_kernel_probe: not libnoclobber" in result.stderr


def test_library_path() -> None:
    """Without NOCLOBBER_LIB: the soname, from the library path."""
    if not LIB_PATH:
        pytest.skip("NOCLOBBER_LIB is not set")
    result = import_with(NOCLOBBER_LIB="",
                         LD_LIBRARY_PATH=os.path.dirname(LIB_PATH))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == _lib.SONAME


def test_not_on_the_library_path() -> None:
    result = import_with(NOCLOBBER_LIB="", LD_LIBRARY_PATH="")
    if result.returncode == 0:
        pytest.skip("libnoclobber.so.0 is installed on this system")
    assert "ImportError: noclobber: libnoclobber.so.0 is not on the library " \
        "path" in result.stderr
    assert "set NOCLOBBER_LIB" in result.stderr


def test_errors_are_oserror_subclasses() -> None:
    import errno
    assert isinstance(_lib.os_error(errno.EEXIST), FileExistsError)
    assert isinstance(_lib.os_error(errno.ESRCH), ProcessLookupError)
    err = _lib.os_error(errno.EINVAL)
    assert type(err) is OSError and err.errno == errno.EINVAL
    assert err.strerror == os.strerror(errno.EINVAL)
    assert _lib.check(3) == 3
    with pytest.raises(FileExistsError):
        _lib.check(-errno.EEXIST)


@pytest.mark.parametrize("value", [-1, 1 << 64])
def test_u64_range(value: int) -> None:
    with pytest.raises(OverflowError):
        _lib.u64(value)
    assert _lib.u64((1 << 64) - 1) == (1 << 64) - 1
