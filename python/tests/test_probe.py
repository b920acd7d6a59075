"""probe(): the kernel probe, against /proc, the tool and the matrix."""

import json
import mmap
import os
import subprocess
from pathlib import Path

import pytest

import noclobber as nc
from noclobber import _probe


def test_page_size_and_mmap_min_addr() -> None:
    result = nc.probe()
    assert result.page_size == mmap.PAGESIZE
    text = Path("/proc/sys/vm/mmap_min_addr").read_text()
    assert result.mmap_min_addr == int(text)


def test_agrees_with_the_tool() -> None:
    tool = os.environ.get("NOCLOBBER_TOOL")
    if not tool:
        pytest.skip("NOCLOBBER_TOOL is not set (tests/python.sh sets it)")
    out = subprocess.run([tool, "probe", "--json"], capture_output=True,
                         text=True, check=True).stdout
    report = json.loads(out)
    result = nc.probe()
    assert result.noreplace_name == report["noreplace"]
    assert str(result.noreplace) == report["noreplace"]
    assert result.procmap_query == report["procmap_query"]
    assert result.page_size == int(report["page_size"], 16)
    assert result.mmap_min_addr == int(report["mmap_min_addr"], 16)


def test_matches_the_expected_behaviour() -> None:
    expect = os.environ.get("NCB_EXPECT_NOREPLACE", "")
    if not expect or expect == "any":
        pytest.skip("NCB_EXPECT_NOREPLACE names no expected behaviour")
    assert nc.probe().noreplace_name == expect


@pytest.mark.parametrize("member", list(nc.Noreplace))
def test_names_are_the_librarys(member: nc.Noreplace) -> None:
    assert nc.noreplace_name(member) == member.name.lower()
    assert str(member) == member.name.lower()


def test_unknown_values() -> None:
    assert nc.noreplace_name(0) == "unknown"
    assert nc.noreplace_name(99) == "unknown"
    assert _probe.noreplace(99) == 99
    assert _probe.noreplace(1) is nc.Noreplace.HONOURED
    with pytest.raises(OverflowError):
        nc.noreplace_name(1 << 40)


def test_probe_is_frozen() -> None:
    result = nc.probe()
    with pytest.raises(AttributeError):
        result.page_size = 1  # type: ignore[misc]
    assert nc.probe() == result
