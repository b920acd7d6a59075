"""PROT_*, MAP_* and MREMAP_* for the running architecture: Python's mmap
module where it has the name, else Linux's uapi values (asm-generic, with
each architecture's own where it differs)."""

import mmap
import platform
from typing import Dict

_GENERIC: Dict[str, int] = {
    "PROT_NONE": 0x0,
    "PROT_READ": 0x1,
    "PROT_WRITE": 0x2,
    "PROT_EXEC": 0x4,
    "MAP_SHARED": 0x01,
    "MAP_PRIVATE": 0x02,
    "MAP_SHARED_VALIDATE": 0x03,
    "MAP_TYPE": 0x0f,
    "MAP_FIXED": 0x10,
    "MAP_ANONYMOUS": 0x20,
    "MAP_GROWSDOWN": 0x0100,
    "MAP_DENYWRITE": 0x0800,
    "MAP_EXECUTABLE": 0x1000,
    "MAP_LOCKED": 0x2000,
    "MAP_NORESERVE": 0x4000,
    "MAP_POPULATE": 0x8000,
    "MAP_NONBLOCK": 0x10000,
    "MAP_STACK": 0x20000,
    "MAP_HUGETLB": 0x40000,
    "MAP_FIXED_NOREPLACE": 0x100000,
    "MREMAP_MAYMOVE": 1,
    "MREMAP_FIXED": 2,
    "MREMAP_DONTUNMAP": 4,
}

# arch/*/include/uapi/asm/mman.h, by the prefix of uname's machine.
_ARCH: Dict[str, Dict[str, int]] = {
    "alpha": {
        "MAP_FIXED": 0x100, "MAP_ANONYMOUS": 0x10, "MAP_GROWSDOWN": 0x1000,
        "MAP_DENYWRITE": 0x2000, "MAP_EXECUTABLE": 0x4000,
        "MAP_LOCKED": 0x8000, "MAP_NORESERVE": 0x10000,
        "MAP_POPULATE": 0x20000, "MAP_NONBLOCK": 0x40000,
        "MAP_STACK": 0x80000, "MAP_HUGETLB": 0x100000,
        "MAP_FIXED_NOREPLACE": 0x200000,
    },
    "mips": {
        "MAP_NORESERVE": 0x0400, "MAP_ANONYMOUS": 0x0800,
        "MAP_GROWSDOWN": 0x1000, "MAP_DENYWRITE": 0x2000,
        "MAP_EXECUTABLE": 0x4000, "MAP_LOCKED": 0x8000,
        "MAP_POPULATE": 0x10000, "MAP_NONBLOCK": 0x20000,
        "MAP_STACK": 0x40000, "MAP_HUGETLB": 0x80000,
    },
    "parisc": {
        "MAP_TYPE": 0x2b, "MAP_FIXED": 0x04, "MAP_ANONYMOUS": 0x10,
        "MAP_GROWSDOWN": 0x8000, "MAP_POPULATE": 0x10000,
        "MAP_NONBLOCK": 0x20000, "MAP_STACK": 0x40000,
        "MAP_HUGETLB": 0x80000,
    },
    "ppc": {"MAP_NORESERVE": 0x40, "MAP_LOCKED": 0x80},
    "sparc": {
        "MAP_NORESERVE": 0x40, "MAP_LOCKED": 0x100, "MAP_GROWSDOWN": 0x0200,
    },
}
_ARCH["xtensa"] = _ARCH["mips"]
_ARCH["powerpc"] = _ARCH["ppc"]


def _arch_values(machine: str) -> Dict[str, int]:
    for prefix, values in _ARCH.items():
        if machine.startswith(prefix):
            return values
    return {}


def uapi(machine: str) -> Dict[str, int]:
    """Every constant as Linux defines it for machine (as uname names
    it)."""
    table = dict(_GENERIC)
    table.update(_arch_values(machine))
    return table


def values(machine: str) -> Dict[str, int]:
    """Every constant for machine: Python's mmap module's own value where
    it has the name, else Linux's."""
    return {name: getattr(mmap, name, value)
            for name, value in uapi(machine).items()}


VALUES = values(platform.machine())
