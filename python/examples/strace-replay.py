#!/usr/bin/env python3
"""Replay an strace log of memory calls into a noclobber.AddressSpace.

    strace -y -e trace=memory -o LOG PROGRAM...
    strace-replay.py LOG

Each mmap, munmap, mprotect, pkey_mprotect, mremap and brk of the log is
applied to the model, and the model's answer (an address, or an error) is
printed beside the kernel's: "agrees" or "DIFFERS".  Where an mmap differs,
the model takes the kernel's placement and goes on from there.

The model starts empty, or from the layout the process had when the log
began: --maps FILE, a copy of /proc/PID/maps.  To record both for a running
process (stopped in a read, say):

    strace -y -e trace=memory -o LOG -p PID &    # attached first,
    cat /proc/PID/maps > MAPS                    # then the layout

Top-down placements depend on mmap_base, which /proc does not show: with
--maps it is taken to be the end of the highest mapping below [stack] other
than [vvar] and [vdso] (where the dynamic linker's image ends, the first
thing the kernel placed); --opt mmap_base=ADDR gives it, and --opt sets
the model's other options (page_size, task_size, release for another
kernel's rules, ...) likewise, to replay another machine's log.  The log should be of one
process: a call's pid prefix is read and dropped, and a call interrupted by
another thread's ("<unfinished ...>", "<... resumed>") is joined again.
Timestamps (strace -t, -tt, -ttt, -r) are read and dropped too.

A call that cannot be replayed (an unknown flag, too few arguments, a
result the model cannot take) is reported as "not replayed: WHY (line N)"
and the replay goes on.  Bytes of the log that are not UTF-8 (in a path)
are printed as \\xNN.

Exit status: 0 if the model agrees with every call, 1 if it differs on
some or some could not be replayed, 2 if the log or the layout cannot be
read or the log has no memory call.
"""

import argparse
import errno
import io
import os
import re
import sys
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import noclobber

# A pid (strace -f: "[pid N] ", or "N " with -o), then the timestamps
# of -t (12:00:01), -tt (12:00:01.123456), -ttt and -r (seconds.micro).
_PREFIX = (r"\s*(?:\[pid\s+(?P<pid>\d+)\]\s+|(?P<pid2>\d+)\s+)?"
           r"(?:\d+(?::\d\d){2}(?:\.\d+)?\s+|\d+\.\d+\s+)*")
_LINE = re.compile(
    _PREFIX + r"(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\w+)"
    r"(?:\s+(?P<err>E[A-Z0-9]+))?")
_UNFINISHED = re.compile(
    _PREFIX + r"(?P<head>\w+\(.*?)\s*<unfinished \.\.\.>$")
_RESUMED = re.compile(
    _PREFIX + r"<\.\.\. (?P<name>\w+) resumed>\s?(?P<tail>.*)$")
_CLOSERS = {"<": ">", "[": "]", "{": "}", "(": ")"}


class LogError(Exception):
    """A line of the log that looks like a replayed call but cannot be
    read."""


# The replayed calls, and how many arguments strace prints for each.
_ARGS = {"mmap": (6,), "mmap2": (6,), "munmap": (2,), "mprotect": (3,),
         "pkey_mprotect": (4,), "mremap": (4, 5), "brk": (1,)}
# What can go wrong replaying a call: a line that cannot be read, or a
# result the model cannot take (a kernel's placement it refuses, say).
_PROBLEMS = (LogError, ValueError, IndexError, OverflowError, OSError)


@dataclass
class Call:
    """One system call of the log."""

    line: int
    name: str
    args: List[str]
    ret: int  # the address or value returned; -1 with err
    err: Optional[str]  # "EEXIST", ... or None
    text: str
    problem: Optional[str] = None  # why the line cannot be replayed


def split_args(args: str) -> List[str]:
    """The arguments of a call, split at the commas outside brackets."""
    parts: List[str] = []
    depth: List[str] = []
    start = 0
    for i, char in enumerate(args):
        if depth and char == depth[-1]:
            depth.pop()
        elif char in _CLOSERS:
            depth.append(_CLOSERS[char])
        elif char == "," and not depth:
            parts.append(args[start:i].strip())
            start = i + 1
    parts.append(args[start:].strip())
    return parts


def joined_lines(lines: Iterable[str]) -> Iterator[Tuple[int, str]]:
    """The log's lines, each interrupted call joined to its resumption."""
    pending: Dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        unfinished = _UNFINISHED.match(line)
        if unfinished:
            pid = unfinished["pid"] or unfinished["pid2"] or ""
            pending[pid] = unfinished["head"]
            continue
        resumed = _RESUMED.match(line)
        if resumed:
            pid = resumed["pid"] or resumed["pid2"] or ""
            line = pending.pop(pid, resumed["name"] + "(") + resumed["tail"]
        yield number, line


