"""Kernels never read outside the array they are given (issue 51, item 2).

Each compiled entry point that reads a binlog buffer at offsets its caller gives checks them
against the buffer before its loop (:func:`vecbinlog.jit.check_spans`); a violation is a
:class:`~vecbinlog.MalformedEventError`, never a read. The offsets here are the real ones of
the sample binlog (a MariaDB server's), the buffers its bytes cut short or emptied, as a file
closed under a task left them before tasks held their own bytes (the SIGSEGV of the issue).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vecbinlog
from vecbinlog.binlog.checksum import first_mismatch
from vecbinlog.binlog.file import BinlogFile, Window, checksums_match
from vecbinlog.binlog.gathered import gather
from vecbinlog.binlog.headers import walk_headers
from vecbinlog.binlog.spec import CHECKSUM_LEN, MAGIC_LEN
from vecbinlog.binlog.transactions import StartScan
from vecbinlog.constants import EventType
from vecbinlog.decode.rows import PlacedRun
from vecbinlog.groups import group_ranges
from vecbinlog.jit import check_spans
from vecbinlog.log.config import ReadConfig
from vecbinlog.log.logwalk import LogWalk

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample" / "mariadb-bin.000001"
SHORT = "are not all inside"


@pytest.fixture(scope="module")
def sample():
    """The sample's bytes, its events (one segment) and a rows event's layout."""
    with BinlogFile(str(SAMPLE)) as f:
        step = next(LogWalk([f], ReadConfig.build()).steps())
        buf = np.array(f.whole.buf)  # a copy: the file is closed after
    return buf, step


def _cut(buf: np.ndarray, n: int) -> np.ndarray:
    return buf[:n].copy()


@pytest.mark.parametrize("size", [0, 1000, -1], ids=["empty", "cut", "one byte short"])
def test_checksums_of_events_outside_the_buffer_are_refused(sample, size):
    buf, step = sample
    index = step.index
    start = index.offset[index.checksum]
    end = start + index.event_size[index.checksum].astype(np.int64) - CHECKSUM_LEN
    assert first_mismatch(buf, start, end) == -1  # the whole file: every CRC32 matches (the server's)
    short = _cut(buf, len(buf) - 1 if size == -1 else size)
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        first_mismatch(short, start, end)
    window = Window(step.file, short, 0)  # what a closed file's bytes once were: a task's CRC check
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        checksums_match(window, index)


def test_negative_and_reversed_ranges_are_refused():
    buf = np.zeros(100, np.uint8)
    with pytest.raises(vecbinlog.MalformedEventError, match="from -1 to 10"):
        check_spans(len(buf), np.array([-1]), np.array([10]), "x")
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        check_spans(len(buf), np.array([50]), np.array([40]), "x")
    check_spans(len(buf), np.array([0, 90]), np.array([10, 100]), "x")  # inside: no error


def test_a_header_walk_past_its_buffer_is_refused(sample):
    buf, _ = sample
    index, _, stop = walk_headers(buf, MAGIC_LEN, len(buf), len(buf))
    assert stop is None and int(index.offset[-1] + index.event_size[-1]) == len(buf)
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        walk_headers(_cut(buf, 100), MAGIC_LEN, len(buf), len(buf))  # the file's size, a 100-byte buffer


def test_events_gathered_from_outside_their_buffer_are_refused(sample):
    buf, step = sample
    short = Window(step.file, _cut(buf, len(buf) // 2), 0)
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        gather([(short, step.index)], [0], [str(SAMPLE)], ["mariadb-bin.000001"])


def test_table_maps_grouped_outside_their_buffer_are_refused(sample):
    buf, step = sample
    tm = step.index.type_code == EventType.TABLE_MAP_EVENT
    start, end = step.index.offset[tm], step.index.body_end[tm]
    first, _ = group_ranges(buf, start, end)
    assert len(first) == len({bytes(buf[a:b]) for a, b in zip(start.tolist(), end.tolist())})
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        group_ranges(_cut(buf, int(start.max())), start, end)


def test_rows_events_placed_outside_their_buffer_are_refused(sample):
    buf, step = sample
    rows = step.index.take(step.rows_pos[:1])
    layout = step.maps.layouts[int(step.layout[0])]
    assert sum(len(b) for b in PlacedRun(Window(step.file, buf, 0), rows, layout).batches()) > 0
    short = Window(step.file, _cut(buf, int(rows.offset[0]) + 20), 0)
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        PlacedRun(short, rows, layout)


def test_transactions_followed_outside_their_buffer_are_refused(sample):
    buf, step = sample
    scan = StartScan()
    starts = scan.feed(Window(step.file, buf, 0), step.index, len(buf))
    assert len(starts) > 0
    with pytest.raises(vecbinlog.MalformedEventError, match=SHORT):
        StartScan().feed(Window(step.file, _cut(buf, 0), 0), step.index, len(buf))
