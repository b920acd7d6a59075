"""AddressSpace: every method, its errors, options and the closed state."""

import errno
import gc
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Union

import pytest

import noclobber as nc
from conftest import ANON, PAGE, RW, SMALL

TOP = SMALL["task_size"] - (128 << 20)  # mmap_base by default


def err(e: pytest.ExceptionInfo) -> str:  # type: ignore[type-arg]
    return errno.errorcode[e.value.errno]


def layout(space: nc.AddressSpace) -> List[tuple]:  # type: ignore[type-arg]
    return [(m.start, m.end, m.perms) for m in space]


# Options.

def test_defaults_are_this_machines() -> None:
    with nc.AddressSpace() as space:
        addr = space.mmap(0, PAGE, nc.PROT_READ, ANON)
        assert addr % nc.probe().page_size == 0
        assert space.find(addr) is not None


def test_mmap_base_option() -> None:
    with nc.AddressSpace(**SMALL, mmap_base=0x40000000) as space:
        assert space.mmap(0, PAGE, RW, ANON) == 0x40000000 - PAGE


def release(major: int, minor: int, patch: int) -> int:
    """A release as ncb_core_kernel_release encodes it."""
    return major << 16 | minor << 8 | patch


@pytest.mark.parametrize("rel,aligned", [((6, 1, 192), False),
                                         ((6, 12, 118), True)])
def test_release_option(rel: Any, aligned: bool) -> None:
    """6.1 places anonymous memory without THP alignment, 6.12 with."""
    opts = dict(SMALL, thp=0, mmap_base=0x40001000, release=release(*rel))
    with nc.AddressSpace(**opts) as space:
        addr = space.mmap(0, 4 << 20, nc.PROT_READ, ANON)
        assert (addr % (2 << 20) == 0) == aligned


def test_unknown_option() -> None:
    with pytest.raises(TypeError, match="unknown option 'colour'"):
        nc.AddressSpace(colour=1)


@pytest.mark.parametrize("opts", [dict(page_size=-1),
                                  dict(max_map_count=1 << 32),
                                  dict(thp=1 << 31),
                                  dict(release=1 << 32)])
def test_option_out_of_range(opts: Any) -> None:
    with pytest.raises(OverflowError):
        nc.AddressSpace(**opts)


@pytest.mark.parametrize("opts", [dict(page_size=3000),
                                  dict(release=1 << 24),
                                  dict(task_size=1 << 40,
                                       mmap_base=1 << 41)])
def test_invalid_options(opts: Any) -> None:
    with pytest.raises(OSError) as e:
        nc.AddressSpace(**opts)
    assert err(e) == "EINVAL"


