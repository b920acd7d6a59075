"""maps(): a process's mappings, against /proc/PID/maps."""

import errno
import os
import subprocess
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import noclobber as nc

Line = Tuple[int, int, str, int, int, int, int, str]


def parse(text: str) -> List[Line]:
    """/proc/PID/maps, read here independently of the library."""
    lines = []
    for line in text.splitlines():
        parts = line.split(None, 5)
        start, end = (int(x, 16) for x in parts[0].split("-"))
        major, minor = (int(x, 16) for x in parts[3].split(":"))
        path = parts[5] if len(parts) > 5 else ""
        lines.append((start, end, parts[1], int(parts[2], 16), major, minor,
                      int(parts[4]), path))
    return lines


def as_line(m: nc.Mapping) -> Line:
    return (m.start, m.end, m.perms, m.offset, m.dev_major, m.dev_minor,
            m.inode, m.path)


@pytest.fixture
def sleeper() -> Iterator[int]:
    """A process that stays still: its maps cannot change."""
    child = subprocess.Popen(["sleep", "60"])
    try:
        while Path(f"/proc/{child.pid}/stat").read_text().split()[2] != "S":
            time.sleep(0.01)
        yield child.pid
    finally:
        child.kill()
        child.wait()


def test_another_process_exactly(sleeper: int) -> None:
    want = parse(Path(f"/proc/{sleeper}/maps").read_text())
    assert [as_line(m) for m in nc.maps(sleeper)] == want


def test_this_process() -> None:
    before = set(parse(Path("/proc/self/maps").read_text()))
    got = [as_line(m) for m in nc.maps()]
    after = set(parse(Path("/proc/self/maps").read_text()))
    # What did not change meanwhile is listed as the file lists it.
    assert before & after <= set(got)
    assert got == sorted(got)
    assert any(m[7] == "[stack]" for m in got)


def test_start(sleeper: int) -> None:
    everything = list(nc.maps(sleeper))
    third = everything[2]
    assert list(nc.maps(sleeper, third.start)) == everything[2:]
    assert list(nc.maps(sleeper, third.end - 1)) == everything[2:]
    assert list(nc.maps(sleeper, third.end)) == everything[3:]


def test_negative_pid() -> None:
    with pytest.raises(OSError) as e:
        next(nc.maps(-5))
    assert e.value.errno == errno.EINVAL


def test_bool_is_not_a_pid() -> None:
    """maps(True) would read pid 1's mappings."""
    with pytest.raises(TypeError, match="not bool"):
        next(nc.maps(True))
    with pytest.raises(TypeError, match="not bool"):
        next(nc.maps(0, True))


def test_no_such_process() -> None:
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    pid = next(p for p in range(pid_max - 1, 1, -1)
               if not Path(f"/proc/{p}").exists())
    with pytest.raises(FileNotFoundError):
        next(nc.maps(pid))


def test_a_zombie_has_no_address_space() -> None:
    child = subprocess.Popen(["true"])
    try:
        stat = Path(f"/proc/{child.pid}/stat")
        while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            time.sleep(0.01)
        with pytest.raises(ProcessLookupError):
            next(nc.maps(child.pid))
    finally:
        child.wait()


def _read_init_maps_as_nobody() -> int:
    """In a child that gave up root: 0 if reading pid 1's maps is
    refused with PermissionError."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            next(nc.maps(1))
        except PermissionError:
            code = 0
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_someone_elses_process() -> None:
    if os.geteuid() == 0:
        assert _read_init_maps_as_nobody() == 0
    else:
        with pytest.raises(PermissionError):
            next(nc.maps(1))


def test_pid_range() -> None:
    with pytest.raises(OverflowError):
        next(nc.maps(1 << 40))
    with pytest.raises(OverflowError):
        next(nc.maps(0, -1))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_closed_when_finished_closed_or_dropped() -> None:
    base = open_fds()
    gen = nc.maps()
    next(gen)
    if nc.probe().procmap_query:
        # The ioctl's iterator keeps /proc/self/maps open while it walks.
        assert open_fds() == base + 1
    gen.close()
    assert open_fds() == base
    gen = nc.maps()
    next(gen)
    del gen
    assert open_fds() == base
    assert len(list(nc.maps())) > 0
    assert open_fds() == base
