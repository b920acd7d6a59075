"""mmap_at(): memory mapped exactly at an address with ncb_mmap, or not at
all."""

from __future__ import annotations

import ctypes
import gc
import os
import stat
import sys
import threading
from types import TracebackType
from typing import Optional, Type

from ._consts import VALUES
from ._lib import LIB, LIBC, MAP_FAILED, c_int, fits, os_error


_READ = VALUES["PROT_READ"]
_WRITE = VALUES["PROT_WRITE"]
_ANONYMOUS = VALUES["MAP_ANONYMOUS"]


def _shared(view: memoryview) -> int:
    """The references to the buffer view shares with its slices and with
    every memoryview made from it (CPython's managed buffer, one
    reference per memoryview)."""
    managed = gc.get_referents(view)
    return sys.getrefcount(managed[0]) if managed else 0


class Region:
    """Memory this process mapped at [address, address + length), unmapped
    by close(), by the end of a with block, or when collected.  Only
    mmap_at makes Regions (Region() raises TypeError).

    view is a memoryview of its bytes: writable where the protection
    has PROT_WRITE, read-only where it has PROT_READ alone, and none
    (ValueError) without PROT_READ, as touching it would kill the
    process.  close() releases the view and unmaps the memory; it
    refuses, with BufferError and changing nothing, while anything
    else still holds the memory through the view (a slice,
    memoryview(view), view.obj, a buffer exported from it), so that
    nothing can touch it once unmapped; a Region collected meanwhile
    stays mapped.  (The check counts references, as CPython keeps
    them.)
    """

    _mapped = False

    def __new__(cls, *args: object, **kwargs: object) -> "Region":
        """Refused: a Region would unmap whatever address it was given;
        mmap_at makes them."""
        raise TypeError("Regions are made by mmap_at, not Region()")

    @classmethod
    def _own(cls, address: int, length: int, prot: int) -> "Region":
        """A Region owning the mapping at [address, address + length) of
        protection prot, which mmap_at has just made."""
        region: Region = super().__new__(cls)
        region._setup(address, length, prot)
        return region

    def _setup(self, address: int, length: int, prot: int) -> None:
        """The fields; the view if the memory is readable."""
        self._address = address
        self._length = length
        self._prot = prot
        self._lock = threading.Lock()
        self._mapped = True
        self._bytes: Optional[ctypes.Array[ctypes.c_ubyte]] = None
        self._view: Optional[memoryview] = None
        if prot & _READ:
            self._bytes = (ctypes.c_ubyte * length).from_address(address)
            self._unshared = sys.getrefcount(self._bytes)
            self._view = self._new_view()

    def _new_view(self) -> memoryview:
        """The view, and the reference counts of its memory while the
        Region alone holds it."""
        assert self._bytes is not None
        view = memoryview(self._bytes).cast("B")
        if not self._prot & _WRITE:
            view = view.toreadonly()
        self._viewed = sys.getrefcount(self._bytes)
        self._alone = _shared(view)
        return view

    @property
    def address(self) -> int:
        """Where the memory starts."""
        return self._address

    @property
    def prot(self) -> int:
        """The protection it was mapped with."""
        return self._prot

    def __len__(self) -> int:
        """Its length in bytes."""
        return self._length

    @property
    def closed(self) -> bool:
        """Whether the memory has been unmapped."""
        return not self._mapped

    def _checked_view(self) -> memoryview:
        """The view; the caller holds the lock."""
        if not self._mapped:
            raise ValueError("operation on a closed Region")
        if self._view is None:
            raise ValueError("Region is not readable: no PROT_READ")
        return self._view

    @property
    def view(self) -> memoryview:
        """A memoryview of the bytes (format "B"), released by close()."""
        with self._lock:
            return self._checked_view()

    def __bytes__(self) -> bytes:
        """A copy of the bytes."""
        with self._lock:
            return bytes(self._checked_view())

    def __repr__(self) -> str:
        """The range, and whether it is still mapped."""
        state = "open" if self._mapped else "closed"
        return (f"<Region {state} {self._address:#x}-"
                f"{self._address + self._length:#x}>")

    def _check_unheld(self, view: memoryview) -> None:
        """BufferError if anything but the Region holds the memory
        through view; nothing is released."""
        if (sys.getrefcount(self._bytes) > self._viewed or
                _shared(view) > self._alone):
            raise BufferError("Region in use: a view or a slice of it is "
                              "still held")

    def _release_view(self) -> None:
        """Release the view, or raise BufferError (see the class) with
        the view as it was."""
        view = self._view
        if view is None:
            return
        self._check_unheld(view)
        try:
            view.release()
        except BufferError:
            raise BufferError("Region in use: a buffer exported from its "
                              "view is still held") from None
        if sys.getrefcount(self._bytes) > self._unshared:
            # Sliced by another thread since the check: keep it mapped.
            self._view = self._new_view()
            raise BufferError("Region in use: a view or a slice of it is "
                              "still held")
        self._view = None
        self._bytes = None

    def close(self) -> None:
        """Unmap the memory (BufferError while it is still in use, see
        the class); calling it again does nothing."""
        with self._lock:
            if not self._mapped:
                return
            self._release_view()
            self._mapped = False
        if LIBC.munmap(self._address, self._length) != 0:
            raise os_error(ctypes.get_errno())

    def __enter__(self) -> Region:
        """The region itself, unmapped at the end of the with block."""
        if not self._mapped:
            raise ValueError("operation on a closed Region")
        return self

    def __exit__(self, kind: Optional[Type[BaseException]],
                 value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        """Unmap the memory (see close)."""
        self.close()

    def __del__(self) -> None:
        """Unmap the memory unless it is still in use."""
        try:
            self.close()
        except BufferError:
            pass


def _check_file_size(fileno: int, length: int, offset: int) -> None:
    """ValueError, as the mmap module says it, when [offset, offset +
    length) goes past the end of the regular file fileno: touching a
    page past the end would kill the process with SIGBUS."""
    try:
        st = os.fstat(fileno)
    except OSError:
        return  # ncb_mmap says what is wrong with the descriptor
    if not stat.S_ISREG(st.st_mode):
        return
    if offset > st.st_size or length > st.st_size - offset:
        raise ValueError("mmap length is greater than file size")


def mmap_at(addr: int, length: int,
            prot: int = VALUES["PROT_READ"] | VALUES["PROT_WRITE"],
            flags: int = VALUES["MAP_PRIVATE"] | VALUES["MAP_ANONYMOUS"],
            fileno: int = -1, offset: int = 0) -> Region:
    """Map length bytes exactly at addr with ncb_mmap(3), never
    replacing anything, and return the Region.

    The arguments are mmap(2)'s (MAP_FIXED and MAP_FIXED_NOREPLACE in
    flags are accepted and ignored).  Raises FileExistsError when some
    page of the range is mapped, else the OSError of ncb_mmap's errno.

    A regular file's range must lie within the file, or ValueError, as
    the mmap module says: a page past its end cannot be touched (SIGBUS
    kills the process).  Truncating the file while it is mapped has the
    same hazard, as with the mmap module's mappings.
    """
    args = (fits(ctypes.c_void_p, addr, "addr"),
            fits(ctypes.c_size_t, length, "length"),
            c_int(prot, "prot"), c_int(flags, "flags"),
            c_int(fileno, "fileno"), fits(ctypes.c_long, offset, "offset"))
    if not flags & _ANONYMOUS:
        _check_file_size(fileno, length, offset)
    address = LIB.ncb_mmap(*args)
    if address == MAP_FAILED:
        raise os_error(ctypes.get_errno())
    return Region._own(address or 0, length, prot)
