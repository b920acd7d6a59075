"""libnoclobber.so.0, loaded with ctypes: the struct mirrors, the
prototypes and the conversion of the library's -errno returns."""

import ctypes
import functools
import operator
import os
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

SONAME = "libnoclobber.so.0"
ENV = "NOCLOBBER_LIB"
MAJOR = 1

_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64
_int = ctypes.c_int


class MappingStruct(ctypes.Structure):
    """struct ncb_mapping."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("start", _u64),
        ("end", _u64),
        ("offset", _u64),
        ("inode", _u64),
        ("dev_major", _u32),
        ("dev_minor", _u32),
        ("prot", _int),
        ("shared", _int),
        ("path", ctypes.c_char_p),
    ]


class ProbeStruct(ctypes.Structure):
    """struct ncb_probe."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("noreplace", _int),
        ("procmap_query", _int),
        ("page_size", ctypes.c_ulong),
        ("mmap_min_addr", ctypes.c_ulong),
    ]


class AsOptsStruct(ctypes.Structure):
    """struct ncb_as_opts."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("page_size", _u64),
        ("mmap_min_addr", _u64),
        ("mmap_base", _u64),
        ("task_size", _u64),
        ("stack_guard_gap", _u64),
        ("max_map_count", _u32),
        ("thp", _int),
        ("start_brk", _u64),
        ("brk", _u64),
        ("release", _u32),
    ]


S = TypeVar("S", bound=ctypes.Structure)


def sized(struct_type: Type[S]) -> S:
    """A zeroed struct with its size field set, as NCB_INIT does in C."""
    struct = struct_type()
    struct.size = ctypes.sizeof(struct_type)
    return struct


_P = ctypes.POINTER
_void_p = ctypes.c_void_p
_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "ncb_version": (ctypes.c_uint, []),
    "ncb_kernel_probe": (_int, [_P(ProbeStruct)]),
    "ncb_noreplace_name": (ctypes.c_char_p, [_int]),
    "ncb_mmap": (_void_p, [_void_p, ctypes.c_size_t, _int, _int, _int,
                           ctypes.c_long]),
    "ncb_maps_open": (_int, [_P(_void_p), _int]),
    "ncb_maps_seek": (_int, [_void_p, _u64]),
    "ncb_maps_next": (_int, [_void_p, _P(MappingStruct)]),
    "ncb_maps_close": (None, [_void_p]),
    "ncb_as_new": (_int, [_P(_void_p), _P(AsOptsStruct)]),
    "ncb_as_free": (None, [_void_p]),
    "ncb_as_load": (_int, [_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    "ncb_as_file": (_int, [_void_p, ctypes.c_char_p, _u32, _u32, _u64,
                           _P(_u32)]),
    "ncb_as_mmap": (_int, [_void_p, _u64, _u64, _int, _int, _u32, _u64,
                           _P(_u64)]),
    "ncb_as_munmap": (_int, [_void_p, _u64, _u64]),
    "ncb_as_mremap": (_int, [_void_p, _u64, _u64, _u64, _int, _u64,
                             _P(_u64)]),
    "ncb_as_brk": (_int, [_void_p, _u64, _P(_u64)]),
    "ncb_as_mprotect": (_int, [_void_p, _u64, _u64, _int]),
    "ncb_as_find": (_int, [_void_p, _u64, _P(MappingStruct)]),
    "ncb_as_find_free": (_int, [_void_p, _u64, _u64, _u64, _u64, _int,
                                _P(_u64)]),
    "ncb_as_count": (ctypes.c_size_t, [_void_p]),
    "ncb_as_dump": (ctypes.c_size_t, [_void_p, ctypes.c_char_p,
                                      ctypes.c_size_t]),
}


def _open(path: Optional[str]) -> ctypes.CDLL:
    """The library at path, or libnoclobber.so.0 from the library path."""
    if path is None:
        try:
            return ctypes.CDLL(SONAME, use_errno=True)
        except OSError as err:
            raise ImportError(
                f"noclobber: {SONAME} is not on the library path ({err}); "
                f"install noclobber or set {ENV} to the library's file"
            ) from err
    if not os.path.isfile(path):
        raise ImportError(f"noclobber: {ENV}={path}: no such file")
    try:
        return ctypes.CDLL(path, use_errno=True)
    except OSError as err:
        raise ImportError(f"noclobber: {ENV}={path}: {err}") from err


def _function(lib: ctypes.CDLL, name: str) -> Any:
    try:
        return getattr(lib, name)
    except AttributeError:
        raise ImportError(
            f"noclobber: {lib._name} has no {name}: not libnoclobber"
        ) from None


def _check_version(lib: ctypes.CDLL) -> None:
    version = _function(lib, "ncb_version")
    version.restype = ctypes.c_uint
    version.argtypes = []
    major = version() >> 16
    if major != MAJOR:
        raise ImportError(
            f"noclobber: {lib._name} is version {major}.x; this binding "
            f"needs {MAJOR}.x"
        )


def load(path: Optional[str]) -> ctypes.CDLL:
    """Open the library, check its major version and declare every
    function the binding calls."""
    lib = _open(path)
    _check_version(lib)
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = _function(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


LIB = load(os.environ.get(ENV) or None)
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.munmap.restype = _int
LIBC.munmap.argtypes = [_void_p, ctypes.c_size_t]
MAP_FAILED: int = ctypes.c_void_p(-1).value or 0


def os_error(errno: int) -> OSError:
    """The OSError subclass Python has for errno (FileExistsError for
    EEXIST and so on), with the system's message."""
    return OSError(errno, os.strerror(errno))


def check(ret: int) -> int:
    """ret if it is not negative, else raise the error -ret names."""
    if ret < 0:
        raise os_error(-ret)
    return ret


@functools.lru_cache(maxsize=None)
def _bounds(ctype: Any) -> Tuple[int, int, str]:
    """The least and greatest value of a C integer type, and its name."""
    bits = ctypes.sizeof(ctype) * 8
    if ctype(-1).value == -1:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1, f"int{bits}_t"
    return 0, (1 << bits) - 1, f"uint{bits}_t"


def fits(ctype: Any, value: int, what: str) -> int:
    """value, checked to be an integer (TypeError for a bool, which
    operator.index would take as 0 or 1) that fits the C integer type
    ctype (ctypes would silently cut it)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, not bool")
    value = operator.index(value)
    low, high, name = _bounds(ctype)
    if not low <= value <= high:
        raise OverflowError(f"{what} {value:#x} does not fit in {name}")
    return value


def u64(value: int, what: str = "value") -> int:
    """value, checked to fit a uint64_t."""
    return fits(_u64, value, what)


def c_int(value: int, what: str = "value") -> int:
    """value, checked to fit an int."""
    return fits(_int, value, what)
