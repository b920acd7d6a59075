"""AddressSpace: Linux's mmap rules on an address space held in memory
(ncb_as_*)."""

import ctypes
import enum
import os
import threading
from types import TracebackType
from typing import Any, Dict, Iterator, Optional, Type, Union

from ._lib import (LIB, AsOptsStruct, MappingStruct, c_int, check, fits,
                   sized, u64)
from ._mapping import Mapping

#: A path, as the os module takes it.
PathName = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: A file for AddressSpace.mmap: None (anonymous), a number from
#: AddressSpace.file, or a path (registered with no device or inode).
File = Union[None, int, PathName]

_OPTIONS: Dict[str, object] = {
    name: ctype for name, ctype in AsOptsStruct._fields_ if name != "size"
}


class Place(enum.IntEnum):
    """Where find_free looks (enum ncb_place)."""

    ANY = 0  #: where the kernel would put it
    LOWEST = 1  #: the lowest fitting address
    HIGHEST = 2  #: the highest fitting address
    RANDOM = 3  #: uniform over the fitting addresses


def _options(opts: Dict[str, int]) -> AsOptsStruct:
    """struct ncb_as_opts with its size set and the options given."""
    struct = sized(AsOptsStruct)
    for name, value in opts.items():
        if name not in _OPTIONS:
            raise TypeError(f"AddressSpace() got an unknown option {name!r}"
                            f" (options: {', '.join(_OPTIONS)})")
        setattr(struct, name, fits(_OPTIONS[name], value, name))
    return struct


