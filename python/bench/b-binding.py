#!/usr/bin/env python3
"""What the Python binding costs: bench/b-model's operations (map+unmap of
a free page between two areas, a protection change there and back, a gap
search past every area) on models of 1,000 and 65,000 one-page areas,
through AddressSpace and through the bare ctypes functions; and reading
this process's mappings with maps() against parsing /proc/self/maps in
Python.  Medians of 9 runs, microseconds per operation."""

import ctypes
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, List

import noclobber as nc
from noclobber._lib import LIB

PG = 4096
BASE = 1 << 32
OPS = 2000
REPS = 9
ANON = nc.MAP_PRIVATE | nc.MAP_ANONYMOUS


def median_us(op: Callable[[int], None], picks: List[int]) -> float:
    """The median over REPS runs of OPS calls of op, in microseconds."""
    runs = []
    for _ in range(REPS):
        start = time.perf_counter()
        for i in picks:
            op(i)
        runs.append((time.perf_counter() - start) / len(picks) * 1e6)
    return statistics.median(runs)


def build(areas: int) -> nc.AddressSpace:
    """A model with an area at every other page from BASE."""
    space = nc.AddressSpace(page_size=PG, mmap_min_addr=0x10000,
                            task_size=0x7ffffffff000)
    for i in range(areas):
        space.mmap(BASE + 2 * i * PG, PG, nc.PROT_READ, ANON | nc.MAP_FIXED)
    return space


def binding(space: nc.AddressSpace, areas: int) -> List[float]:
    flags = ANON | nc.MAP_FIXED_NOREPLACE
    gap = BASE + (2 * areas - 1) * PG

    def map_unmap(i: int) -> None:
        space.mmap(BASE + (2 * i + 1) * PG, PG, nc.PROT_WRITE, flags)
        space.munmap(BASE + (2 * i + 1) * PG, PG)

    def protect(i: int) -> None:
        space.mprotect(BASE + 2 * i * PG, PG, nc.PROT_NONE)
        space.mprotect(BASE + 2 * i * PG, PG, nc.PROT_READ)

    def gap_search(i: int) -> None:
        if space.find_free(BASE, 0, 2 * PG, 0, nc.Place.LOWEST) != gap:
            raise AssertionError("wrong gap")

    picks = [random.randrange(areas - 1) for _ in range(OPS)]
    return [median_us(op, picks) for op in (map_unmap, protect, gap_search)]


def bare(space: nc.AddressSpace, areas: int) -> List[float]:
    handle = space._handle()
    got = ctypes.c_uint64()
    ref = ctypes.byref(got)
    flags = ANON | nc.MAP_FIXED_NOREPLACE

    def map_unmap(i: int) -> None:
        LIB.ncb_as_mmap(handle, BASE + (2 * i + 1) * PG, PG, nc.PROT_WRITE,
                        flags, 0, 0, ref)
        LIB.ncb_as_munmap(handle, BASE + (2 * i + 1) * PG, PG)

    def protect(i: int) -> None:
        LIB.ncb_as_mprotect(handle, BASE + 2 * i * PG, PG, nc.PROT_NONE)
        LIB.ncb_as_mprotect(handle, BASE + 2 * i * PG, PG, nc.PROT_READ)

    def gap_search(i: int) -> None:
        LIB.ncb_as_find_free(handle, BASE, 0, 2 * PG, 0, 1, ref)

    picks = [random.randrange(areas - 1) for _ in range(OPS)]
    return [median_us(op, picks) for op in (map_unmap, protect, gap_search)]


def parse_maps() -> int:
    count = 0
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split(None, 5)
        int(parts[0].split("-")[0], 16)
        count += 1
    return count


def reading() -> List[float]:
    runs = {"maps()": lambda: sum(1 for _ in nc.maps()),
            "parse": parse_maps}
    result = []
    for op in runs.values():
        times = []
        for _ in range(REPS):
            start = time.perf_counter()
            for _ in range(100):
                op()
            times.append((time.perf_counter() - start) / 100 * 1e6)
        result.append(statistics.median(times))
    return result


def main() -> int:
    random.seed(1)
    print(f"Python {sys.version.split()[0]}: us per operation "
          f"(median of {REPS} runs)\n")
    print("    areas op              binding      ctypes")
    for areas in (1000, 65000):
        with build(areas) as space:
            ours, theirs = binding(space, areas), bare(space, areas)
        for k, op in enumerate(("map+unmap", "protect x2", "gap search")):
            label = f"{areas:>9}" if k == 0 else " " * 9
            print(f"{label} {op:<14} {ours[k]:>8.2f} {theirs[k]:>11.2f}")
    maps_us, parse_us = reading()
    print(f"\nthis process's {parse_maps()} mappings: maps() {maps_us:.0f} us,"
          f" /proc/self/maps parsed in Python {parse_us:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
