"""noclobber: fixed-address memory mapping that never replaces what is
mapped, and a model of Linux's address-space rules, over libnoclobber.

The library is libnoclobber.so.0 from the library path, or the file the
environment variable NOCLOBBER_LIB names; importing fails with ImportError
if it cannot be loaded or is not a 1.x library.

- AddressSpace: Linux's mmap, munmap, mprotect, mremap and brk on a
  model (ncb_as_new(3));
- maps(pid): a process's mappings (ncb_maps_open(3));
- probe(): what the kernel does with MAP_FIXED_NOREPLACE
  (ncb_kernel_probe(3));
- mmap_at(addr, length): memory mapped exactly at addr or FileExistsError
  (ncb_mmap(3));
- PROT_*, MAP_*, MREMAP_*: the running architecture's values.
"""

from typing import Tuple

from ._consts import VALUES
from ._lib import LIB
from ._mapping import Mapping
from ._maps import maps
from ._memory import Region, mmap_at
from ._probe import Noreplace, Probe, noreplace_name, probe
from ._space import AddressSpace, File, Place

__version__ = "1.2.0"

PROT_NONE: int = VALUES["PROT_NONE"]
PROT_READ: int = VALUES["PROT_READ"]
PROT_WRITE: int = VALUES["PROT_WRITE"]
PROT_EXEC: int = VALUES["PROT_EXEC"]
MAP_SHARED: int = VALUES["MAP_SHARED"]
MAP_PRIVATE: int = VALUES["MAP_PRIVATE"]
MAP_SHARED_VALIDATE: int = VALUES["MAP_SHARED_VALIDATE"]
MAP_TYPE: int = VALUES["MAP_TYPE"]
MAP_FIXED: int = VALUES["MAP_FIXED"]
MAP_ANONYMOUS: int = VALUES["MAP_ANONYMOUS"]
MAP_GROWSDOWN: int = VALUES["MAP_GROWSDOWN"]
MAP_DENYWRITE: int = VALUES["MAP_DENYWRITE"]
MAP_EXECUTABLE: int = VALUES["MAP_EXECUTABLE"]
MAP_LOCKED: int = VALUES["MAP_LOCKED"]
MAP_NORESERVE: int = VALUES["MAP_NORESERVE"]
MAP_POPULATE: int = VALUES["MAP_POPULATE"]
MAP_NONBLOCK: int = VALUES["MAP_NONBLOCK"]
MAP_STACK: int = VALUES["MAP_STACK"]
MAP_HUGETLB: int = VALUES["MAP_HUGETLB"]
MAP_FIXED_NOREPLACE: int = VALUES["MAP_FIXED_NOREPLACE"]
MREMAP_MAYMOVE: int = VALUES["MREMAP_MAYMOVE"]
MREMAP_FIXED: int = VALUES["MREMAP_FIXED"]
MREMAP_DONTUNMAP: int = VALUES["MREMAP_DONTUNMAP"]


def version() -> int:
    """The version of the library loaded, as ncb_version(3) gives it:
    0x010000 is 1.0.0."""
    return int(LIB.ncb_version())


def version_info() -> Tuple[int, int, int]:
    """The version of the library loaded: (major, minor, patch)."""
    number = version()
    return (number >> 16, number >> 8 & 0xff, number & 0xff)


__all__ = [
    "AddressSpace",
    "Mapping",
    "Noreplace",
    "Place",
    "Probe",
    "Region",
    "File",
    "maps",
    "mmap_at",
    "noreplace_name",
    "probe",
    "version",
    "version_info",
    "PROT_NONE",
    "PROT_READ",
    "PROT_WRITE",
    "PROT_EXEC",
    "MAP_SHARED",
    "MAP_PRIVATE",
    "MAP_SHARED_VALIDATE",
    "MAP_TYPE",
    "MAP_FIXED",
    "MAP_ANONYMOUS",
    "MAP_GROWSDOWN",
    "MAP_DENYWRITE",
    "MAP_EXECUTABLE",
    "MAP_LOCKED",
    "MAP_NORESERVE",
    "MAP_POPULATE",
    "MAP_NONBLOCK",
    "MAP_STACK",
    "MAP_HUGETLB",
    "MAP_FIXED_NOREPLACE",
    "MREMAP_MAYMOVE",
    "MREMAP_FIXED",
    "MREMAP_DONTUNMAP",
]
