"""Limits on what a file can make vecbinlog allocate: row images that would decode to far
more than the file holds, and events larger than ``max_event_bytes`` (peak RSS measured in a
child process: VmHWM)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

import vecbinlog
import vecbinlog.decode.rows
from vecbinlog.constants import EventType

from ..conftest import DATA, ROOT
from ..support import builder

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


def test_cell_budget_refuses_amplification(monkeypatch):
    sample = DATA / "sample" / "mariadb-bin.000001"
    # the sample's orders table: 7 row images x 5 columns = 35 cells
    assert vecbinlog.read_table(sample, "shop.orders").num_rows == 7
    monkeypatch.setattr(vecbinlog.decode.rows, "MAX_CELLS_PER_BYTE", 0)
    monkeypatch.setattr(vecbinlog.decode.rows, "MIN_CELLS_BUDGET", 30)
    with pytest.raises(vecbinlog.MalformedEventError, match="more than 30 cells") as err:
        vecbinlog.read_table(sample, "shop.orders")
    assert err.value.event_type.endswith("ROWS_EVENT_V1") and err.value.offset > 0


# -- max_event_bytes: what one event may cost ------------------------------------------------------

#: what a child prints: its result, then its peak RSS (VmHWM: ru_maxrss would carry the parent's
#: RSS over fork and exec)
_CHILD = textwrap.dedent("""
    import json, sys, warnings
    import vecbinlog
    out = {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with vecbinlog.open(sys.argv[1], **json.loads(sys.argv[2])) as log:
                out["rows"] = {k: t.num_rows for k, t in log.read_all().items()}
        out["warnings"] = [type(w.message).__name__ for w in caught]
    except vecbinlog.BinlogError as exc:
        out["error"] = [type(exc).__name__, exc.path, exc.offset, exc.event_type, str(exc)]
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            out["peak_mb"] = int(line.split()[1]) / 1024
    print(json.dumps(out))
""")


def _in_child(path: Path, **options) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), json.dumps(options)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _with_zeros_event(path: Path, claim: int) -> None:
    """The sample binlog, then a QUERY_EVENT whose header claims ``claim`` bytes, all of them
    there (zeros), gzip'd: 1.5 GB of it compresses to 7 MB."""
    head = builder.HEADER.pack(1, int(EventType.QUERY_EVENT), 1, claim, 0, 0)  # the event_size is the claim
    pack = zlib.compressobj(1, zlib.DEFLATED, 31)
    zeros = bytes(16 << 20)
    with open(path, "wb") as out:
        out.write(pack.compress(SAMPLE.read_bytes() + head))
        left = claim - len(head)
        while left > 0:
            out.write(pack.compress(zeros[: min(left, len(zeros))]))
            left -= len(zeros)
        out.write(pack.flush())


def test_an_event_over_max_event_bytes_is_refused_before_it_is_decompressed(tmp_path):
    hostile = tmp_path / "mariadb-bin.000001.gz"
    _with_zeros_event(hostile, 1536 << 20)
    got = _in_child(hostile)
    # the event starts where the sample ends (the file's own size), and is the sample's next event
    assert got["error"][:4] == ["MalformedEventError", str(hostile), SAMPLE.stat().st_size, "QUERY_EVENT"], got
    assert "max_event_bytes" in got["error"][4]
    assert got["peak_mb"] < 300, got  # was 3.3 GB: the 1.5 GB event decompressed and joined from pieces
    # a plain (memory-mapped) file refuses it too
    plain = tmp_path / "plain" / SAMPLE.name
    plain.parent.mkdir()
    plain.write_bytes(SAMPLE.read_bytes() + builder.HEADER.pack(1, int(EventType.QUERY_EVENT), 1, 1536 << 20, 0, 0))
    with pytest.raises(vecbinlog.MalformedEventError) as err:
        vecbinlog.open(plain).read_all()
    assert err.value.offset == SAMPLE.stat().st_size and err.value.event_type == "QUERY_EVENT"


def test_a_large_event_costs_its_own_size_and_max_event_bytes_bounds_it(tmp_path):
    hostile = tmp_path / "mariadb-bin.000001.gz"
    claim = 600 << 20
    _with_zeros_event(hostile, claim)
    refused = _in_child(hostile, max_event_bytes=256 << 20)
    assert refused["error"][0] == "MalformedEventError" and refused["error"][2] == SAMPLE.stat().st_size
    assert refused["peak_mb"] < 300, refused
    read = _in_child(hostile)  # under the default 1 GiB: read, at its own size and a segment or two
    with vecbinlog.open(SAMPLE) as log:
        assert read["rows"] == {k: t.num_rows for k, t in log.read_all().items()}
    assert read["peak_mb"] - refused["peak_mb"] < (claim + (64 << 20)) / 2**20, (read, refused)  # was 2.3x the claim


def test_max_event_bytes_is_checked():
    with pytest.raises(ValueError, match="max_event_bytes"):
        vecbinlog.open(SAMPLE, max_event_bytes=0)


def test_a_servers_40_mb_blob_row_decodes_from_a_gz_and_a_flipped_size_costs_no_more(
        mariadb_server, mariadb_globals, tmp_path):
    mariadb_globals(max_allowed_packet=str(64 << 20))
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS lim", "CREATE DATABASE lim",
              "CREATE TABLE lim.big (id INT PRIMARY KEY, b LONGBLOB)")
    path = s.capture_binlog("INSERT INTO big VALUES (1, REPEAT(SHA2('vecbinlog', 512), 312500))", database="lim")
    length, digest = s.query("SELECT LENGTH(b), SHA2(b, 256) FROM big", database="lim")[0]
    assert length == 40_000_000
    data = path.read_bytes()
    copy = tmp_path / (path.name + ".gz")
    copy.write_bytes(gzip.compress(data, 1))
    with vecbinlog.open(copy) as log:
        value = log.read_table("lim.big").column("b")[0].as_py()
    assert len(value) == length and hashlib.sha256(value).hexdigest() == digest
    read = _in_child(copy)
    refused = _in_child(copy, max_event_bytes=1 << 20)
    assert read["rows"] == {"lim.big": 1} and refused["error"][0] == "MalformedEventError"
    # the event, its value in Arrow, and a segment: not the pieces of the event and their join
    assert read["peak_mb"] - refused["peak_mb"] < 3 * 40 + 32, (read, refused)

    # a flipped bit in event_size (the event after the FORMAT_DESCRIPTION_EVENT) claims 512 MB more:
    # the file ends inside it (a TruncatedWarning), read no further than the file
    second = 4 + int.from_bytes(data[4 + 9: 4 + 13], "little")
    for bit, outcome in ((29, "TruncatedWarning"), (30, "MalformedEventError")):
        flipped = bytearray(data)
        flipped[second + 12] ^= 1 << (bit - 24)
        bad = tmp_path / f"bit{bit}" / (path.name + ".gz")
        bad.parent.mkdir()
        bad.write_bytes(gzip.compress(bytes(flipped), 1))
        got = _in_child(bad)
        assert outcome in got.get("warnings", []) or got.get("error", [None])[0] == outcome, got
        assert got.get("error", [None, None, second])[2] == second
        # what the file holds (40 MB) and a segment at most, not the claim
        assert got["peak_mb"] - refused["peak_mb"] < 40 + 64 and got["peak_mb"] < 300, (got, refused)
