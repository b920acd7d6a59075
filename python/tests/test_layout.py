"""The ctypes mirrors against the C header (a compiler's offsetof, the
checked-in ABI dump, the sizes the library itself reports), and the
constants against the C headers of this and other architectures."""

import ctypes
import errno
import mmap
import platform
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Type

import pytest

import noclobber as nc
from noclobber import _consts, _lib
from conftest import ROOT

STRUCTS: Dict[str, Type[ctypes.Structure]] = {
    "ncb_mapping": _lib.MappingStruct,
    "ncb_probe": _lib.ProbeStruct,
    "ncb_as_opts": _lib.AsOptsStruct,
}


def static_asserts() -> List[str]:
    """_Static_assert lines for every size and offset the mirrors hold."""
    lines = []
    for name, struct in STRUCTS.items():
        lines.append(f"_Static_assert(sizeof(struct {name}) == "
                     f"{ctypes.sizeof(struct)}, \"sizeof {name}\");")
        for field, ctype, *_ in struct._fields_:
            offset = getattr(struct, field).offset
            lines.append(
                f"_Static_assert(offsetof(struct {name}, {field}) == "
                f"{offset} && sizeof(((struct {name} *)0)->{field}) == "
                f"{ctypes.sizeof(ctype)}, \"{name}.{field}\");")
    return lines


