"""``vecbinlog index ARCHIVE LOCATION`` run as a process (``python -m vecbinlog`` from this
checkout): exit 0, one index file per binlog, the counts printed; a second run skips them all.
What is in the index files is tests/test_index.py's."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from vecbinlog.index import GATHERED_NAME, INDEX_SUFFIX

from ..conftest import corpus_path
from ..support.clirun import SAMPLE, run


def test_index_command(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    names = [f"mariadb-bin.00000{k}" for k in (1, 2, 3)]
    for n in names:
        shutil.copy(SAMPLE, folder / n)
    location = tmp_path / "index"
    p = run("index", str(folder / "mariadb-bin.*"), str(location), module=True)
    size = SAMPLE.stat().st_size
    assert p.stdout == f"3 file(s) indexed ({3 * size:,} bytes), 0 up to date\n"
    assert p.stderr == ""  # not a terminal: no progress bar
    assert sorted(f.name for f in location.iterdir()) == [GATHERED_NAME, *(n + INDEX_SUFFIX for n in names)]
    assert [pq.read_table(location / (n + INDEX_SUFFIX)).column("name")[0].as_py() for n in names] == names
    p = run("index", "-q", "--processes", "1", *(str(folder / n) for n in names), str(location), module=True)
    assert p.stdout == "0 file(s) indexed (0 bytes), 3 up to date\n"
    p = run("index", "--processes", "0", str(folder), str(location), module=True, check=2)
    assert "--processes must be at least 1" in p.stderr
    p = run("index", "--range-bytes", "1k", str(folder), str(location), module=True, check=2)
    assert "--range-bytes '1k': at least 64k (or 0)" in p.stderr


def test_index_command_in_ranges_then_grown(tmp_path):
    """A file of 1.4 MB indexed in ranges of 64 KiB (said in the line printed), then the same
    file cut at a transaction start, indexed, grown back: extended (what it grew by walked)."""
    big = corpus_path("osheroff__mysql-binlog-connector-java/mysql-bin.sakila")
    size = big.stat().st_size
    p = run("index", "--range-bytes", "64k", str(big), str(tmp_path / "index"), module=True)
    assert p.stdout == f"1 file(s) indexed (1 in ranges) ({size:,} bytes), 0 up to date\n"
    starts = pq.read_table(tmp_path / "index" / (big.name + INDEX_SUFFIX)).column("transaction_starts")[0].as_py()
    copy = tmp_path / "archive" / big.name
    copy.parent.mkdir()
    data = big.read_bytes()
    copy.write_bytes(data[:starts[len(starts) // 2]])
    run("index", "--range-bytes", "0", str(copy), str(tmp_path / "grown"), module=True)
    copy.write_bytes(data)
    p = run("index", "--range-bytes", "0", str(copy), str(tmp_path / "grown"), module=True)
    assert p.stdout == f"1 file(s) indexed (1 grown, extended) ({size - starts[len(starts) // 2]:,} bytes), 0 up to date\n"


def test_info_and_tables_from_the_index(tmp_path):
    """``info --index LOCATION --no-decode`` and ``tables --index LOCATION`` answer from the
    index: with the binlogs overwritten by zeros after indexing (the same size and time, so the
    index still holds them as they are; read, they are no binlogs), they print what the commands
    print reading the binlogs, and info's row counts are those decoding gives (the sample: no
    filter, no transaction rolled back)."""
    folder = tmp_path / "archive"
    folder.mkdir()
    files = [str(folder / f"mariadb-bin.00000{k}") for k in (1, 2)]
    for f in files:
        shutil.copy(SAMPLE, f)
    location = str(tmp_path / "index")
    run("index", *files, location, module=True)
    walked = json.loads(run("info", *files, "--json", module=True).stdout)
    tables = run("tables", *files, "--json", module=True).stdout
    for f in files:
        st = os.stat(f)
        Path(f).write_bytes(bytes(st.st_size))
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert run("tables", *files, module=True, check=None).returncode != 0  # (no binlogs now)
    assert run("tables", *files, "--index", location, "--json", module=True).stdout == tables
    got = json.loads(run("info", *files, "--index", location, "--no-decode", "--json", module=True).stdout)
    assert got["files"] == walked["files"] and got["tables"] == walked["tables"]
    assert got["tables"]["shop.orders"] == {"rows_events": 8, "insert": 8, "update": 2, "delete": 2, "row_images": 14}
    assert got["row_counts"].startswith("from the archive index")
    p = run("tables", *files, "--index", str(tmp_path / "elsewhere"), module=True, check=1)
    assert p.stderr == f"vecbinlog: error: {files[0]} is not in the index at {tmp_path / 'elsewhere'} " \
                       "(vecbinlog.build_index / `vecbinlog index` adds it)\n"
