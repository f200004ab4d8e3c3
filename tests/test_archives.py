"""Binlogs where archives live: an S3-compatible server, and compressed files.

The S3 server is moto's (``ThreadedMotoServer``), started on 127.0.0.1 by the ``s3`` fixture
(tests/support/fixtures.py); the binlogs are written by a real MariaDB server (a workload over
three files) and taken from the shared corpus. Everything read through a URI, a
``filesystem=``, a glob or a ``mysql-bin.index`` in the bucket, or from a gzip/zstd/bz2/lz4
copy, must equal the local, plain read of the same file table by table
(``read_table``/``read_all`` of the local file is the decoder the corpus and round-trip tests
check against the servers).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import warnings

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import vecbinlog
from vecbinlog.binlog.file import BinlogFile
from vecbinlog.errors import CorruptArchiveError, SourceNotFoundError, SourceUnreachableError
from vecbinlog.log.config import ReadConfig
from vecbinlog.log.logwalk import LogWalk
from vecbinlog.splits import plan_splits, read_split

from .conftest import ROOT, corpus_path
from .support.fixtures import S3_REQUESTS
from .support.mariadb import copy_binlogs

CODECS = {".gz": "gzip", ".zst": "zstd", ".bz2": "bz2", ".lz4": "lz4"}
#: corpus files of several servers, checksum on and off, rows v1 and v2, compressed transactions
CORPUS = [
    "blackbeam__rust_mysql_common/mariadb-bin.000001",
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID.000001",
    "blackbeam__rust_mysql_common/transaction_compression.000001",
    "blackbeam__rust_mysql_common/json.binlog.000001",
    "blackbeam__rust_mysql_common/ver_5_1_23.001",
    "osheroff__mysql-binlog-connector-java/mysql-bin.sakila",
    "zalora__binlog-parser/fixtures/mysql-bin.01",
]


@pytest.fixture(scope="module")
def workload(mariadb_server, tmp_path_factory):
    """Three binlog files of a MariaDB workload (inserts, updates, deletes of several types),
    copied locally with a ``mysql-bin.index``: (folder, [files])."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS arch", "CREATE DATABASE arch")
    s.flush_binary_logs()
    first = len(s.binlog_files()) - 1
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, amount DECIMAL(12,2), note TEXT CHARACTER SET utf8mb4, "
              "at DATETIME(3), big BIGINT UNSIGNED, doc JSON)", database="arch")
    for part in range(3):  # 15 transactions of 20 inserts, an update and a delete per file
        inserts = [
            "INSERT INTO t VALUES " + ", ".join(
                f"({part * 1000 + i}, {i * 7 / 100:.2f}, 'note {part}-{i} ü', '2026-11-2{part} 10:00:0{i % 10}.123', "
                f"{2**64 - 1 - i}, '{{\"k\": {i}}}')" for i in range(lo, lo + 20))
            for lo in range(0, 300, 20)]
        s.execute(*inserts, f"UPDATE t SET note = CONCAT(note, '!') WHERE id % 7 = {part}",
                  f"DELETE FROM t WHERE id % 11 = {part}", database="arch")
        s.flush_binary_logs()
    out = tmp_path_factory.mktemp("arch")
    copies, _ = copy_binlogs(s.binlog_files()[first:-1], out)
    return out, copies


@pytest.fixture(scope="module")
def uploaded(s3, workload):
    """The workload's files and index in the bucket under ``set/``: the URI of the folder."""
    client, query, _ = s3
    folder, files = workload
    for f in [*files, folder / "mysql-bin.index"]:
        client.put_object(Bucket="binlogs", Key=f"set/{f.name}", Body=f.read_bytes())
    return "s3://binlogs/set", query


def _tables(paths, **options) -> dict[str, pa.Table]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with vecbinlog.open(paths, **options) as log:
            return log.read_all()


