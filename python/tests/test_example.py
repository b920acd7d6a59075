"""examples/strace-replay.py: on the checked-in sample, on a log strace
makes now, and on logs it cannot read."""

import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Tuple

import pytest

from conftest import HERE, PYTHON, python_env, run_python

SCRIPT = PYTHON / "examples" / "strace-replay.py"
SAMPLE = PYTHON / "examples" / "sample"
# The sample was recorded on x86_64 with 4 KiB pages and a 47-bit space.
SAMPLE_OPTS = ["--opt", "page_size=4096", "--opt", "task_size=0x7ffffffff000",
               "--opt", "mmap_min_addr=4096", "--opt", "thp=1"]
CALL = re.compile(r"^(?:\d+ )?(mmap|munmap|mprotect|mremap|brk)\(", re.M)


def replay(*args: str) -> "subprocess.CompletedProcess[str]":
    return run_python([str(SCRIPT)] + list(args))


def check_report(out: str, log: str) -> None:
    """Every replayed call of log reported, and the totals."""
    calls = len(CALL.findall(log))
    assert calls > 0
    assert out.count(": agrees") == calls, out
    assert f"{calls} calls: {calls} agree, 0 differ, 0 not replayed" in out


def test_sample() -> None:
    log = (SAMPLE / "strace.log").read_text()
    result = replay("--maps", str(SAMPLE / "maps"), *SAMPLE_OPTS,
                    str(SAMPLE / "strace.log"))
    assert result.returncode == 0, result.stdout + result.stderr
    check_report(result.stdout, log)


def test_sample_without_layout_differs() -> None:
    """From an empty model the library's placements cannot agree: the
    report says so, and the status too."""
    result = replay(*SAMPLE_OPTS, str(SAMPLE / "strace.log"))
    assert result.returncode == 1
    assert ": DIFFERS" in result.stdout
    assert re.search(r"\d+ calls: \d+ agree, [1-9]\d* differ", result.stdout)