def test_failed_init_leaves_nothing_to_free(monkeypatch: Any) -> None:
    seen: List[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    with pytest.raises(OSError):
        nc.AddressSpace(page_size=3000)
    gc.collect()
    assert seen == []


# mmap.

def test_mmap_top_down_then_below(space: nc.AddressSpace) -> None:
    first = space.mmap(0, 4 * PAGE, RW, ANON)
    assert first == TOP - 4 * PAGE
    second = space.mmap(0, PAGE, nc.PROT_READ, ANON)
    assert second == first - PAGE
    assert len(space) == 2


def test_mmap_merges_compatible_neighbours(space: nc.AddressSpace) -> None:
    space.mmap(0, PAGE, RW, ANON)
    space.mmap(0, PAGE, RW, ANON)
    assert layout(space) == [(TOP - 2 * PAGE, TOP, "rw-p")]


def test_mmap_hint_taken_when_free(space: nc.AddressSpace) -> None:
    assert space.mmap(0x10000000, PAGE, RW, ANON) == 0x10000000
    # Taken: the hint is not, the kernel searches instead.
    assert space.mmap(0x10000000, PAGE, RW, ANON) == TOP - PAGE


def test_map_fixed_replaces_and_splits(space: nc.AddressSpace) -> None:
    addr = space.mmap(0, 3 * PAGE, RW, ANON)
    got = space.mmap(addr + PAGE, PAGE, nc.PROT_READ, ANON | nc.MAP_FIXED)
    assert got == addr + PAGE
    assert layout(space) == [(addr, addr + PAGE, "rw-p"),
                             (addr + PAGE, addr + 2 * PAGE, "r--p"),
                             (addr + 2 * PAGE, addr + 3 * PAGE, "rw-p")]


def test_map_fixed_noreplace_eexist(space: nc.AddressSpace) -> None:
    addr = space.mmap(0, 2 * PAGE, RW, ANON)
    before = space.dump()
    with pytest.raises(FileExistsError) as e:
        space.mmap(addr + PAGE, 2 * PAGE, nc.PROT_READ,
                   ANON | nc.MAP_FIXED_NOREPLACE)
    assert e.value.errno == errno.EEXIST
    assert space.dump() == before


def test_map_fixed_below_mmap_min_addr(space: nc.AddressSpace) -> None:
    with pytest.raises(PermissionError):
        space.mmap(SMALL["mmap_min_addr"] - PAGE, PAGE, RW,
                   ANON | nc.MAP_FIXED)


@pytest.mark.parametrize("addr, length, flags, offset", [
    (0, 0, ANON, 0),                              # no length
    (0, PAGE, nc.MAP_ANONYMOUS, 0),               # no map type
    (0x10000001, PAGE, ANON | nc.MAP_FIXED, 0),   # unaligned fixed addr
    (0, PAGE, nc.MAP_PRIVATE, 1),                 # unaligned offset
])
def test_mmap_einval(space: nc.AddressSpace, addr: int, length: int,
                     flags: int, offset: int) -> None:
    with pytest.raises(OSError) as e:
        space.mmap(addr, length, nc.PROT_READ, flags,
                   file=None if flags & nc.MAP_ANONYMOUS else "/f",
                   offset=offset)
    assert err(e) == "EINVAL"


def test_mmap_enomem(space: nc.AddressSpace) -> None:
    with pytest.raises(OSError) as e:
        space.mmap(0, SMALL["task_size"], RW, ANON)
    assert err(e) == "ENOMEM"
    with pytest.raises(OSError) as e:
        space.mmap(SMALL["task_size"], PAGE, RW, ANON | nc.MAP_FIXED)
    assert err(e) == "ENOMEM"


def test_max_map_count() -> None:
    with nc.AddressSpace(**SMALL, max_map_count=3) as space:
        with pytest.raises(OSError) as e:
            for i in range(10):
                # Protections alternate: no two neighbours merge.
                space.mmap(0, PAGE, nc.PROT_READ << (i % 2), ANON)
        assert err(e) == "ENOMEM"
        assert len(space) == 4  # refused once the count is above it


@pytest.mark.parametrize("addr, length", [(-1, PAGE), (0, 1 << 64)])
def test_mmap_argument_range(space: nc.AddressSpace, addr: int,
                             length: int) -> None:
    with pytest.raises(OverflowError):
        space.mmap(addr, length, RW, ANON)
    with pytest.raises(OverflowError):
        space.mmap(0, PAGE, 1 << 40, ANON)
    with pytest.raises(TypeError):
        space.mmap(0.5, PAGE, RW, ANON)  # type: ignore[arg-type]


# Files.

def test_file_numbers(space: nc.AddressSpace) -> None:
    libc = space.file("/lib/libc.so.6", 8, 1, 1234)
    assert libc != 0
    assert space.file("/lib/libc.so.6", 8, 1, 1234) == libc
    assert space.file(b"/lib/libc.so.6", 8, 1, 1234) == libc
    assert space.file("/lib/libc.so.6", 8, 1, 1235) != libc
    assert space.file("/lib/libm.so.6", 8, 1, 1234) != libc


def test_file_with_a_null_byte(space: nc.AddressSpace) -> None:
    """Refused, as the os module refuses it, rather than cut at the
    null byte."""
    paths: List[Union[str, bytes]] = ["/a\0b", b"/a\0b"]
    for path in paths:
        with pytest.raises(ValueError, match="embedded null byte"):
            space.file(path)
        with pytest.raises(ValueError, match="embedded null byte"):
            space.mmap(0, PAGE, RW, nc.MAP_PRIVATE, path)
    assert len(space) == 0
    first = space.file("/a")
    assert space.file("/b") == first + 1  # nothing was registered before


@pytest.mark.parametrize("call", [
    lambda s: s.mmap(0, PAGE, RW, nc.MAP_PRIVATE, True),
    lambda s: s.mmap(True, PAGE, RW, ANON),
    lambda s: s.mmap(0, PAGE, True, ANON),
    lambda s: s.munmap(0x10000, True),
    lambda s: s.mprotect(0x10000, PAGE, False),
    lambda s: s.find_next(True),
    lambda s: s.file("/a", True),
    lambda s: nc.AddressSpace(thp=True),
], ids=["file", "addr", "prot", "length", "mprotect", "find_next",
        "dev_major", "option"])
def test_bool_is_not_an_integer(space: nc.AddressSpace,
                                call: Callable[[nc.AddressSpace],
                                               object]) -> None:
    with pytest.raises(TypeError, match="not bool"):
        call(space)
    assert len(space) == 0


def test_file_mapping(space: nc.AddressSpace) -> None:
    libc = space.file("/lib/libc.so.6", 8, 1, 1234)
    addr = space.mmap(0, 2 * PAGE, nc.PROT_READ, nc.MAP_PRIVATE, libc,
                      3 * PAGE)
    m = space.find(addr)
    assert m is not None
    assert (m.path, m.dev_major, m.dev_minor, m.inode, m.offset) == \
        ("/lib/libc.so.6", 8, 1, 1234, 3 * PAGE)
    assert m.dev == os.makedev(8, 1)
    assert m.length == 2 * PAGE and addr + PAGE in m and addr + 2 * PAGE \
        not in m
    assert not m.shared and m.perms == "r--p"


def test_file_by_path(space: nc.AddressSpace) -> None:
    addr = space.mmap(0, PAGE, nc.PROT_READ, nc.MAP_SHARED, "/data")
    m = space.find(addr)
    assert m is not None and m.path == "/data" and m.shared
    assert m.perms == "r--s"
    assert space.file("/data") == space.file(os.fsencode("/data"))


def test_unknown_file_number(space: nc.AddressSpace) -> None:
    with pytest.raises(OSError) as e:
        space.mmap(0, PAGE, nc.PROT_READ, nc.MAP_PRIVATE, 999)
    assert err(e) == "EINVAL"
    with pytest.raises(OverflowError):
        space.mmap(0, PAGE, nc.PROT_READ, nc.MAP_PRIVATE, -1)
    with pytest.raises(OverflowError):
        space.file("/f", dev_major=-1)


# munmap, mprotect.

def test_munmap_punches_a_hole(space: nc.AddressSpace) -> None:
    addr = space.mmap(0, 3 * PAGE, RW, ANON)
    space.munmap(addr + PAGE, PAGE)
    assert layout(space) == [(addr, addr + PAGE, "rw-p"),
                             (addr + 2 * PAGE, addr + 3 * PAGE, "rw-p")]
    space.munmap(addr, 3 * PAGE)  # holes in the range are fine
    assert len(space) == 0


@pytest.mark.parametrize("addr, length", [(0x10000001, PAGE), (0x10000000, 0)])
def test_munmap_einval(space: nc.AddressSpace, addr: int,
                       length: int) -> None:
    with pytest.raises(OSError) as e:
        space.munmap(addr, length)
    assert err(e) == "EINVAL"


def test_mprotect_splits_and_merges(space: nc.AddressSpace) -> None:
    addr = space.mmap(0, 3 * PAGE, RW, ANON)
    space.mprotect(addr + PAGE, PAGE, nc.PROT_READ)
    assert [p for _, _, p in layout(space)] == ["rw-p", "r--p", "rw-p"]
    space.mprotect(addr + PAGE, PAGE, RW)
    assert layout(space) == [(addr, addr + 3 * PAGE, "rw-p")]


def test_mprotect_errors(space: nc.AddressSpace) -> None:
    addr = space.mmap(0, 3 * PAGE, RW, ANON)
    space.munmap(addr + PAGE, PAGE)
    with pytest.raises(OSError) as e:
        space.mprotect(addr, 3 * PAGE, nc.PROT_READ)
    assert err(e) == "ENOMEM"
    with pytest.raises(OSError) as e:
        space.mprotect(addr + 1, PAGE, nc.PROT_READ)
    assert err(e) == "EINVAL"
    with pytest.raises(OSError) as e:
        space.mprotect(addr, PAGE, nc.PROT_READ | 0x1000000)
    assert err(e) == "EINVAL"


# mremap.

def test_mremap_grows_in_place_and_moves(space: nc.AddressSpace) -> None:
    low = space.mmap(0x10000000, PAGE, RW, ANON)
    assert space.mremap(low, PAGE, 4 * PAGE) == low
    assert layout(space) == [(low, low + 4 * PAGE, "rw-p")]
    space.mmap(low + 4 * PAGE, PAGE, nc.PROT_READ, ANON | nc.MAP_FIXED)
    with pytest.raises(OSError) as e:
        space.mremap(low, 4 * PAGE, 8 * PAGE)
    assert err(e) == "ENOMEM"
    moved = space.mremap(low, 4 * PAGE, 8 * PAGE, nc.MREMAP_MAYMOVE)
    assert moved != low
    assert space.find(low) is None
    assert space.find(moved) == space.find(moved + 8 * PAGE - 1)


def test_mremap_fixed(space: nc.AddressSpace) -> None:
    addr = space.mmap(0x10000000, 2 * PAGE, RW, ANON)
    target = 0x20000000
    got = space.mremap(addr, 2 * PAGE, 2 * PAGE,
                       nc.MREMAP_MAYMOVE | nc.MREMAP_FIXED, target)
    assert got == target
    assert layout(space) == [(target, target + 2 * PAGE, "rw-p")]


def test_mremap_errors(space: nc.AddressSpace) -> None:
    addr = space.mmap(0x10000000, 2 * PAGE, RW, ANON)
    with pytest.raises(OSError) as e:
        space.mremap(0x30000000, PAGE, 2 * PAGE)
    assert err(e) == "EFAULT"
    with pytest.raises(OSError) as e:
        space.mremap(addr, PAGE, 2 * PAGE, 0x80)
    assert err(e) == "EINVAL"
    with pytest.raises(OSError) as e:
        space.mremap(addr, PAGE, PAGE, nc.MREMAP_FIXED, 0x20000000)
    assert err(e) == "EINVAL"


# brk.

def test_brk_without_a_break(space: nc.AddressSpace) -> None:
    with pytest.raises(OSError) as e:
        space.brk()
    assert err(e) == "EINVAL"


def test_brk_moves_the_break() -> None:
    start = 0x555555560000
    with nc.AddressSpace(**SMALL, start_brk=start, brk=start) as space:
        assert space.brk() == start
        assert space.brk(start + 3 * PAGE) == start + 3 * PAGE
        m = space.find(start)
        assert m is not None and m.path == "[heap]"
        assert m.end == start + 3 * PAGE and m.perms == "rw-p"
        # Below the heap's start: refused, the old break stays.
        assert space.brk(start - PAGE) == start + 3 * PAGE
        assert space.brk(start + PAGE) == start + PAGE
        assert space.find(start + 2 * PAGE) is None


def test_brk_from_a_loaded_heap() -> None:
    with nc.AddressSpace(**SMALL) as space:
        space.load("555555560000-555555562000 rw-p 00000000 00:00 0"
                   "    [heap]\n")
        assert space.brk() == 0x555555562000


# find, find_next, find_free.

def test_find_and_find_next(space: nc.AddressSpace) -> None:
    addr = space.mmap(0x10000000, PAGE, RW, ANON)
    assert space.find(addr - 1) is None
    nxt = space.find_next(addr - 1)
    assert nxt is not None and nxt.start == addr
    assert space.find(addr + PAGE - 1) == nxt
    assert space.find(addr + PAGE) is None
    assert space.find_next(addr + PAGE) is None


def test_find_free(space: nc.AddressSpace) -> None:
    lo, hi = 0x10000000, 0x10010000
    space.mmap(lo + PAGE, PAGE, RW, ANON | nc.MAP_FIXED)
    space.mmap(hi - 2 * PAGE, PAGE, RW, ANON | nc.MAP_FIXED)
    assert space.find_free(lo, hi, PAGE, place=nc.Place.LOWEST) == lo
    assert space.find_free(lo, hi, PAGE, place=nc.Place.HIGHEST) == \
        hi - PAGE
    assert space.find_free(lo, hi, 2 * PAGE, place=nc.Place.LOWEST) == \
        lo + 2 * PAGE
    assert space.find_free(lo, hi, PAGE, 0x8000, nc.Place.HIGHEST) == \
        lo + 0x8000
    for _ in range(20):
        addr = space.find_free(lo, hi, PAGE, place=nc.Place.RANDOM)
        assert lo <= addr < hi and addr % PAGE == 0
        space.mmap(addr, PAGE, RW, ANON | nc.MAP_FIXED_NOREPLACE)
        space.munmap(addr, PAGE)
    # ANY: where the model's own mmap would put it.
    want = space.find_free(0, 0, PAGE)
    assert space.mmap(0, PAGE, RW, ANON) == want


def test_find_free_errors(space: nc.AddressSpace) -> None:
    space.mmap(0x10000000, 0x10000, RW, ANON | nc.MAP_FIXED)
    with pytest.raises(OSError) as e:
        space.find_free(0x10000000, 0x10010000, PAGE)
    assert err(e) == "ENOMEM"
    for bad in (dict(length=0), dict(align=3 * PAGE), dict(place=7),
                dict(lo=0x20000000, hi=0x10000000)):
        args = dict(lo=0x1000000, hi=0x2000000, length=PAGE, align=0,
                    place=0)
        args.update(bad)
        with pytest.raises(OSError) as e:
            space.find_free(**args)
        assert err(e) == "EINVAL", bad


# Counting, iterating, loading and dumping.

def test_len_and_iter(space: nc.AddressSpace) -> None:
    assert len(space) == 0 and list(space) == []
    a = space.mmap(0x10000000, PAGE, RW, ANON)
    b = space.mmap(0x20000000, PAGE, nc.PROT_READ, ANON)
    assert len(space) == 2
    assert [m.start for m in space] == [a, b]
    assert repr(space) == "<AddressSpace of 2 mappings>"


def test_iter_sees_changes_ahead(space: nc.AddressSpace) -> None:
    space.mmap(0x10000000, PAGE, RW, ANON)
    seen = []
    for m in space:
        seen.append(m.start)
        if len(seen) == 1:
            space.mmap(0x30000000, PAGE, RW, ANON)
    assert seen == [0x10000000, 0x30000000]


MAPS = "".join(f"{r} {p} {o} {d} {i:<10} {path}\n".replace(" \n", "\n")
               for r, p, o, d, i, path in [
    ("555555554000-555555556000", "r--p", "00000000", "08:01", 1234,
     "/usr/bin/prog"),
    ("555555556000-55555555b000", "r-xp", "00002000", "08:01", 1234,
     "/usr/bin/prog"),
    ("55555555b000-55555557c000", "rw-p", "00000000", "00:00", 0, "[heap]"),
    ("7ffff7fc3000-7ffff7fc7000", "r--p", "00000000", "00:00", 0, "[vvar]"),
    ("7ffff7fc7000-7ffff7fc9000", "r-xp", "00000000", "00:00", 0, "[vdso]"),
    ("7ffff7fc9000-7ffff7fca000", "rw-s", "00000000", "00:05", 99,
     "/dev/shm/with space \xff"),
    ("7ffffffde000-7ffffffff000", "rw-p", "00000000", "00:00", 0,
     "[stack]"),
])


def fields(line: str) -> tuple:  # type: ignore[type-arg]
    parts = line.split(None, 5)
    return tuple(parts[:5]) + ((parts[5] if len(parts) > 5 else ""),)


def test_load_and_dump(space: nc.AddressSpace) -> None:
    text = os.fsdecode(MAPS.encode("latin-1"))
    space.load(text)
    assert len(space) == 7
    dumped = space.dump()
    assert [fields(x) for x in dumped.splitlines()] == \
        [fields(x) for x in text.splitlines()]
    shm = space.find(0x7ffff7fc9000)
    assert shm is not None and shm.shared and shm.inode == 99
    assert os.fsencode(shm.path) == b"/dev/shm/with space \xff"
    assert str(shm).split() == text.splitlines()[5].split()
    # bytes load the same.
    with nc.AddressSpace(**SMALL) as other:
        other.load(MAPS.encode("latin-1"))
        assert other.dump() == dumped


def test_load_then_map(space: nc.AddressSpace) -> None:
    space.load(MAPS)
    with pytest.raises(FileExistsError):
        space.mmap(0x555555555000, PAGE, RW, ANON | nc.MAP_FIXED_NOREPLACE)
    # The stack's guard gap is no free space for a hint.
    hint = 0x7ffffffde000 - PAGE
    assert space.mmap(hint, PAGE, RW, ANON) != hint


@pytest.mark.parametrize("text, code", [
    ("not a maps line\n", "EIO"),
    ("1000-3000 rw-p 00000000 00:00 0\n2000-4000 rw-p 00000000 00:00 0\n",
     "EINVAL"),
    ("1000-2000 rw-p 100000000000000000 00:00 0\n", "EOVERFLOW"),
])
def test_load_errors(space: nc.AddressSpace, text: str, code: str) -> None:
    with pytest.raises(OSError) as e:
        space.load(text)
    assert err(e) == code


def test_dump_of_an_empty_space(space: nc.AddressSpace) -> None:
    assert space.dump() == ""


def test_dump_longer_than_any_first_guess(space: nc.AddressSpace) -> None:
    for i in range(500):
        space.mmap(0x10000000 + 2 * i * PAGE, PAGE, RW, ANON | nc.MAP_FIXED)
    lines = space.dump().splitlines()
    assert len(lines) == 500
    assert lines[-1].startswith(f"{0x10000000 + 998 * PAGE:x}-")


# Closing.

CALLS: Dict[str, Callable[[nc.AddressSpace], Any]] = {
    "mmap": lambda s: s.mmap(0, PAGE, RW, ANON),
    "munmap": lambda s: s.munmap(0x10000000, PAGE),
    "mprotect": lambda s: s.mprotect(0x10000000, PAGE, RW),
    "mremap": lambda s: s.mremap(0x10000000, PAGE, PAGE),
    "brk": lambda s: s.brk(),
    "file": lambda s: s.file("/f"),
    "find": lambda s: s.find(0),
    "find_next": lambda s: s.find_next(0),
    "find_free": lambda s: s.find_free(0, 0, PAGE),
    "len": lambda s: len(s),
    "iter": lambda s: list(s),
    "load": lambda s: s.load(""),
    "dump": lambda s: s.dump(),
    "with": lambda s: s.__enter__(),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_closed_space(name: str) -> None:
    space = nc.AddressSpace()
    space.close()
    assert space.closed
    with pytest.raises(ValueError, match="closed AddressSpace"):
        CALLS[name](space)


def test_threads_take_turns() -> None:
    """Threads mapping and unmapping in one space, and one closing it:
    every call sees a whole model, and after the close a ValueError."""
    space = nc.AddressSpace(**SMALL)
    errors: List[BaseException] = []

    def work(k: int) -> None:
        base = 0x10000000 * (k + 1)
        try:
            for i in range(2000):
                addr = base + (i % 64) * 2 * PAGE
                space.mmap(addr, PAGE, RW, ANON | nc.MAP_FIXED_NOREPLACE)
                assert space.find(addr) is not None
                space.munmap(addr, PAGE)
        except ValueError:
            pass
        except BaseException as e:  # pragma: no cover - the failure
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    threads[0].join()
    space.close()
    for t in threads[1:]:
        t.join()
    assert errors == []
    with pytest.raises(ValueError):
        len(space)


def test_close_twice_and_repr() -> None:
    with nc.AddressSpace() as space:
        assert not space.closed
    assert space.closed
    space.close()
    assert repr(space) == "<AddressSpace closed>"
