"""One mapping, as /proc/PID/maps lists it (struct ncb_mapping)."""

import os
from dataclasses import dataclass

from ._consts import VALUES
from ._lib import MappingStruct

_READ = VALUES["PROT_READ"]
_WRITE = VALUES["PROT_WRITE"]
_EXEC = VALUES["PROT_EXEC"]


@dataclass(frozen=True)
class Mapping:
    """A mapping [start, end): the fields of struct ncb_mapping.

    path is the file's path (with " (deleted)" if unlinked), a name such
    as "[heap]" or "[stack]", or "" for anonymous memory; bytes that are
    not UTF-8 are kept as os.fsdecode keeps them (os.fsencode gives them
    back).
    """

    start: int
    end: int
    offset: int
    inode: int
    dev_major: int
    dev_minor: int
    prot: int
    shared: bool
    path: str

    @classmethod
    def from_struct(cls, m: MappingStruct) -> "Mapping":
        """A copy of a struct ncb_mapping the library filled in."""
        return cls(start=m.start, end=m.end, offset=m.offset,
                   inode=m.inode, dev_major=m.dev_major,
                   dev_minor=m.dev_minor, prot=m.prot,
                   shared=bool(m.shared),
                   path=os.fsdecode(m.path) if m.path else "")

    @property
    def length(self) -> int:
        """end - start, in bytes."""
        return self.end - self.start

    @property
    def dev(self) -> int:
        """The device number, as os.stat's st_dev gives it."""
        return os.makedev(self.dev_major, self.dev_minor)

    @property
    def perms(self) -> str:
        """The permissions as /proc/PID/maps prints them: "r-xp"."""
        return "".join((
            "r" if self.prot & _READ else "-",
            "w" if self.prot & _WRITE else "-",
            "x" if self.prot & _EXEC else "-",
            "s" if self.shared else "p",
        ))

    def __str__(self) -> str:
        """The mapping as a line of /proc/PID/maps."""
        return (f"{self.start:08x}-{self.end:08x} {self.perms} "
                f"{self.offset:08x} {self.dev_major:02x}:{self.dev_minor:02x}"
                f" {self.inode} {self.path}").rstrip(" ")

    def __contains__(self, addr: int) -> bool:
        """Whether addr lies in [start, end)."""
        return self.start <= addr < self.end
