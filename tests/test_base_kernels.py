"""The base layer's compiled helpers against Python's own answers: integers as decimal text
(vecbinlog.digits, what GTID texts are made with) and byte strings grouped by equality
(vecbinlog.groups.group_ranges, what TABLE_MAPs are deduplicated with); and the room kernels
write into (vecbinlog.jit.sparse_empty) against the pages the OS says the process holds."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from vecbinlog.digits import joined_texts
from vecbinlog.groups import group_ranges


def test_joined_texts_are_pythons_decimal_texts() -> None:
    rng = np.random.default_rng(5)
    edges = [0, 1, 9, 10, 99, 100, 10**18 - 1, 10**18, 2**63 - 1]
    unsigned = np.array(edges + [2**64 - 1] + rng.integers(0, 2**63, 200).tolist(), np.uint64)
    small = np.resize(np.array([0, 7, 4294967295], np.uint32), len(unsigned))
    signed = np.resize(np.array([-1, 0, -(2**63), 2**63 - 1, -10], np.int64), len(unsigned))
    texts = joined_texts([small, unsigned, signed], b"-")
    assert texts.type == pa.string()
    assert texts.to_pylist() == [f"{a}-{b}-{c}" for a, b, c in zip(small.tolist(), unsigned.tolist(), signed.tolist())]


def test_joined_texts_with_a_prefix_per_row() -> None:
    codes = np.array([1, 0, 2, 1])
    gno = np.array([5, 123456789, 1, 0], np.int64)
    prefix = [b"3e11fa47-71ca-11e1-9e33-c80aa9429562:", b"x:", b""]
    texts = joined_texts([gno], prefix=prefix, codes=codes)
    assert texts.to_pylist() == [prefix[c].decode() + str(g) for c, g in zip(codes.tolist(), gno.tolist())]
    assert joined_texts([np.zeros(0, np.uint64)], b"-").to_pylist() == []
    with pytest.raises(ValueError, match="one byte"):
        joined_texts([gno, gno], b", ")


def test_group_ranges_groups_equal_bytes_in_order_of_appearance() -> None:
    rng = np.random.default_rng(6)
    words = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in (0, 1, 7, 8, 31, 32, 33, 200, 200)]
    words[8] = words[7][:-1] + bytes([words[7][-1] ^ 1])  # the same length, the last byte differs
    picks = rng.integers(0, len(words), 500).tolist()
    buf = np.frombuffer(b"".join(words[k] for k in picks), np.uint8)
    lengths = np.array([len(words[k]) for k in picks], np.int64)
    end = np.cumsum(lengths)
    start = end - lengths
    first, inverse = group_ranges(buf, start, end)
    seen: dict[bytes, int] = {}
    expected = [seen.setdefault(words[k], len(seen)) for k in picks]
    assert inverse.tolist() == expected
    assert [bytes(buf[start[f]:end[f]]) for f in first.tolist()] == list(seen)


def _resident_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="resident memory is read from Linux's /proc")
def test_sparse_room_holds_only_the_pages_written() -> None:
    """jit.sparse_empty: room for a walk (a region per column, of which the first values are
    written) holds the pages written, not a huge page per region. np.empty of 4 MB or more asks
    for huge pages (numpy's madvise): 64 regions of 2 MB, 16 values written in each, then hold
    64 huge pages (128 MB) where THP is on, against 64 small pages here."""
    from vecbinlog.jit import HUGE_PAGE_HINT_BYTES, sparse_empty

    small = sparse_empty((3, 5), np.int64)
    assert small.shape == (3, 5) and small.base is None  # (under 4 MB: numpy's own block)
    room = sparse_empty((64, 1 << 18), np.int64)  # 128 MB
    assert room.shape == (64, 1 << 18) and room.dtype == np.int64 and room.flags.writeable
    assert room.nbytes >= HUGE_PAGE_HINT_BYTES and room.base is not None
    before = _resident_bytes()
    room[:, :16] = np.arange(16)
    grown = _resident_bytes() - before
    assert (room[:, :16] == np.arange(16)).all()
    assert grown < 16 << 20, grown  # 64 pages of 4 KiB (and what else the process did meanwhile)
