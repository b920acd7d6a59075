"""maps(): a process's mappings, read with ncb_maps_*."""

import ctypes
from typing import Generator

from ._lib import LIB, MappingStruct, c_int, check, sized, u64
from ._mapping import Mapping


def maps(pid: int = 0, start: int = 0) -> Generator[Mapping, None, None]:
    """Yield the mappings of process pid (0: this one) in address order,
    from the first that ends above start, as /proc/PID/maps lists them.

    The iterator is opened at the first next() and closed when the
    generator ends, is closed or is collected.  Errors are the OSError
    subclasses of ncb_maps_open(3)'s: FileNotFoundError for no such
    process, ProcessLookupError (ESRCH) for one without an address
    space (a zombie, a kernel thread), PermissionError, and OSError
    EINVAL for a negative pid.
    """
    handle = ctypes.c_void_p()
    check(LIB.ncb_maps_open(ctypes.byref(handle), c_int(pid, "pid")))
    try:
        if start:
            check(LIB.ncb_maps_seek(handle, u64(start, "start")))
        struct = sized(MappingStruct)
        while check(LIB.ncb_maps_next(handle, ctypes.byref(struct))):
            yield Mapping.from_struct(struct)
    finally:
        LIB.ncb_maps_close(handle)
