"""mmap_at() and Region: memory mapped exactly, refused over what is
there, and never unmapped while still in reach."""

import copy
import ctypes
import errno
import gc
import mmap
import os
import pickle
import threading
from pathlib import Path
from typing import Callable, Dict, List

import pytest

import noclobber as nc
from conftest import run_python

PAGE = mmap.PAGESIZE


@pytest.fixture
def free() -> int:
    """An address with 16 free pages, where neither the kernel's own
    placements (top-down from below the stack) nor the heap go: the
    model's choice, from this process's maps."""
    with nc.AddressSpace() as space:
        space.load(Path("/proc/self/maps").read_bytes())
        top = next(m for m in space if m.path == "[stack]").end
        return space.find_free(top // 8, top // 4, 16 * PAGE,
                               place=nc.Place.RANDOM)


def mapped(addr: int) -> nc.Mapping:
    found = next((m for m in nc.maps(0, addr) if addr in m), None)
    assert found is not None, f"{addr:#x} is not mapped"
    return found


def test_maps_exactly_there(free: int) -> None:
    with nc.mmap_at(free, 4 * PAGE) as region:
        assert region.address == free and len(region) == 4 * PAGE
        assert repr(region) == \
            f"<Region open {free:#x}-{free + 4 * PAGE:#x}>"
        region.view[:5] = b"hello"
        assert bytes(region)[:5] == b"hello"
        m = mapped(free)
        assert (m.start, m.end, m.perms) == (free, free + 4 * PAGE, "rw-p")
    assert region.closed
    assert not any(free in m for m in nc.maps(0, free))


def test_refused_over_a_mapping(free: int) -> None:
    with nc.mmap_at(free + PAGE, 2 * PAGE) as first:
        first.view[0] = 42
        for addr in (free, free + 2 * PAGE, free + PAGE):
            with pytest.raises(FileExistsError) as e:
                nc.mmap_at(addr, 2 * PAGE)
            assert e.value.errno == errno.EEXIST
        assert first.view[0] == 42
        assert mapped(free + PAGE).end == free + 3 * PAGE


def test_refused_over_this_programs_own_memory() -> None:
    stack = next(m for m in nc.maps() if m.path == "[stack]")
    with pytest.raises(FileExistsError):
        nc.mmap_at(stack.end - PAGE, PAGE)


@pytest.mark.parametrize("offset, length", [(1, PAGE), (0, 0)])
def test_einval(free: int, offset: int, length: int) -> None:
    with pytest.raises(OSError) as e:
        nc.mmap_at(free + offset, length)
    assert e.value.errno == errno.EINVAL


def test_bad_descriptor(free: int) -> None:
    fd = os.open("/dev/null", os.O_RDONLY)
    os.close(fd)
    with pytest.raises(OSError) as e:
        nc.mmap_at(free, PAGE, nc.PROT_READ, nc.MAP_PRIVATE, fileno=fd)
    assert e.value.errno == errno.EBADF


def test_argument_range() -> None:
    with pytest.raises(OverflowError):
        nc.mmap_at(-PAGE, PAGE)
    with pytest.raises(OverflowError):
        nc.mmap_at(0, -1)


@pytest.mark.parametrize("args", [
    dict(addr=True), dict(length=True), dict(prot=True), dict(flags=True),
    dict(fileno=True), dict(offset=False)])
def test_bool_is_not_an_integer(free: int, args: Dict[str, int]) -> None:
    call = dict(addr=free, length=PAGE, prot=nc.PROT_READ,
                flags=nc.MAP_PRIVATE | nc.MAP_ANONYMOUS)
    call.update(args)
    with pytest.raises(TypeError, match="not bool"):
        nc.mmap_at(**call)
    assert not any(free in m for m in nc.maps(0, free))


def test_a_file(free: int, tmp_path: Path) -> None:
    path = tmp_path / "data"
    path.write_bytes(b"a" * PAGE + b"b" * PAGE)
    with open(path, "rb") as f:
        region = nc.mmap_at(free, PAGE, nc.PROT_READ, nc.MAP_SHARED,
                            fileno=f.fileno(), offset=PAGE)
    with region:
        assert bytes(region) == b"b" * PAGE
        assert region.view.readonly
        m = mapped(free)
        assert m.path == str(path) and m.offset == PAGE and m.shared
        assert m.inode == path.stat().st_ino and m.dev == path.stat().st_dev


@pytest.mark.parametrize("length, offset", [
    (2 * PAGE, 0), (11, 0), (PAGE, PAGE), (PAGE, 2 * PAGE)])
@pytest.mark.parametrize("flags", [nc.MAP_SHARED, nc.MAP_PRIVATE])
def test_past_the_end_of_a_file(free: int, tmp_path: Path, length: int,
                                offset: int, flags: int) -> None:
    """Refused as the mmap module refuses it: touching the page past the
    end would kill the interpreter with SIGBUS."""
    path = tmp_path / "small"
    path.write_bytes(b"x" * 10)
    with open(path, "rb") as f:
        with pytest.raises(ValueError, match="mmap length is greater"):
            nc.mmap_at(free, length, nc.PROT_READ, flags,
                       fileno=f.fileno(), offset=offset)
        with pytest.raises(ValueError, match="mmap length is greater"):
            mmap.mmap(f.fileno(), length, mmap.MAP_SHARED, mmap.PROT_READ,
                      offset=offset)
    assert not any(free in m for m in nc.maps(0, free))