def _wait_line(pipe: IO[bytes], want: bytes,
               seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    seen = b""
    while want not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([pipe], [], [], left)[0]:
            return False
        chunk = pipe.read1(4096)  # type: ignore[attr-defined]
        if not chunk:
            return False
        seen += chunk
    return True


def _sleeping(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "S"


def record(tmp: Path) -> Tuple[Path, Path]:
    """strace attached to tests/traced.py while it waits, and its layout
    then: the log and the maps."""
    strace = shutil.which("strace")
    if not strace:
        pytest.skip("strace is not installed")
    log, maps = tmp / "strace.log", tmp / "maps"
    child = subprocess.Popen([sys.executable, str(HERE / "traced.py")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=python_env())
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.read(1) == b"r"
        while not _sleeping(child.pid):
            time.sleep(0.01)
        tracer = subprocess.Popen(
            [strace, "-y", "-e", "trace=memory", "-o", str(log),
             "-p", str(child.pid)], stderr=subprocess.PIPE)
        assert tracer.stderr is not None
        if not _wait_line(tracer.stderr, b"attached", 30):
            tracer.kill()
            tracer.wait()
            pytest.skip("strace cannot attach here (ptrace not permitted)")
        maps.write_text(Path(f"/proc/{child.pid}/maps").read_text())
        child.stdin.write(b"g")
        child.stdin.close()
        assert child.wait(60) == 0
        assert tracer.wait(60) == 0
    finally:
        child.kill()
        child.wait()
    return log, maps


def test_real_strace(tmp_path: Path) -> None:
    log, maps = record(tmp_path)
    text = log.read_text()
    result = replay("--maps", str(maps), str(log))
    assert result.returncode == 0, text + result.stdout + result.stderr
    check_report(result.stdout, text)
    for call in ("mremap(", "munmap(", "mprotect(", "brk(",
                 "MAP_FIXED_NOREPLACE", "EEXIST"):
        assert call in text, f"the log has no {call}"


def test_unfinished_and_resumed_calls_are_joined(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text(
        "7 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0"
        " <unfinished ...>\n"
        "8 munmap(0x7ffff7ffe000, 4096 <unfinished ...>\n"
        "7 <... mmap resumed>) = 0x7ffff7ffe000\n"
        "8 <... munmap resumed>) = 0\n"
        "+++ exited with 0 +++\n")
    result = replay(*SAMPLE_OPTS, str(log))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 calls: 2 agree" in result.stdout


def test_errors_are_compared(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text(
        "mmap(0x7ffff0000000, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1,"
        " 0) = 0x7ffff0000000\n"
        "mmap(0x7ffff0000000, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS|"
        "MAP_FIXED_NOREPLACE, -1, 0) = -1 EEXIST (File exists)\n"
        "munmap(0x7ffff0000001, 4096) = -1 EINVAL (Invalid argument)\n"
        "mprotect(0x7ffff0000000, 4096, PROT_READ|0x8000000) = 0\n")
    result = replay(*SAMPLE_OPTS, str(log))
    assert result.returncode == 1
    out = result.stdout
    assert "kernel -1 EEXIST, model -1 EEXIST: agrees" in out
    assert "kernel -1 EINVAL, model -1 EINVAL: agrees" in out
    assert "kernel 0x0, model -1 EINVAL: DIFFERS" in out
    assert "4 calls: 3 agree, 1 differ, 0 not replayed" in out


def test_the_model_follows_the_kernel(tmp_path: Path) -> None:
    """An mmap placed elsewhere is moved where the kernel put it, and
    what follows is judged from there."""
    log = tmp_path / "log"
    log.write_text(
        "mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)"
        " = 0x100000000\n"
        "munmap(0x100001000, 4096) = 0\n"
        "mprotect(0x100000000, 4096, PROT_NONE) = 0\n"
        "mprotect(0x100001000, 4096, PROT_NONE) = -1 ENOMEM (Cannot"
        " allocate memory)\n")
    result = replay(*SAMPLE_OPTS, str(log))
    assert "4 calls: 3 agree, 1 differ" in result.stdout, result.stdout


def test_unknown_flag_is_not_replayed(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text("mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_FROBNICATE,"
                   " -1, 0) = 0x7ffff7fff000\n")
    result = replay(*SAMPLE_OPTS, str(log))
    assert result.returncode == 1
    assert "not replayed: unknown flag MAP_FROBNICATE" in result.stdout


MMAP = "mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)"
PLACED = 0x7ffff7ffe000  # where SAMPLE_OPTS's model puts the first page


@pytest.mark.parametrize("line, why", [
    ("munmap(0x1000, 4096) = 0xzz", "cannot read the result 0xzz"),
    ("munmap(0xzz, 4096) = 0", "not a number: 0xzz"),
    ("mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) = 0x1000",
     "not a descriptor: fd"),
    (f"mmap(NULL, 4096) = {PLACED:#x}", "mmap takes 6 arguments, not 2"),
    (f"munmap({PLACED:#x}) = 0", "munmap takes 2 arguments, not 1"),
    ("mremap(0x1000, 4096) = 0x1000", "mremap takes 4 or 5 arguments"),
    (f"{MMAP[:-4]}, -4096) = {PLACED:#x}",
     "offset -0x1000 does not fit in uint64_t"),
    (MMAP + " = 0x1", "kernel 0x1, model 0x7ffff7ffe000, and the model "
     "cannot map where the kernel did: [Errno 22] Invalid argument"),
])
def test_unreadable_lines(tmp_path: Path, line: str, why: str) -> None:
    """Reported with its line number, and the replay goes on."""
    log = tmp_path / "log"
    log.write_text(f"{line}\n{MMAP} = {PLACED:#x}\n")
    result = replay(*SAMPLE_OPTS, str(log))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"not replayed: {why}" in result.stdout, result.stdout
    assert "(line 1)\n" in result.stdout
    assert "2 calls: 1 agree, 0 differ, 1 not replayed" in result.stdout


@pytest.mark.parametrize("prefix", [
    "12:00:01 ",  # strace -t
    "12:00:01.123456 ",  # -tt
    "1700000000.123456 ",  # -ttt
    "     0.000123 ",  # -r
    "[pid  4321] 12:00:01 ",  # -f -t, to the terminal
    "4321  1700000000.123456789 ",  # -f -ttt with -o, in nanoseconds
])
def test_timestamps_are_dropped(tmp_path: Path, prefix: str) -> None:
    log = tmp_path / "log"
    log.write_text(
        f"{prefix}{MMAP} = {PLACED:#x} <0.000012>\n"
        f"{prefix}munmap({PLACED:#x}, 4096 <unfinished ...>\n"
        f"{prefix}<... munmap resumed>) = 0\n"
        f"{prefix}mprotect({PLACED:#x}, 4096, PROT_READ) = -1 ENOMEM"
        " (Cannot allocate memory)\n")
    result = replay(*SAMPLE_OPTS, str(log))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 calls: 3 agree" in result.stdout


def test_a_log_without_calls(tmp_path: Path) -> None:
    """Not a success: nothing was compared."""
    log = tmp_path / "log"
    log.write_text("read(0, \"\", 4096) = 0\n+++ exited with 0 +++\n")
    result = replay(str(log))
    assert result.returncode == 2
    assert "no mmap, mmap2, munmap" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("encoding, path, shown", [
    ("utf-8", b"/tmp/a\xffb", "/tmp/a\\xffb"),
    ("ascii", b"/tmp/a\xffb", "/tmp/a\\xffb"),
    ("ascii", "/tmp/\u00e9".encode(), "/tmp/\\xe9"),
])
def test_paths_in_any_encoding(tmp_path: Path, encoding: str, path: bytes,
                               shown: str) -> None:
    """A path that is not UTF-8, or that the output's encoding lacks, is
    printed escaped."""
    log = tmp_path / "log"
    log.write_bytes(b"mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3<" + path +
                    b">, 0) = " + hex(PLACED).encode() + b"\n")
    result = run_python([str(SCRIPT), *SAMPLE_OPTS, str(log)],
                        PYTHONIOENCODING=encoding)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"3<{shown}>" in result.stdout
    assert "1 calls: 1 agree" in result.stdout


def test_missing_log_and_bad_option(tmp_path: Path) -> None:
    result = replay(str(tmp_path / "nothing"))
    assert result.returncode == 2
    assert "No such file or directory" in result.stderr
    log = tmp_path / "log"
    log.write_text("")
    result = replay("--opt", "colour=1", str(log))
    assert result.returncode == 2
    assert "unknown option 'colour'" in result.stderr
