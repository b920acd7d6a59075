"""A process for strace to attach to: it says "r" on standard output, waits
for a byte on standard input, then maps, protects, moves and unmaps memory
in the ways the model knows, and exits."""

import os
import sys

import noclobber as nc

from syscalls import ANON, PAGE, RW, libc


def work() -> None:
    a = libc.mmap(None, 16 * PAGE, RW, ANON, -1, 0)
    libc.mprotect(a + 4 * PAGE, 2 * PAGE, nc.PROT_READ)
    libc.munmap(a + 8 * PAGE, 2 * PAGE)
    libc.mmap(a + 8 * PAGE, PAGE, RW, ANON | nc.MAP_FIXED_NOREPLACE, -1, 0)
    libc.mmap(a, PAGE, RW, ANON | nc.MAP_FIXED_NOREPLACE, -1, 0)
    libc.mmap(a + 2 * PAGE, PAGE, nc.PROT_NONE, ANON | nc.MAP_FIXED, -1, 0)
    b = libc.mremap(a + 12 * PAGE, 4 * PAGE, 64 * PAGE, nc.MREMAP_MAYMOVE,
                    None)
    libc.mremap(b, 64 * PAGE, 8 * PAGE, 0, None)
    big = libc.mmap(None, 4 << 20, RW, ANON, -1, 0)
    with open(__file__, "rb") as f:
        text = libc.mmap(None, PAGE, nc.PROT_READ, nc.MAP_PRIVATE,
                         f.fileno(), 0)
    libc.sbrk(4 * PAGE)
    libc.sbrk(-2 * PAGE)
    for addr, length in ((a, 16 * PAGE), (b, 8 * PAGE), (big, 4 << 20),
                         (text, PAGE)):
        libc.munmap(addr, length)


def main() -> None:
    os.write(1, b"r")
    if os.read(0, 1) == b"g":
        work()
    sys.exit(0)


if __name__ == "__main__":
    main()