def read_log(lines: Iterable[str]) -> List[Call]:
    """The replayed calls of a log."""
    calls = []
    for number, line in joined_lines(lines):
        match = _LINE.match(line)
        if match and match["name"] in _ARGS:
            calls.append(make_call(number, line, match))
    return calls


def make_call(number: int, line: str, match: "re.Match[str]") -> Call:
    """The call a line of the log matched; its problem if it cannot be
    replayed (an unreadable result, too few or too many arguments)."""
    name, args = match["name"], split_args(match["args"])
    problem = None
    if len(args) not in _ARGS[name]:
        counts = " or ".join(str(n) for n in _ARGS[name])
        problem = f"{name} takes {counts} arguments, not {len(args)}"
    try:
        ret = int(match["ret"], 0)
    except ValueError:
        ret, problem = 0, f"cannot read the result {match['ret']}"
    return Call(number, name, args, ret, match["err"], line, problem)


def number(arg: str) -> int:
    """An address, length or offset as strace prints it."""
    if arg == "NULL":
        return 0
    try:
        return int(arg, 0)
    except ValueError:
        raise LogError(f"not a number: {arg}") from None


def flags(arg: str) -> int:
    """PROT_READ|PROT_WRITE, MAP_PRIVATE|0x40, ... as a number."""
    value = 0
    for name in arg.split("|"):
        if re.fullmatch(r"(0x)?[0-9a-fA-F]+", name):
            value |= int(name, 0)
        elif name.startswith(("PROT_", "MAP_", "MREMAP_")) and \
                hasattr(noclobber, name):
            value |= getattr(noclobber, name)
        else:
            raise LogError(f"unknown flag {name}")
    return value


def fd_path(arg: str) -> Optional[str]:
    """The file of a descriptor argument: its path as strace -y prints it
    (3</usr/lib/libc.so.6>), /proc/self/fd/N without -y, None for -1."""
    match = re.fullmatch(r"(-?\d+)(?:<(.*)>)?", arg)
    if not match:
        raise LogError(f"not a descriptor: {arg}")
    if int(match[1]) < 0:
        return None
    return match[2] if match[2] is not None else f"/proc/self/fd/{match[1]}"


class Replay:
    """The model, and the calls replayed into it so far."""

    def __init__(self, space: noclobber.AddressSpace) -> None:
        self.space = space
        self.agree = 0
        self.differ = 0
        self.unreadable = 0

    def file(self, path: Optional[str]) -> int:
        """The model's number for a file, keyed by its device and inode
        here if it exists here."""
        if path is None:
            return 0
        try:
            st = os.stat(path)
        except OSError:
            return self.space.file(path)
        return self.space.file(path, os.major(st.st_dev),
                               os.minor(st.st_dev), st.st_ino)

    def mmap(self, call: Call) -> int:
        """mmap or mmap2 (whose offset strace prints in bytes)."""
        addr, length, prot, flag, fd, offset = call.args
        file = self.file(fd_path(fd))
        args = (number(addr), number(length), flags(prot), flags(flag))
        return self.space.mmap(*args, file, number(offset))

    def follow(self, call: Call, model: Optional[int]) -> None:
        """After an mmap that differs: undo the model's, make the
        kernel's."""
        addr, length, prot, flag, fd, offset = call.args
        size = number(length)
        if model is not None:
            self.space.munmap(model, size)
        if call.err is None:
            fixed = flags(flag) & ~noclobber.MAP_FIXED_NOREPLACE
            self.space.mmap(call.ret, size, flags(prot),
                            fixed | noclobber.MAP_FIXED,
                            self.file(fd_path(fd)), number(offset))

    def apply(self, call: Call) -> int:
        """The call on the model: what it returns."""
        if call.problem:
            raise LogError(call.problem)
        a = call.args
        if call.name in ("mmap", "mmap2"):
            return self.mmap(call)
        if call.name == "munmap":
            self.space.munmap(number(a[0]), number(a[1]))
            return 0
        if call.name in ("mprotect", "pkey_mprotect"):
            self.space.mprotect(number(a[0]), number(a[1]), flags(a[2]))
            return 0
        if call.name == "mremap":
            new = number(a[4]) if len(a) > 4 else 0
            return self.space.mremap(number(a[0]), number(a[1]),
                                     number(a[2]), flags(a[3]), new)
        return self.space.brk(number(a[0]))

    def verdict(self, call: Call) -> str:
        """Replay one call: the kernel's answer, the model's, whether
        they agree."""
        try:
            result: Optional[int] = self.apply(call)
            model = f"{result:#x}"
        except OSError as err:
            result = None
            model = "-1 " + errno.errorcode.get(err.errno or 0, "?")
        kernel = f"-1 {call.err}" if call.err else f"{call.ret:#x}"
        if model == kernel:
            self.agree += 1
            return f"kernel {kernel}, model {model}: agrees"
        if call.name in ("mmap", "mmap2"):
            try:
                self.follow(call, result)
            except _PROBLEMS as err:
                raise LogError(f"kernel {kernel}, model {model}, and the "
                               "model cannot map where the kernel did: "
                               f"{reason(err)}") from None
        self.differ += 1
        return f"kernel {kernel}, model {model}: DIFFERS"

    def replay(self, call: Call) -> str:
        """Replay one call; the report's lines for it."""
        try:
            verdict = self.verdict(call)
        except _PROBLEMS as err:
            self.unreadable += 1
            verdict = f"not replayed: {reason(err)} (line {call.line})"
        return f"{call.line}: {call.text}\n    {verdict}"


