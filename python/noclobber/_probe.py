"""probe(): what the running kernel does with MAP_FIXED_NOREPLACE
(ncb_kernel_probe)."""

import ctypes
import enum
from dataclasses import dataclass
from typing import Union

from ._lib import LIB, ProbeStruct, c_int, check, sized


class Noreplace(enum.IntEnum):
    """What the kernel (or emulator) does with MAP_FIXED_NOREPLACE (enum
    ncb_noreplace); str() gives the library's name, as `noclobber probe`
    prints it."""

    HONOURED = 1  #: maps exactly at the address or fails with EEXIST
    IGNORED = 2  #: a hint: Linux < 4.17, qemu-user, valgrind
    PARTIAL = 3  #: misses a mapping that starts inside (4.17, 4.18)
    REJECTED = 4  #: mmap fails when given the flag
    REPLACES = 5  #: behaves like MAP_FIXED

    def __str__(self) -> str:
        """The library's name for the value: "honoured", ..."""
        return noreplace_name(self)


def noreplace_name(value: int) -> str:
    """The library's name for an enum ncb_noreplace value ("honoured",
    ...), "unknown" for any other value."""
    name: bytes = LIB.ncb_noreplace_name(c_int(value, "value"))
    return name.decode("ascii")


def noreplace(value: int) -> Union[Noreplace, int]:
    """value as a Noreplace, or as it is if a later library knows more
    values than this binding."""
    try:
        return Noreplace(value)
    except ValueError:
        return value


@dataclass(frozen=True)
class Probe:
    """The result of ncb_kernel_probe(3)."""

    #: what MAP_FIXED_NOREPLACE does here, and so ncb_mmap's path
    noreplace: Union[Noreplace, int]
    #: whether the PROCMAP_QUERY ioctl answers (Linux 6.11)
    procmap_query: bool
    #: the page size, measured
    page_size: int
    #: vm.mmap_min_addr as read from /proc, 0 if unknown
    mmap_min_addr: int

    @property
    def noreplace_name(self) -> str:
        """The name of noreplace, as `noclobber probe --json` gives it."""
        return noreplace_name(self.noreplace)


def probe() -> Probe:
    """Run (once per process) and report the kernel probe."""
    struct = sized(ProbeStruct)
    check(LIB.ncb_kernel_probe(ctypes.byref(struct)))
    return Probe(noreplace=noreplace(struct.noreplace),
                 procmap_query=bool(struct.procmap_query),
                 page_size=struct.page_size,
                 mmap_min_addr=struct.mmap_min_addr)