def test_mirrors_match_the_header(tmp_path: Path, cc: str,
                                  header: Path) -> None:
    source = tmp_path / "layout.c"
    source.write_text("#include <stddef.h>\n#include <noclobber.h>\n" +
                      "\n".join(static_asserts()) + "\n")
    result = subprocess.run([cc, "-fsyntax-only", "-I", str(header),
                             str(source)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_a_wrong_mirror_is_caught(tmp_path: Path, cc: str,
                                  header: Path) -> None:
    """The check above can fail: a field one byte off does."""
    lines = static_asserts()
    wrong = [re.sub(r"start\) == (\d+)",
                    lambda m: f"start) == {int(m[1]) + 1}", line)
             for line in lines]
    assert wrong != lines
    source = tmp_path / "wrong.c"
    source.write_text("#include <stddef.h>\n#include <noclobber.h>\n" +
                      "\n".join(wrong) + "\n")
    result = subprocess.run([cc, "-fsyntax-only", "-I", str(header),
                             str(source)], capture_output=True, text=True)
    assert result.returncode != 0
    assert "ncb_mapping.start" in result.stderr


def test_mirrors_match_the_abi_dump() -> None:
    dump = ROOT / "abi" / "libnoclobber.abi"
    if not dump.is_file():
        pytest.skip("not run from the source tree: no abi/libnoclobber.abi")
    bits = ctypes.sizeof(ctypes.c_void_p) * 8
    root = ET.parse(dump).getroot()
    if root.find(f".//abi-instr[@address-size='{bits}']") is None:
        pytest.skip(f"the ABI dump is not of a {bits}-bit machine")
    for name, struct in STRUCTS.items():
        decl = root.find(f".//class-decl[@name='{name}'][@size-in-bits]")
        assert decl is not None, name
        members = [(m.find("var-decl").get("name"),  # type: ignore
                    int(m.get("layout-offset-in-bits", "")))
                   for m in decl.findall("data-member")]
        mirror = [(f, getattr(struct, f).offset * 8)
                  for f, *_ in struct._fields_]
        # A sized struct grows at its end from one release to the next.
        assert members == mirror[:len(members)], name
        if len(members) == len(mirror):
            assert int(decl.get("size-in-bits", "")) == \
                ctypes.sizeof(struct) * 8, name


def library_size(struct: Type[ctypes.Structure], call) -> int:  # type: ignore
    """The size the library says it wrote, given room for more."""
    room = ctypes.sizeof(struct) + 256
    buf = ctypes.create_string_buffer(room)
    ctypes.c_size_t.from_buffer(buf).value = room
    assert _lib.check(call(ctypes.cast(buf, ctypes.POINTER(struct)))) >= 0
    return ctypes.c_size_t.from_buffer(buf).value


def test_library_reports_the_probe_size() -> None:
    assert library_size(_lib.ProbeStruct, _lib.LIB.ncb_kernel_probe) == \
        ctypes.sizeof(_lib.ProbeStruct)


def test_library_reports_the_mapping_size() -> None:
    with nc.AddressSpace() as space:
        space.mmap(0, 4096, nc.PROT_READ, nc.MAP_PRIVATE | nc.MAP_ANONYMOUS)
        handle = space._handle()
        size = library_size(
            _lib.MappingStruct,
            lambda m: _lib.LIB.ncb_as_find(handle, 0, m))
    assert size == ctypes.sizeof(_lib.MappingStruct)


def new_space(opts: ctypes.Array) -> int:  # type: ignore[type-arg]
    handle = ctypes.c_void_p()
    ret = _lib.LIB.ncb_as_new(ctypes.byref(handle),
                              ctypes.cast(opts, ctypes.POINTER(
                                  _lib.AsOptsStruct)))
    _lib.LIB.ncb_as_free(handle)
    return int(ret)


def test_library_takes_the_opts_size() -> None:
    """The opts size is the library's struct or any down to 1.0's (up to
    brk): one byte less is refused, a larger struct is taken only with
    zeros past it."""
    size = ctypes.sizeof(_lib.AsOptsStruct)
    floor = _lib.AsOptsStruct.release.offset
    buf = ctypes.create_string_buffer(size + 8)
    field = ctypes.c_size_t.from_buffer(buf)
    for given, want in ((size, 0), (floor, 0), (floor - 1, -errno.EINVAL),
                        (size + 8, 0)):
        field.value = given
        assert new_space(buf) == want, given
    buf[size] = b"\x01"
    assert new_space(buf) == -errno.EINVAL


def c_macros(cc: str, extra: List[str]) -> Dict[str, int]:
    """The PROT_, MAP_ and MREMAP_ values a compiler's headers define."""
    source = "#define _GNU_SOURCE\n#include <sys/mman.h>\n" \
        "#include <linux/mman.h>\n"
    result = subprocess.run([cc, *extra, "-E", "-dM", "-x", "c", "-"],
                            input=source, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"{cc} cannot preprocess <sys/mman.h>: {result.stderr}")
    values = {}
    for name, value in re.findall(r"^#define (\w+) (0x[0-9a-fA-F]+|\d+)\s*$",
                                  result.stdout, re.M):
        values[name] = int(value, 0)
    return values


def test_constants_match_this_machines_headers(cc: str) -> None:
    macros = c_macros(cc, [])
    checked = [n for n in _consts.VALUES if n in macros]
    assert len(checked) >= 20, checked
    for name in checked:
        assert getattr(nc, name) == macros[name], name


def test_constants_are_exported() -> None:
    for name, value in _consts.VALUES.items():
        assert getattr(nc, name) == value
        assert name in nc.__all__


# Debian's cross compilers, and uname's name for their machines.
CROSS = {
    "i686-linux-gnu-gcc": "i686",
    "aarch64-linux-gnu-gcc": "aarch64",
    "riscv64-linux-gnu-gcc": "riscv64",
    "powerpc64le-linux-gnu-gcc": "ppc64le",
    "s390x-linux-gnu-gcc": "s390x",
    "arm-linux-gnueabihf-gcc": "armv7l",
}


@pytest.mark.parametrize("compiler", sorted(CROSS))
def test_uapi_values_match_a_cross_compilers(compiler: str) -> None:
    path = shutil.which(compiler)
    if not path:
        pytest.skip(f"{compiler} is not installed")
    macros = c_macros(path, [])
    table = _consts.uapi(CROSS[compiler])
    checked = [n for n in table if n in macros]
    assert len(checked) >= 20, checked
    assert {n: table[n] for n in checked} == {n: macros[n] for n in checked}


def test_uapi_values_match_pythons_mmap_module() -> None:
    table = _consts.uapi(platform.machine())
    shared = [n for n in table if hasattr(mmap, n)]
    assert "MAP_ANONYMOUS" in shared and "PROT_READ" in shared
    for name in shared:
        assert table[name] == getattr(mmap, name), name


@pytest.mark.parametrize("machine, noreplace, fixed", [
    ("alpha", 0x200000, 0x100),
    ("x86_64", 0x100000, 0x10),
    ("parisc64", 0x100000, 0x04),
    ("mips64", 0x100000, 0x10),
    ("ppc64le", 0x100000, 0x10),
    ("sparc64", 0x100000, 0x10),
])
def test_map_fixed_noreplace_by_machine(machine: str, noreplace: int,
                                        fixed: int) -> None:
    """0x100000 but on alpha (include/noclobber.h)."""
    table = _consts.uapi(machine)
    assert table["MAP_FIXED_NOREPLACE"] == noreplace
    assert table["MAP_FIXED"] == fixed
