"""The model against the kernel: an AddressSpace loaded from this
process's maps says what ncb_mmap and mmap(2) really do."""

import ctypes
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import noclobber as nc

from syscalls import ANON, PAGE, RW, libc


def model() -> nc.AddressSpace:
    """A model of this process as it is now."""
    space = nc.AddressSpace()
    space.load(Path("/proc/self/maps").read_bytes())
    return space


def real(addr: int, length: int) -> List[Tuple[int, int, str]]:
    """The kernel's mappings in [addr, addr + length)."""
    return [(m.start, m.end, m.perms) for m in nc.maps(0, addr)
            if m.start < addr + length]


def modelled(space: nc.AddressSpace, addr: int,
             length: int) -> List[Tuple[int, int, str]]:
    return [(m.start, m.end, m.perms) for m in space
            if m.end > addr and m.start < addr + length]


@pytest.fixture
def reserved() -> Iterator[int]:
    """64 PROT_NONE pages of this process's, where the model says they
    fit, taken with ncb_mmap."""
    with model() as space:
        top = next(m for m in space if m.path == "[stack]").end
        addr = space.find_free(top // 8, top // 4, 64 * PAGE,
                               place=nc.Place.RANDOM)
    region = nc.mmap_at(addr, 64 * PAGE, nc.PROT_NONE, ANON)
    yield addr
    region.close()


def noreplace_verdict(space: nc.AddressSpace, addr: int) -> str:
    try:
        space.mmap(addr, PAGE, RW, ANON | nc.MAP_FIXED_NOREPLACE)
    except FileExistsError:
        return "occupied"
    space.munmap(addr, PAGE)
    return "free"


def kernel_verdict(addr: int) -> str:
    try:
        region = nc.mmap_at(addr, PAGE)
    except FileExistsError:
        return "occupied"
    region.close()
    return "free"


def test_occupied_and_free_agree(reserved: int) -> None:
    """Around the reservation and at every mapping's edges, the model and
    ncb_mmap find the same pages occupied."""
    with model() as space:
        candidates = [reserved + d * PAGE for d in (-2, -1, 0, 63, 64, 65)]
        for m in list(space)[:40]:
            if m.path not in ("[vsyscall]", "[stack]"):
                candidates += [m.start - PAGE, m.start, m.end - PAGE, m.end]
        verdicts = {a: noreplace_verdict(space, a) for a in candidates
                    if a >= nc.probe().mmap_min_addr}
    assert list(verdicts.values()).count("occupied") >= 10
    assert {a: kernel_verdict(a) for a in verdicts} == verdicts


def both(space: nc.AddressSpace, name: str, *args: int) -> None:
    """The call on the model and on the kernel, which must agree."""
    want = getattr(space, name)(*args)
    got = getattr(libc, name)(*args)
    if name in ("munmap", "mprotect"):
        assert got == 0, ctypes.get_errno()
    else:
        assert got == want


def fixed(space: nc.AddressSpace, addr: int, length: int, prot: int) -> None:
    """MAP_FIXED anonymous memory on the model and on the kernel."""
    flags = ANON | nc.MAP_FIXED
    assert space.mmap(addr, length, prot, flags) == addr
    assert libc.mmap(addr, length, prot, flags, -1, 0) == addr


def test_operations_agree(reserved: int) -> None:
    """Fixed mappings, protection changes, holes and moves inside the
    reservation leave the same layout in the model and in the kernel."""
    r = reserved
    with model() as space:
        fixed(space, r + 4 * PAGE, 8 * PAGE, RW)
        both(space, "mprotect", r + 6 * PAGE, 2 * PAGE, nc.PROT_READ)
        both(space, "munmap", r + 20 * PAGE, 4 * PAGE)
        both(space, "mremap", r + 4 * PAGE, 2 * PAGE, 2 * PAGE,
             nc.MREMAP_MAYMOVE | nc.MREMAP_FIXED, r + 30 * PAGE)
        fixed(space, r + 12 * PAGE, 2 * PAGE, RW)  # merges with [8, 12)
        both(space, "mremap", r + 30 * PAGE, 2 * PAGE, PAGE, 0, 0)
        both(space, "mprotect", r + 40 * PAGE, 4 * PAGE, nc.PROT_READ)
        layout = modelled(space, r, 64 * PAGE)
    assert len(layout) >= 8
    assert real(r, 64 * PAGE) == layout


def test_pieces_of_a_loaded_area_merge_again(reserved: int) -> None:
    r = reserved
    with model() as space:
        both(space, "mprotect", r + 40 * PAGE, 8 * PAGE, nc.PROT_READ)
        both(space, "mprotect", r + 44 * PAGE, 4 * PAGE, nc.PROT_NONE)
        layout = modelled(space, r, 64 * PAGE)
    assert real(r, 64 * PAGE) == layout
