"""Files cut short: a compressed copy cut anywhere reads as the plain file cut where its codec
stops giving bytes, and a file that shrinks while it is read ends with a vecbinlog error, not a
signal.

The independent sources: the codecs' own command-line tools (``gzip -dc``, ``zstd -dc``,
``bzip2 -dc``, ``lz4 -dc``) say how many bytes a cut compressed file still gives; the plain
file cut at that length is read as files cut short are (every complete event decoded, a
TruncatedWarning), and the end of its last complete event is found by walking its headers
with the reference decoder (tests/support/reference.py). For the shrinking file, a MariaDB
server writes the binlog and a child process reads it while this test truncates it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import vecbinlog

from ..conftest import DATA, ROOT

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
#: codec -> its command-line tool
TOOLS = {"gzip": "gzip", "zstd": "zstd", "bz2": "bzip2", "lz4": "lz4"}
SUFFIX = {"gzip": ".gz", "zstd": ".zst", "bz2": ".bz2", "lz4": ".lz4"}


def _framed(data: bytes, codec: str, frame: int = 512) -> bytes:
    """``data`` compressed as one frame (gzip member, bzip2 stream...) per ``frame`` bytes, as
    parallel compressors (pigz, pbzip2, zstd -T) write them: a cut file still holds whole frames."""
    out = b""
    for i in range(0, len(data), frame):
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, codec) as stream:
            stream.write(data[i: i + frame])
        out += sink.getvalue().to_pybytes()
    return out


def _tool_output(codec: str, compressed: bytes) -> bytes:
    tool = shutil.which(TOOLS[codec])
    if tool is None:
        pytest.skip(f"{TOOLS[codec]} is not installed")
    done = subprocess.run([tool, "-dc"], input=compressed, capture_output=True, timeout=60)
    assert done.returncode != 0, "the cut file decompressed without an error"
    return done.stdout


def _read(path: Path, **options) -> tuple[dict[str, list], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(path, **options) as log:
            rows = {name: t.to_pylist() for name, t in log.read_all().items()}
    return rows, [str(w.message) for w in caught if issubclass(w.category, vecbinlog.TruncatedWarning)]


def _last_complete_end(data: bytes) -> int:
    """Where the last event wholly inside ``data`` ends (a walk of ``event_size`` fields)."""
    pos = 4
    while pos + 19 <= len(data):
        size = int.from_bytes(data[pos + 9: pos + 13], "little")
        if pos + size > len(data):
            break
        pos += size
    return pos


@pytest.mark.parametrize("codec", list(TOOLS))
def test_a_cut_compressed_file_reads_as_the_plain_file_cut_where_its_codec_stops(tmp_path, codec):
    data = SAMPLE.read_bytes()
    packed = _framed(data, codec)
    seen = set()
    for cut in (len(packed) * k // 8 for k in range(2, 8)):
        given = _tool_output(codec, packed[:cut])
        assert data.startswith(given)
        if len(given) < 200 or len(given) in seen:  # not yet the first event, or the same length again
            continue
        seen.add(len(given))
        plain = tmp_path / f"plain-{cut}" / SAMPLE.name
        plain.parent.mkdir()
        plain.write_bytes(given)
        copy = tmp_path / f"cut-{cut}" / (SAMPLE.name + SUFFIX[codec])
        copy.parent.mkdir()
        copy.write_bytes(packed[:cut])
        expected, _ = _read(plain)
        got, told = _read(copy)
        assert got == expected, (codec, cut)
        end = _last_complete_end(given)
        assert len(told) == 1 and f"offset {end}" in told[0] and "truncated" in told[0], told
        with pytest.raises(vecbinlog.TruncatedError) as err:
            _read(copy, strict=True)
        assert err.value.offset == end and err.value.path == str(copy)
    assert len(seen) >= 3, seen


def test_a_compressed_file_cut_before_its_first_event_is_a_truncated_error(tmp_path):
    packed = _framed(SAMPLE.read_bytes(), "gzip", frame=4096)
    copy = tmp_path / (SAMPLE.name + ".gz")
    copy.write_bytes(packed[:40])
    assert len(_tool_output("gzip", packed[:40])) < 100
    with pytest.raises(vecbinlog.TruncatedError) as err:
        vecbinlog.open(copy)
    assert err.value.path == str(copy) and "truncated" in str(err.value)


def test_a_corrupt_compressed_file_is_a_corrupt_archive_error_after_what_it_gives(tmp_path):
    data = SAMPLE.read_bytes()
    packed = bytearray(_framed(data, "gzip"))
    packed[len(packed) // 2] ^= 0xFF
    copy = tmp_path / (SAMPLE.name + ".gz")
    copy.write_bytes(bytes(packed))
    given = subprocess.run(["gzip", "-dc"], input=bytes(packed), capture_output=True).stdout
    with pytest.raises(vecbinlog.CorruptArchiveError) as err:
        _read(copy)
    assert "corrupt" in str(err.value) and err.value.path == str(copy)
    # the offset is where the last complete event of what the codec gave ends (gzip checks each
    # member's CRC only at its end: what it gave of the broken member may be wrong bytes)
    assert err.value.offset <= _last_complete_end(given)


#: reads a folder a table's batches at a time; after the first it says so and waits for a line
_READER = textwrap.dedent("""
    import json, sys
    import vecbinlog
    rows = 0
    try:
        with vecbinlog.open(sys.argv[1], segment_bytes=1 << 20, threads=2) as log:
            for table, batch in log.iter_tables():
                if rows == 0:
                    print("ready", flush=True)
                    sys.stdin.readline()
                rows += batch.num_rows
        print(json.dumps({"rows": rows}))
    except vecbinlog.BinlogError as exc:
        print(json.dumps({"error": type(exc).__name__, "path": exc.path, "offset": exc.offset, "rows": rows,
                          "message": str(exc)}))