class AddressSpace:
    """A model of a Linux process's address space: mmap, munmap,
    mprotect, mremap and brk applied as the kernel would, without
    touching any process.

    Options (keyword arguments, 0 or absent for the default) are the
    fields of struct ncb_as_opts: page_size, mmap_min_addr, mmap_base,
    task_size, stack_guard_gap, max_map_count, thp (1 yes, -1 no, 0 as
    the release does for this process), start_brk, brk and release (the
    kernel release whose rules apply, major << 16 | minor << 8 | patch,
    0 for the running kernel's); see ncb_as_new(3).  The calls
    raise the OSError subclass of the errno the kernel would give
    (FileExistsError for EEXIST, ...).  A closed space raises ValueError.
    Calls from several threads are taken one at a time.
    """

    _as: Optional[ctypes.c_void_p] = None

    def __init__(self, **opts: int) -> None:
        """An empty space with the options given (see the class)."""
        self._lock = threading.Lock()
        struct = _options(opts)
        handle = ctypes.c_void_p()
        check(LIB.ncb_as_new(ctypes.byref(handle), ctypes.byref(struct)))
        self._as = handle

    def _handle(self) -> ctypes.c_void_p:
        """The model; the caller holds the lock."""
        if self._as is None:
            raise ValueError("operation on a closed AddressSpace")
        return self._as

    def _call(self, function: Any, *args: Any) -> int:
        """function(model, *args) under the lock, its -errno raised."""
        with self._lock:
            return check(function(self._handle(), *args))

    @property
    def closed(self) -> bool:
        """Whether close() was called."""
        return self._as is None

    def close(self) -> None:
        """Free the model; further calls raise ValueError.  Calling it
        again does nothing."""
        with self._lock:
            handle, self._as = self._as, None
        if handle is not None:
            LIB.ncb_as_free(handle)

    def __enter__(self) -> "AddressSpace":
        """The space itself, closed at the end of the with block."""
        if self._as is None:
            raise ValueError("operation on a closed AddressSpace")
        return self

    def __exit__(self, kind: Optional[Type[BaseException]],
                 value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        """Close the space."""
        self.close()

    def __del__(self) -> None:
        """Free the model if close() was not called."""
        self.close()

    def __repr__(self) -> str:
        """The number of mappings, or that it is closed."""
        if self._as is None:
            return "<AddressSpace closed>"
        return f"<AddressSpace of {len(self)} mappings>"

    def file(self, path: PathName, dev_major: int = 0, dev_minor: int = 0,
             inode: int = 0) -> int:
        """Register a file for file-backed mappings and return its number
        (never 0); the same path, device and inode give the same
        number; ValueError for a path with a null byte, as the os
        module's functions say."""
        name = os.fsencode(path)
        if b"\0" in name:
            raise ValueError("embedded null byte")
        number = ctypes.c_uint32()
        self._call(LIB.ncb_as_file, name,
                   fits(ctypes.c_uint32, dev_major, "dev_major"),
                   fits(ctypes.c_uint32, dev_minor, "dev_minor"),
                   u64(inode, "inode"), ctypes.byref(number))
        return number.value

    def _file_number(self, file: File) -> int:
        if file is None:
            return 0
        if isinstance(file, int):
            return fits(ctypes.c_uint32, file, "file")
        return self.file(file)

    def mmap(self, addr: int, length: int, prot: int, flags: int,
             file: File = None, offset: int = 0) -> int:
        """Map length bytes as mmap(2) would and return the address."""
        mapped = ctypes.c_uint64()
        self._call(LIB.ncb_as_mmap, u64(addr, "addr"), u64(length, "length"),
                   c_int(prot, "prot"), c_int(flags, "flags"),
                   self._file_number(file), u64(offset, "offset"),
                   ctypes.byref(mapped))
        return mapped.value

    def munmap(self, addr: int, length: int) -> None:
        """Unmap [addr, addr + length) as munmap(2) would."""
        self._call(LIB.ncb_as_munmap, u64(addr, "addr"),
                   u64(length, "length"))

    def mprotect(self, addr: int, length: int, prot: int) -> None:
        """Change the protection of [addr, addr + length) as mprotect(2)
        would."""
        self._call(LIB.ncb_as_mprotect, u64(addr, "addr"),
                   u64(length, "length"), c_int(prot, "prot"))

    def mremap(self, addr: int, old_length: int, new_length: int,
               flags: int = 0, new_addr: int = 0) -> int:
        """Resize or move a mapping as mremap(2) would and return where
        it ends up."""
        mapped = ctypes.c_uint64()
        self._call(LIB.ncb_as_mremap, u64(addr, "addr"),
                   u64(old_length, "old_length"),
                   u64(new_length, "new_length"), c_int(flags, "flags"),
                   u64(new_addr, "new_addr"), ctypes.byref(mapped))
        return mapped.value

    def brk(self, brk: int = 0) -> int:
        """Move the program break as brk(2) would and return the break
        it ends with: brk, or the old one when the move is refused (0
        asks without moving it).  OSError EINVAL if the model has no
        program break."""
        result = ctypes.c_uint64()
        self._call(LIB.ncb_as_brk, u64(brk, "brk"), ctypes.byref(result))
        return result.value

    def find_next(self, addr: int) -> Optional[Mapping]:
        """The first mapping that ends above addr, which need not contain
        it (ncb_as_find), or None."""
        struct = sized(MappingStruct)
        addr = u64(addr, "addr")
        with self._lock:  # the path is the model's until it changes
            found = check(LIB.ncb_as_find(self._handle(), addr,
                                          ctypes.byref(struct)))
            return Mapping.from_struct(struct) if found else None

    def find(self, addr: int) -> Optional[Mapping]:
        """The mapping that contains addr, or None."""
        mapping = self.find_next(addr)
        return mapping if mapping is not None and addr in mapping else None

    def find_free(self, lo: int, hi: int, length: int, align: int = 0,
                  place: int = Place.ANY) -> int:
        """Where length bytes aligned to align (0: a page) fit in the
        window [lo, hi) (hi 0: the top of the space), chosen as place
        says (see Place); OSError ENOMEM when nothing fits."""
        addr = ctypes.c_uint64()
        self._call(LIB.ncb_as_find_free, u64(lo, "lo"), u64(hi, "hi"),
                   u64(length, "length"), u64(align, "align"),
                   c_int(place, "place"), ctypes.byref(addr))
        return addr.value

    def __len__(self) -> int:
        """The number of mappings."""
        with self._lock:
            return int(LIB.ncb_as_count(self._handle()))

    def __iter__(self) -> Iterator[Mapping]:
        """The mappings in address order; a change to the model while
        iterating is seen from the next mapping on."""
        addr = 0
        while True:
            mapping = self.find_next(addr)
            if mapping is None:
                return
            yield mapping
            addr = mapping.end

    def load(self, maps: Union[str, bytes]) -> None:
        """Add the mappings of a /proc/PID/maps text, as ncb_as_load(3)
        reads it (OSError EIO for a line it cannot read, EINVAL for
        lines that overlap or are out of order)."""
        data = os.fsencode(maps) if isinstance(maps, str) else bytes(maps)
        self._call(LIB.ncb_as_load, data, len(data))

    def dump(self) -> str:
        """The space as /proc/PID/maps would print it."""
        with self._lock:
            length = LIB.ncb_as_dump(self._handle(), None, 0)
            buf = ctypes.create_string_buffer(length + 1)
            LIB.ncb_as_dump(self._handle(), buf, length + 1)
        return os.fsdecode(buf.raw[:length])