def _assert_same(got: dict[str, pa.Table], expected: dict[str, pa.Table]) -> None:
    assert list(got) == list(expected)
    for name, table in expected.items():
        assert got[name].schema == table.schema, name
        assert got[name].to_pylist() == table.to_pylist(), name


def test_uri_glob_index_and_filesystem_read_as_local(uploaded, workload):
    base, query = uploaded
    folder, files = workload
    expected = _tables(files)
    assert expected["arch.t"].num_rows > 1000
    names = [f.name for f in files]
    _assert_same(_tables([f"{base}/{n}{query}" for n in names]), expected)  # a list of URIs
    _assert_same(_tables(f"{base}/mysql-bin.0*{query}"), expected)  # a glob, in log order
    _assert_same(_tables(f"{base}/mysql-bin.index{query}"), expected)  # the server's index
    _assert_same(_tables(f"s3a://binlogs/set/mysql-bin.0*{query}"), expected)  # Hadoop's scheme name
    fs = pafs.S3FileSystem(endpoint_override=query.split("endpoint_override=")[1].split("&")[0], scheme="http",
                           region="us-east-1")
    _assert_same(_tables([f"binlogs/set/{n}" for n in names], filesystem=fs), expected)
    # windows of 4 KB: events cut by windows, read again in the next one
    _assert_same(_tables(f"{base}/mysql-bin.index{query}", segment_bytes=4096, batch_rows=100), expected)


def test_iter_batches_and_info_from_s3(uploaded, workload):
    base, query = uploaded
    _, files = workload
    with vecbinlog.open(files) as log:
        local = log.read_table("arch.t")
        local_info = log.info()
    with vecbinlog.open(f"{base}/mysql-bin.index{query}", segment_bytes=8192) as log:
        batches = list(log.iter_batches("arch.t"))
        info = log.info()
    assert pa.Table.from_batches(batches).to_pylist() == local.to_pylist()
    for got, want in zip(info["files"], local_info["files"]):
        assert got["path"].startswith("s3://binlogs/set/mysql-bin.0")
        for key in ("size", "events", "rows_events_by_table", "gtids", "server_version"):
            assert got[key] == want[key], key
        assert got["splittable"] and got["compression"] is None