def test_the_end_of_a_file(free: int, tmp_path: Path) -> None:
    """Up to the last byte, as the mmap module maps it; and devices,
    whose size says nothing, are mapped as they are."""
    path = tmp_path / "small"
    path.write_bytes(b"0123456789")
    with open(path, "rb") as f:
        with nc.mmap_at(free, 10, nc.PROT_READ, nc.MAP_SHARED,
                        fileno=f.fileno()) as region:
            assert bytes(region) == b"0123456789"
    with open("/dev/zero", "rb") as f:
        with nc.mmap_at(free, PAGE, nc.PROT_READ, nc.MAP_PRIVATE,
                        fileno=f.fileno()) as region:
            assert region.view[PAGE - 1] == 0


def test_touching_past_the_end_does_not_kill() -> None:
    """The reproducer: a 10-byte file, 8192 bytes of it mapped shared, a
    byte past the first page touched.  The interpreter says ValueError
    and lives."""
    result = run_python(["-c", """if True:
        import os, tempfile, noclobber as nc
        with nc.AddressSpace() as space:
            space.load(open("/proc/self/maps", "rb").read())
            top = next(m for m in space if m.path == "[stack]").end
            free = space.find_free(top // 8, top // 4, 8192)
        fd, path = tempfile.mkstemp()
        os.write(fd, b"x" * 10)
        try:
            r = nc.mmap_at(free, 8192, nc.PROT_READ, nc.MAP_SHARED,
                           fileno=fd)
            print(r.view[5000])
        except ValueError as err:
            print("refused:", err)
        finally:
            os.unlink(path)
        """])
    assert result.returncode == 0, result
    assert "refused: mmap length is greater than file size" in result.stdout


def test_no_view_without_prot_read(free: int) -> None:
    with nc.mmap_at(free, PAGE, nc.PROT_NONE) as region:
        assert region.prot == nc.PROT_NONE
        with pytest.raises(ValueError, match="not readable"):
            region.view
        assert mapped(free).perms == "---p"


HOLDERS: List[Callable[[memoryview], object]] = [
    lambda v: v[1:3], memoryview, lambda v: v.obj,
    lambda v: (ctypes.c_char * 4).from_buffer(v)]


def test_close_waits_for_every_view(free: int) -> None:
    region = nc.mmap_at(free, PAGE)
    for holder in HOLDERS:
        held = holder(region.view)
        with pytest.raises(BufferError, match="still held"):
            region.close()
        assert not region.closed
        region.view[0] = 7  # the view works again
        del held
    exported = pickle.PickleBuffer(region.view)
    with pytest.raises(BufferError, match="exported"):
        region.close()
    del exported
    region.close()
    assert region.closed
    assert not any(free in m for m in nc.maps(0, free))


def test_a_refused_close_changes_nothing(free: int) -> None:
    """The caller's view still works after close() refused, and is the
    Region's; a close that succeeds releases it."""
    region = nc.mmap_at(free, PAGE)
    view = region.view
    holders = HOLDERS + [pickle.PickleBuffer]
    for i, holder in enumerate(holders):
        held = holder(view)
        with pytest.raises(BufferError, match="still held"):
            region.close()
        assert not region.closed
        view[0] = i
        assert region.view is view and region.view[0] == i
        del held
    region.close()
    with pytest.raises(ValueError, match="released"):
        view[0]


def test_view_waits_for_a_close_under_way(free: int) -> None:
    """view takes the lock close() holds: it gives the view or says the
    Region is closed, never a released view or None."""
    region = nc.mmap_at(free, PAGE)
    got: List[object] = []

    def read() -> None:
        try:
            got.append(region.view)
        except ValueError as err:
            got.append(err)

    with region._lock:  # as close() holds it
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(0.2)
        assert reader.is_alive() and not got
        region._release_view()  # close()'s work under the lock
        region._mapped = False
    reader.join()
    assert isinstance(got[0], ValueError), got
    assert "closed Region" in str(got[0])
    os_munmap(free, PAGE)


def test_dropped_while_in_use_stays_mapped(free: int) -> None:
    region = nc.mmap_at(free, PAGE)
    region.view[:2] = b"ok"
    piece = region.view[:2]
    del region
    gc.collect()
    assert bytes(piece) == b"ok"
    assert mapped(free).start == free
    del piece
    gc.collect()
    os_munmap(free, PAGE)


def os_munmap(addr: int, length: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    assert libc.munmap(addr, length) == 0


def test_dropped_is_unmapped(free: int) -> None:
    region = nc.mmap_at(free, PAGE)
    del region
    gc.collect()
    assert not any(free in m for m in nc.maps(0, free))


def test_closed_region(free: int) -> None:
    region = nc.mmap_at(free, PAGE)
    region.close()
    region.close()
    assert repr(region) == f"<Region closed {free:#x}-{free + PAGE:#x}>"
    with pytest.raises(ValueError, match="closed Region"):
        region.view
    with pytest.raises(ValueError, match="closed Region"):
        bytes(region)
    with pytest.raises(ValueError, match="closed Region"):
        region.__enter__()


def test_regions_are_made_by_mmap_at_only(free: int) -> None:
    """Region() would unmap whatever address it was given once
    collected: refused, and the memory stays."""
    with nc.mmap_at(free, PAGE) as region:
        region.view[0] = 42
        with pytest.raises(TypeError, match="mmap_at"):
            nc.Region(free, PAGE)
        with pytest.raises(TypeError, match="mmap_at"):
            type(region)(free, PAGE)
        with pytest.raises(TypeError):
            copy.copy(region)
        gc.collect()
        assert mapped(free).start == free and region.view[0] == 42


def test_a_failed_munmap_is_reported() -> None:
    region = nc.Region._own(PAGE + 1, PAGE, nc.PROT_NONE)
    with pytest.raises(OSError) as e:
        region.close()
    assert e.value.errno == errno.EINVAL