def reason(err: Exception) -> str:
    """What an exception says, or its type if it says nothing."""
    return str(err) or type(err).__name__


def guess_mmap_base(maps: str, opts: Dict[str, int]) -> int:
    """The end of the highest mapping below [stack] other than [vvar]
    and [vdso]; 0 if there is none."""
    with noclobber.AddressSpace(**opts) as space:
        space.load(maps)
        mappings = list(space)
    stack = next((m.start for m in mappings if m.path == "[stack]"), 1 << 64)
    below = [m.end for m in mappings if m.end <= stack and
             not m.path.startswith(("[vvar", "[vdso"))]
    return max(below, default=0)


def first_break(calls: List[Call]) -> int:
    """The break the first brk of the log returned, 0 without one."""
    return next((c.ret for c in calls
                 if c.name == "brk" and not c.err and not c.problem), 0)


def make_space(maps: Optional[str], opts: Dict[str, int],
               calls: List[Call]) -> noclobber.AddressSpace:
    """The model as the log begins."""
    opts = dict(opts)
    if maps and "mmap_base" not in opts:
        opts["mmap_base"] = guess_mmap_base(maps, opts)
    if not (maps and "[heap]" in maps):
        brk = first_break(calls)
        opts.setdefault("start_brk", brk)
        opts.setdefault("brk", brk)
    space = noclobber.AddressSpace(**opts)
    if maps:
        space.load(maps)
    return space


def parse_args(argv: List[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        description="Replay an strace log of memory calls into noclobber's "
        "model of the address space, and say where the model agrees with "
        "the kernel.")
    parser.add_argument("log", help="strace -e trace=memory output")
    parser.add_argument("--maps", help="the process's /proc/PID/maps when "
                        "the log began")
    parser.add_argument("--opt", action="append", default=[],
                        type=option, metavar="NAME=VALUE",
                        help="an option of the model (noclobber.AddressSpace"
                        "), such as page_size=4096 or mmap_base=0x7f0000000"
                        "000; mmap_base is guessed from --maps if not given")
    return parser.parse_args(argv)


def option(arg: str) -> Tuple[str, int]:
    """NAME=VALUE as (name, number)."""
    name, _, value = arg.partition("=")
    return name, int(value, 0)


def shown(text: str) -> str:
    """text with the bytes of the log that are not UTF-8 (kept by
    surrogateescape) as \\xNN, so that any output encoding takes it."""
    data = text.encode("utf-8", "surrogateescape")
    return data.decode("utf-8", "backslashreplace")


def main(argv: List[str]) -> int:
    """Replay the log; the exit status."""
    args = parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):  # say, ASCII: \uNNNN
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        with open(args.log, encoding="utf-8", errors="surrogateescape") as f:
            calls = read_log(f)
        maps = None
        if args.maps:
            with open(args.maps, encoding="utf-8",
                      errors="surrogateescape") as f:
                maps = f.read()
        replay = Replay(make_space(maps, dict(args.opt), calls))
        if not calls:
            raise LogError(f"{args.log}: no {', '.join(_ARGS)} call in the "
                           "log (strace -e trace=memory)")
        for call in calls:
            print(shown(replay.replay(call)))
    except (OSError, LogError, TypeError, OverflowError) as err:
        print(f"strace-replay: {shown(str(err))}", file=sys.stderr)
        return 2
    print(f"{len(calls)} calls: {replay.agree} agree, {replay.differ} "
          f"differ, {replay.unreadable} not replayed; "
          f"{len(replay.space)} mappings at the end")
    return 1 if replay.differ or replay.unreadable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