""")


def test_a_file_cut_back_while_it_is_read_is_an_error_not_a_signal(mariadb_server, tmp_path):
    """The newest file of a folder (a server's, ~60 MB) is cut to 20 MB while a child process
    reads it: the child ends with FileChangedError at the new end, never a SIGBUS (a memory
    map would fault past the new end and kill the process: exit 135)."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS cut", "CREATE DATABASE cut", "CREATE TABLE cut.t (id INT PRIMARY KEY, v TEXT)")
    path = s.capture_binlog(*(f"INSERT INTO t SELECT seq, REPEAT(CHAR(65 + seq % 26), 1000) FROM seq_{lo}_to_{lo + 9999}"
                              for lo in range(1, 60001, 10000)), database="cut")
    assert s.query("SELECT COUNT(*) FROM cut.t")[0][0] == 60000
    folder = tmp_path / "binlogs"
    folder.mkdir()
    copy = folder / path.name
    shutil.copy(path, copy)
    assert copy.stat().st_size > 60_000_000
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", _READER, str(folder)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "ready"
        os.truncate(copy, 20_000_000)
        child.stdin.write("go\n")
        child.stdin.flush()
        out, err = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, (child.returncode, err[-3000:])
    got = json.loads(out.strip().splitlines()[-1])
    assert got["error"] == "FileChangedError", got
    assert got["path"] == str(copy) and got["offset"] == 20_000_000
    assert 0 < got["rows"] < 60000


def test_which_files_are_mapped(tmp_path):
    """Complete files are memory-mapped; the newest file of a folder, glob or index, and a file
    whose FORMAT_DESCRIPTION_EVENT still has LOG_EVENT_BINLOG_IN_USE_F (byte 21 of the file,
    bit 0: its server had not closed it), are read with pread; both read the same rows."""
    from vecbinlog.binlog.sources import MappedSource, PreadSource

    from ..conftest import corpus_path

    data = SAMPLE.read_bytes()
    assert data[21] & 1 == 0  # closed by its server
    folder = tmp_path / "set"
    folder.mkdir()
    first, second = folder / "mariadb-bin.000001", folder / "mariadb-bin.000002"
    first.write_bytes(data)
    second.write_bytes(data)
    (folder / "mariadb-bin.index").write_text("./mariadb-bin.000001\n./mariadb-bin.000002\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.BinlogSetWarning)  # the copies' ROTATE names no next file
        for given in (folder, str(folder / "mariadb-bin.0*"), folder / "mariadb-bin.index", [first, second]):
            with vecbinlog.open(given) as log:
                kinds = [type(f.source) for f in log.files]
                rows = {k: t.to_pylist() for k, t in log.read_all().items()}
            newest = PreadSource if not isinstance(given, list) else MappedSource
            assert kinds == [MappedSource, newest], given
            assert rows["shop.orders"][:7] == vecbinlog.read_table(SAMPLE, "shop.orders").to_pylist()
    live = corpus_path("blackbeam__rust_mysql_common/json.binlog.000001")  # copied from a running server
    assert live.read_bytes()[21] & 1
    with vecbinlog.open(live) as log:
        assert isinstance(log.files[0].source, PreadSource)