@pytest.fixture(scope="module")
def long_files(mariadb_server, s3, tmp_path_factory):
    """Four binlog files of 150-250 KB (a MariaDB server's: rows of 1 KB of text), uploaded
    under ``long/``: ([URI], [local copy])."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS longf", "CREATE DATABASE longf")
    s.flush_binary_logs()
    first = len(s.binlog_files()) - 1
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, note TEXT)", database="longf")
    for part in range(4):
        s.execute(*[f"INSERT INTO t VALUES ({part * 1000 + i}, REPEAT('{part}{i % 10}', 500))"
                    for i in range(150 + 30 * part)], database="longf")
        s.flush_binary_logs()
    copies, _ = copy_binlogs(s.binlog_files()[first:-1], tmp_path_factory.mktemp("long"))
    client, query, _ = s3
    for f in copies:
        client.put_object(Bucket="binlogs", Key=f"long/{f.name}", Body=f.read_bytes())
    return [f"s3://binlogs/long/{f.name}{query}" for f in copies], copies


def test_files_in_object_storage_are_read_once_in_few_requests(long_files):
    """Opening a binlog in S3 asks the server for its size (one HEAD) and its first 64 KiB (one
    GET: the magic bytes and the FORMAT_DESCRIPTION_EVENT); reading the files then asks for
    the rest of each in one more GET (made while the file before it is walked): every byte
    once, and the rows of the local files."""
    uris, copies = long_files
    sizes = {f"/binlogs/long/{f.name}": f.stat().st_size for f in copies}
    assert all(size > 2 * (64 << 10) for size in sizes.values())
    S3_REQUESTS.clear()
    with vecbinlog.open(uris) as log:
        opened = [r for r in S3_REQUESTS if r[1] in sizes]
        got = log.read_all()
    read = [r for r in S3_REQUESTS if r[1] in sizes]
    assert sorted(opened) == sorted([("HEAD", path, None) for path in sizes] +
                                    [("GET", path, "bytes=0-65535") for path in sizes])
    rest = sorted(r for r in read[len(opened):])
    assert rest == sorted(("GET", path, f"bytes=65536-{size - 1}") for path, size in sizes.items())
    _assert_same(got, _tables(copies))
    assert got["longf.t"].num_rows == sum(150 + 30 * part for part in range(4))


def test_the_files_after_the_one_walked_are_read_ahead(long_files):
    """While the walk is at a file, the files after it (small ones: as many as one segment
    holds) are already being read, in the background: when the first file's step comes, the
    server has been asked for the rest of the others, and walking them asks for nothing more."""
    uris, copies = long_files
    paths = {f"/binlogs/long/{f.name}": f.stat().st_size for f in copies}
    files = [BinlogFile(u) for u in uris]
    try:
        S3_REQUESTS.clear()
        steps = LogWalk(files, ReadConfig.build()).steps()
        assert next(steps).file is files[0]
        ahead = {("GET", path, f"bytes=65536-{size - 1}") for path, size in list(paths.items())[1:]}
        deadline = time.monotonic() + 20
        while not ahead <= set(S3_REQUESTS) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ahead <= set(S3_REQUESTS)
        asked = len(S3_REQUESTS)
        assert [s.file for s in steps] == files[1:]
        assert [r for r in S3_REQUESTS[asked:] if r[1] in paths] == []
    finally:
        for f in files:
            f.close()


def test_the_first_file_that_cannot_be_opened_is_the_error(uploaded, workload):
    """Files in object storage are opened several at a time; the error is still that of the
    first one in log order that cannot be, as when they were opened one after the other."""
    base, query = uploaded
    _, files = workload
    uris = [f"{base}/{f.name}{query}" for f in files]
    missing = [f"{base}/mysql-bin.99999{k}{query}" for k in (1, 2)]
    with pytest.raises(SourceNotFoundError, match="no such file or object") as err:
        vecbinlog.open([*uris, *missing])
    assert "s3://binlogs/set/mysql-bin.999991" in str(err.value) and "999992" not in str(err.value)
    with pytest.raises(SourceNotFoundError, match=r"not a file \(a directory or prefix\)"):
        BinlogFile(f"{base}{query}")


def test_a_split_reads_only_its_range(uploaded, workload):
    base, query = uploaded
    _, files = workload
    uri = f"{base}/{files[1].name}{query}"
    splits = plan_splits(uri, split_bytes=8 << 10)
    assert len(splits) >= 4
    local = plan_splits(files[1], split_bytes=8 << 10)
    assert [(s.start, s.stop) for s in splits] == [(s.start, s.stop) for s in local]
    mid = splits[len(splits) // 2]
    with vecbinlog.Binlog.over_range(uri, mid.start, mid.stop, ddl=mid.ddl) as log:
        got = [b for _, b in log.iter_tables()]
        source = log.files[0].source
    want = [b for _, b in read_split(local[len(local) // 2])]
    assert pa.Table.from_batches(got).to_pylist() == pa.Table.from_batches(want).to_pylist()
    # the FORMAT_DESCRIPTION_EVENT's window (64 KB, or the file), then the split's bytes only
    first_window = min(64 << 10, files[1].stat().st_size)
    assert source.bytes_read <= first_window + mid.size + (8 << 10), (source.bytes_read, mid.size)
    assert source.bytes_read < files[1].stat().st_size or mid.size + first_window >= files[1].stat().st_size


def test_cli_to_parquet_from_s3(uploaded, workload, tmp_path):
    base, query = uploaded
    _, files = workload
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "vecbinlog", "to-parquet", f"{base}/mysql-bin.0*{query}", str(out), "-q"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    got = pq.read_table(out / "table=arch.t")
    local = vecbinlog.read_table(files, "arch.t")
    assert got.column("id").to_pylist() == local.column("id").to_pylist()
    assert got.column("note").to_pylist() == local.column("note").to_pylist()
    assert got.column("_log_pos").to_pylist() == local.column("_log_pos").to_pylist()


@pytest.mark.parametrize("suffix", list(CODECS))
def test_compressed_copies_decode_as_the_plain_files(tmp_path, workload, suffix):
    _, files = workload
    paths = [*(corpus_path(c) for c in CORPUS), *files]
    for k, path in enumerate(paths):
        folder = tmp_path / str(k)
        folder.mkdir()
        copy = folder / (path.name + suffix)
        with pa.CompressedOutputStream(str(copy), CODECS[suffix]) as out:
            out.write(path.read_bytes())
        expected = _tables(path)
        _assert_same(_tables(copy), expected)
        _assert_same(_tables(copy, segment_bytes=2048, batch_rows=50), _tables(path, segment_bytes=2048, batch_rows=50))
        with vecbinlog.open(copy) as log:
            info = log.info()["files"][0]
        assert info["compression"] == CODECS[suffix] and not info["splittable"]
        assert info["size"] == path.stat().st_size  # known once the stream was read to its end
    # a set of compressed files in log order by their binlog names, and one split each
    for f in files:
        with pa.CompressedOutputStream(str(tmp_path / (f.name + suffix)), CODECS[suffix]) as out:
            out.write(f.read_bytes())
    pattern = str(tmp_path / f"mysql-bin.0*{suffix}")
    _assert_same(_tables(pattern), _tables(files))
    assert [(s.start, s.stop) for s in plan_splits(pattern, split_bytes=4096)] == [(4, None)] * len(files)


def test_compressed_file_in_s3(s3, workload):
    client, query, _ = s3
    _, files = workload
    client.put_object(Bucket="binlogs", Key=f"gz/{files[0].name}.gz", Body=gzip.compress(files[0].read_bytes()))
    _assert_same(_tables(f"s3://binlogs/gz/{files[0].name}.gz{query}"), _tables(files[0]))


def test_compressed_file_sniffed_by_its_magic(tmp_path, workload):
    _, files = workload
    copy = tmp_path / files[0].name  # no suffix: told by its first bytes
    copy.write_bytes(gzip.compress(files[0].read_bytes()))
    _assert_same(_tables(copy), _tables(files[0]))


def test_truncated_and_corrupt_gzip(tmp_path, workload):
    _, files = workload
    data = gzip.compress(files[0].read_bytes())
    cut = tmp_path / "cut" / (files[0].name + ".gz")
    cut.parent.mkdir()
    cut.write_bytes(data[: len(data) // 2])
    # read as a cut plain file is: every complete event, a TruncatedWarning (tests/binlog/test_cut_files.py)
    with pytest.warns(vecbinlog.TruncatedWarning, match="gzip stream is truncated"):
        with vecbinlog.open(cut) as log:
            some = log.read_table("arch.t")
    assert 0 < some.num_rows < _tables(files[0])["arch.t"].num_rows
    with pytest.raises(vecbinlog.TruncatedError) as err:
        _tables(cut, strict=True)
    assert err.value.path == str(cut) and err.value.offset is not None and err.value.offset > 4
    assert "truncated" in str(err.value)
    bad = tmp_path / "bad" / (files[0].name + ".gz")
    bad.parent.mkdir()
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    with pytest.raises((CorruptArchiveError, vecbinlog.BinlogError)) as err:
        _tables(bad)
    assert err.value.path == str(bad)


def test_missing_object_and_unreachable_endpoint_name_the_uri(s3):
    _, query, endpoint = s3
    with pytest.raises(SourceNotFoundError) as err:
        vecbinlog.open(f"s3://binlogs/nope/mysql-bin.000001{query}")
    assert "s3://binlogs/nope/mysql-bin.000001" in str(err.value)
    with pytest.raises(SourceNotFoundError):
        vecbinlog.open(f"s3://binlogs/nope/mysql-bin.*{query}")
    # credentials in the URI are used, never shown
    secret = "s3://AKIDSECRET:VERYSECRETKEY@binlogs/nope/mysql-bin.000001" + query
    with pytest.raises(SourceNotFoundError) as err:
        vecbinlog.open(secret)
    assert "VERYSECRETKEY" not in str(err.value) and "AKIDSECRET" not in str(err.value)
    fs = pafs.S3FileSystem(endpoint_override="127.0.0.1:1", scheme="http", region="us-east-1", connect_timeout=1,
                           request_timeout=1, retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1))
    with pytest.raises(SourceUnreachableError) as err:
        vecbinlog.open("binlogs/set/mysql-bin.000001", filesystem=fs)
    assert "binlogs/set/mysql-bin.000001" in str(err.value)


def test_spark_reads_s3(uploaded, workload):
    pytest.importorskip("pyspark")
    base, query = uploaded
    _, files = workload
    session = _session()
    # the credentials in the URI: Spark's Python workers may have started before this test's
    # environment had them (a session made by an earlier test)
    uri = base.replace("s3://", "s3://testing:testing@")
    df = (session.read.format("binlog").option("table", "arch.t").option("split_bytes", "16k")
          .load(f"{uri}/mysql-bin.0*{query}"))
    assert df.rdd.getNumPartitions() > 3
    got = sorted((r["_log_file"], r["_log_pos"], r["_event_row"], r["_change_type"], r["id"], r["note"])
                 for r in df.select("_log_file", "_log_pos", "_event_row", "_change_type", "id", "note").collect())
    local = vecbinlog.read_table(files, "arch.t").select(
        ["_log_file", "_log_pos", "_event_row", "_change_type", "id", "note"]).to_pylist()
    assert got == sorted(tuple(r.values()) for r in local)


def _session():
    """The tests' SparkSession (the ``spark`` fixture's settings, tests/support/fixtures.py), made here if not yet made."""
    from pyspark.sql import SparkSession

    from vecbinlog import spark as vspark

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    session = (SparkSession.builder.master("local[2]").appName("vecbinlog-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "1g").getOrCreate())
    vspark.register(session)
    return session


def test_cli_reads_a_compressed_file_twice_over(tmp_path, workload):
    """`vecbinlog info` walks a file more than once (its events, then each table's rows): a
    compressed file is decompressed again from its start for each walk."""
    _, files = workload
    copy = tmp_path / (files[0].name + ".zst")
    with pa.CompressedOutputStream(str(copy), "zstd") as out:
        out.write(files[0].read_bytes())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    plain, packed = (subprocess.run([sys.executable, "-m", "vecbinlog", "info", str(p), "--json"], capture_output=True,
                                    text=True, env=env, timeout=300) for p in (files[0], copy))
    assert packed.returncode == 0, packed.stderr
    a, b = json.loads(plain.stdout), json.loads(packed.stdout)
    fa, fb = a["files"][0], b["files"][0]
    assert fb["compression"] == "zstd" and fa["compression"] is None
    for key in ("size", "events", "rows_events_by_table", "gtids"):
        assert fb[key] == fa[key], key
    assert b.get("tables") == a.get("tables")


# -- folders and copied index files -----------------------------------------------------------


def test_a_servers_binlog_folder_opens_as_its_binlogs(mariadb_server, workload, tmp_path):
    """The folder a live server writes (its mysql-bin.index lists its own absolute paths) opens
    as the files SHOW BINARY LOGS lists, in that order; a copy of the workload's files without an
    index opens as its binlogs in log order (not the note, not the empty file just created), and
    a file named as a binlog that is not one is named in a BinlogSetWarning."""
    s = mariadb_server
    with vecbinlog.open(s.binlog_dir) as log:
        assert log.paths == [str(p) for p in s.binlog_files()]
    folder, files = workload
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in reversed(files):
        shutil.copy(f, bare / f.name)
    (bare / "README.txt").write_text("binlogs of the arch workload\n")
    (bare / "mysql-bin.000099").write_bytes(b"")  # a server's next file, just created
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with vecbinlog.open(bare) as log:
            assert log.paths == [str(bare / f.name) for f in files]
    _assert_same(_tables(bare), _tables(files))
    (bare / "mysql-bin.000100").write_text("not a binlog\n")
    with pytest.warns(vecbinlog.BinlogSetWarning, match=r"left out mysql-bin\.000100 \(they do not start"):
        with vecbinlog.open(str(bare) + "/") as log:
            assert log.paths == [str(bare / f.name) for f in files]
    # compressed files of a folder are told by their decompressed first bytes
    packed = tmp_path / "packed"
    packed.mkdir()
    for f in files:
        (packed / (f.name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))
    _assert_same(_tables(packed), _tables(files))
    # the command line takes a folder
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "vecbinlog", "info", str(folder), "--json"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [f["path"] for f in json.loads(done.stdout)["files"]] == [str(f) for f in files]
    # two index files (a replica's binlog and relay log): which is meant is not guessed
    (bare / "mysql-bin.index").write_text("".join(f"./{f.name}\n" for f in files))
    (bare / "relay-bin.index").write_text("./relay-bin.000001\n")
    with pytest.raises(ValueError, match="2 index files"):
        vecbinlog.open(bare)
    # an empty folder is no binlog set
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceNotFoundError, match="no binlog file in the folder"):
        vecbinlog.open(tmp_path / "empty")


def test_a_folder_in_s3_opens_as_its_binlogs(s3, uploaded, workload):
    client, query, _ = s3
    base, query = uploaded
    _, files = workload
    expected = _tables(files)
    for folder in (f"{base}{query}", f"{base}/{query}"):  # the prefix, with or without its slash: per its index
        with vecbinlog.open(folder) as log:
            assert [p.split("?")[0] for p in log.paths] == [f"{base}/{f.name}" for f in files]
        _assert_same(_tables(folder), expected)
    for f in files:  # no index: the objects that start with the binlog magic
        client.put_object(Bucket="binlogs", Key=f"bare/{f.name}", Body=f.read_bytes())
    client.put_object(Bucket="binlogs", Key="bare/mysql-bin.000100", Body=b"not a binlog\n")
    client.put_object(Bucket="binlogs", Key="bare/notes.txt", Body=b"the arch workload\n")
    with pytest.warns(vecbinlog.BinlogSetWarning, match=r"left out mysql-bin\.000100 "):
        with vecbinlog.open(f"s3://binlogs/bare/{query}") as log:
            assert [p.split("?")[0] for p in log.paths] == [f"s3://binlogs/bare/{f.name}" for f in files]
    _assert_same(_tables(f"s3://binlogs/bare/{query}"), expected)


def _server_index(names: list[str]) -> str:
    """An index as a server whose data directory is /var/lib/mysql writes it (log_bin=ON)."""
    return "".join(f"/var/lib/mysql/{n}\n" for n in names)


def test_a_copied_index_reads_the_files_beside_it(s3, workload, tmp_path):
    """``mysql-bin.index`` copied with its binlogs keeps the server's absolute paths, which are
    not there: the files of those names beside the index are read (a BinlogSetWarning, once);
    relative entries resolve against the index's folder; locally and in S3."""
    client, query, _ = s3
    _, files = workload
    expected = _tables(files)
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in files:
        shutil.copy(f, copy / f.name)
    (copy / "mysql-bin.index").write_text(_server_index([f.name for f in files]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(copy / "mysql-bin.index") as log:
            assert log.paths == [str(copy / f.name) for f in files]
            got = log.read_all()
    said = [w for w in caught if issubclass(w.category, vecbinlog.BinlogSetWarning)]
    assert len(said) == 1 and "/var/lib/mysql/mysql-bin.0" in str(said[0].message) and str(copy) in str(said[0].message)
    _assert_same(got, expected)
    with pytest.warns(vecbinlog.BinlogSetWarning, match="beside the index"):
        with vecbinlog.open(copy) as log:  # the folder, through its index
            assert log.paths == [str(copy / f.name) for f in files]
    # relative entries, from another working directory
    (copy / "mysql-bin.index").write_text("".join(f"./{f.name}\n" for f in files))
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _assert_same(_tables("copy/mysql-bin.index"), expected)
    finally:
        os.chdir(here)
    for f in files:
        client.put_object(Bucket="binlogs", Key=f"copied/{f.name}", Body=f.read_bytes())
    client.put_object(Bucket="binlogs", Key="copied/mysql-bin.index", Body=_server_index([f.name for f in files]).encode())
    with pytest.warns(vecbinlog.BinlogSetWarning, match="beside the index"):
        with vecbinlog.open(f"s3://binlogs/copied/mysql-bin.index{query}") as log:
            assert [p.split("?")[0] for p in log.paths] == [f"s3://binlogs/copied/{f.name}" for f in files]
            _assert_same(log.read_all(), expected)


@pytest.mark.parametrize("where", ["subtree", "s3"])
def test_streams_splits_and_the_index_take_the_filesystem(where, uploaded, workload, tmp_path):
    """Everything that opens a binlog takes the read's ``filesystem=`` (one config, one way to
    open a file): a stream's starts (a GTID, ``FILE:POS``), ends, splits and schema walk, a
    plan of splits, an index built and planned from, through a ``SubTreeFileSystem`` over the
    local folder and an ``S3FileSystem`` with ``endpoint_override`` (plain paths, no URI). The
    rows of every split read equal ``read_table`` of the local files; the starts equal those of
    the local archive."""
    from vecbinlog import build_index
    from vecbinlog.splits import read_splits
    from vecbinlog.streaming import Archive, StreamHistory

    base, query = uploaded
    folder, files = workload
    if where == "subtree":
        fs = pafs.SubTreeFileSystem(str(folder), pafs.LocalFileSystem())
        names = [f.name for f in files]
    else:
        fs = pafs.S3FileSystem(endpoint_override=query.split("endpoint_override=")[1].split("&")[0], scheme="http",
                               region="us-east-1")
        names = [f"binlogs/set/{f.name}" for f in files]
    expected = _tables(files)["arch.t"].to_pylist()
    local = Archive([str(f) for f in files])
    config = ReadConfig.build(filesystem=fs)

    def rows(splits) -> list:
        got = [b for _, b in read_splits(splits, config=config)]
        return pa.Table.from_batches(got).to_pylist() if got else []

    middle = expected[len(expected) // 2]["_gtid"]
    for archive in (Archive(names, filesystem=fs), Archive(names, config, index=str(tmp_path / "none"))):
        assert archive.resolve_start(middle) == local.resolve_start(middle)
        assert archive.resolve_start(f"{files[1].name}:4") == local.resolve_start(f"{files[1].name}:4")
        first, end = archive.first(), archive.latest()
        history = StreamHistory(config)
        history.take(history.walk(archive, end, first=first))
        assert rows(history.with_states(archive.splits(first, end, split_bytes=4096))) == expected
    assert rows(plan_splits(names, 4096, config)) == expected
    assert rows(plan_splits(names, 4096, filesystem=fs)) == expected
    build_index(names, tmp_path / "index", filesystem=fs, processes=1)
    indexed = plan_splits(names, 4096, config, index=str(tmp_path / "index"))
    assert rows(indexed) == expected
    with vecbinlog.open(names, filesystem=fs, index=str(tmp_path / "index")) as log:
        assert log.tables == ["arch.t"] and log.read_table("arch.t").to_pylist() == expected
