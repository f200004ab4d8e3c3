"""``spark.readStream.format("binlog")`` on a real local SparkSession, against a real MariaDB
server writing while the query runs, its binlog folder read in place (local) and copies of it
uploaded to an S3 server (moto, 127.0.0.1) as they grow.

Every micro-batch goes to a sink that writes it as ``batch-NNNNNN.parquet`` (replaced whole
when Spark runs a batch again after a restart, as an idempotent sink does). The sink must
hold every change exactly once: the same changes (file, position, row, change type, values)
as ``read_table`` of the server's files once the workload is over, none twice; and replayed
by primary key it must equal the server's ``SELECT``. Queries are stopped and restarted from
their checkpoint, one is killed (SIGKILL, the process and its JVM) in the middle of a
micro-batch, files grow under the reader cut in the middle of events and of transactions,
and a new column stops a query that a restart then reads on with.

Without pyspark these tests are skipped (in CI a missing pyspark is a failure).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import vecbinlog
from vecbinlog.netchanges import read_net_changes

from ..conftest import ROOT
from ..support.examples import load_example
from ..support.fixtures import require_pyspark
from ..support.listing import complete_end, server_events
from ..support.networkload import apply_net, lake_rows, quiet, server_rows, stretch
from ..support.replay import apply_change
from ..support.stream_query import read_sink, write_batch

require_pyspark()
from vecbinlog.spark.source import ReadMaxBytes  # noqa: E402 (pyspark there: the module skipped otherwise)

pytestmark = [pytest.mark.mariadb, pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning")]

#: the tests whose micro-batches must be small (maxBytesPerTrigger: Spark's admission control for
#: Python sources, pyspark 4.2+; before, a micro-batch reads all there is, as docs/spark.md says)
needs_read_limits = pytest.mark.skipif(
    ReadMaxBytes is None, reason="this pyspark has no read limits for Python sources (maxBytesPerTrigger: 4.2+)")

TABLE_DDL = "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30) CHARACTER SET utf8mb4, n INT)"
#: the columns compared: where each change is, what it is, its values
COMPARED = ["_log_file", "_log_pos", "_event_row", "_change_type", "id", "v", "n"]


def start(spark, archive: str, table: str, checkpoint: Path, sink: Path, trigger: dict | None = None, schema=None,
          **options):
    """A streaming query of ``table`` into the batch-file sink ``sink`` (``schema``: the user's)."""
    sink.mkdir(exist_ok=True)
    reader = spark.readStream.format("binlog").option("table", table)
    if schema is not None:
        reader = reader.schema(schema)
    for k, v in options.items():
        reader = reader.option(k, v)

    def write(df, batch_id: int) -> None:
        write_batch(sink, df.toArrow(), batch_id)

    return (reader.load(archive).writeStream.foreachBatch(write).option("checkpointLocation", str(checkpoint))
            .trigger(**(trigger or {"processingTime": "200 milliseconds"})).start())


def drain(query) -> None:
    """Everything available processed, then the query stopped."""
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def rows(table: pa.Table, columns=COMPARED) -> list[tuple]:
    return sorted(tuple(r[c] for c in columns) for r in table.select(columns).to_pylist())


def assert_each_change_once(got: pa.Table, expected: pa.Table, columns=COMPARED) -> None:
    """The sink's changes are ``expected``'s: each exactly once, none missing, none more."""
    where = rows(got, ["_log_file", "_log_pos", "_event_row", "_change_type"])
    assert len(where) == len(set(where)), "a change was delivered twice"
    assert rows(got, columns) == rows(expected, columns)


def replay(table: pa.Table, columns=("id", "v", "n")) -> list[tuple]:
    """The rows a change log leaves, replayed by ``id`` in log order (tests/support/replay.py)."""
    order = sorted(table.to_pylist(), key=lambda r: (vecbinlog.log.logset.log_order_key(r["_log_file"]), r["_log_pos"],
                                                     r["_event_row"], r["_change_type"] == "update_postimage"))
    state: dict = {}
    before = None
    for r in order:
        before = apply_change(state, r["id"], r["_change_type"], tuple(r[c] for c in columns), before)
    return sorted(state.values())


def read_table(files, table: str) -> pa.Table:
    """``read_table`` of the files (the changes undone by ROLLBACK TO are left out, with a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
        return vecbinlog.read_table(files, table)


def fresh_database(server, name: str) -> str:
    """``name`` dropped and created again, the binlogs flushed: the name of the binlog after that."""
    server.execute(f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")
    server.flush_binary_logs()
    return server.current_binlog().name


def server_files(server, first: str) -> list[Path]:
    files = server.binlog_files()
    return files[[f.name for f in files].index(first):]


def settle(server) -> tuple[str, int]:
    """SHOW MASTER STATUS once the server has written everything it owes (MariaDB may still
    append a BINLOG_CHECKPOINT event after a commit)."""
    for _ in range(100):
        status = server.query("SHOW MASTER STATUS")[0]
        if Path(server.binlog_dir, status[0]).stat().st_size == int(status[1]):
            return status[0], int(status[1])
        time.sleep(0.05)
    raise AssertionError("the server's binlog does not settle")


# -- a live server ------------------------------------------------------------------------------
def test_live_server_stopped_and_restarted(spark, mariadb_server, tmp_path):
    """The server writes (inserts, updates that change keys, deletes, a transaction rolled back
    to a savepoint with MyISAM changes in it, FLUSH BINARY LOGS twice) while the query reads
    its binlog folder in place, 2 KB of binlog per micro-batch; the query is stopped, the server
    writes on (a file more), the query restarts from its checkpoint."""
    s = mariadb_server
    first = fresh_database(s, "live")
    s.execute(TABLE_DDL, "CREATE TABLE side (id INT PRIMARY KEY) ENGINE=MyISAM",
              *(f"INSERT INTO t VALUES ({i}, 'v{i}', {i})" for i in range(30)), database="live")
    folder = str(s.binlog_dir)
    ck, sink = tmp_path / "ck", tmp_path / "sink"
    options = {"startingPosition": f"{first}:4", "maxBytesPerTrigger": "2k"}
    q = start(spark, folder, "live.t", ck, sink, **options)
    try:
        q.processAllAvailable()
        s.execute("UPDATE t SET id = id + 100 WHERE id < 5", "UPDATE t SET v = CONCAT(v, '!') WHERE id % 3 = 0",
                  database="live")
        q.processAllAvailable()
        s.execute("DELETE FROM t WHERE id BETWEEN 10 AND 13",
                  "BEGIN", "UPDATE t SET n = -1 WHERE id = 20", "SAVEPOINT a", "UPDATE t SET n = -777 WHERE id = 21",
                  "INSERT INTO side VALUES (1)", "ROLLBACK TO SAVEPOINT a", "COMMIT",
                  "FLUSH BINARY LOGS", "UPDATE t SET n = n * 2", database="live")
        q.processAllAvailable()
    finally:
        q.stop()
    batches_before = len(list(sink.glob("batch-*.parquet")))
    s.execute("INSERT INTO t VALUES (1000, 'late', 1)", "FLUSH BINARY LOGS",
              "UPDATE t SET id = 2000 WHERE id = 1000", "DELETE FROM t WHERE id = 6", database="live")
    drain(start(spark, folder, "live.t", ck, sink, **options))
    settle(s)
    files = server_files(s, first)
    assert len(files) >= 3
    expected = read_table(files, "live.t")
    got = read_sink(sink)
    assert len(list(sink.glob("batch-*.parquet"))) > batches_before > 1
    assert_each_change_once(got, expected)
    assert replay(got) == sorted(s.query("SELECT id, v, n FROM live.t"))
    assert set(got.column("_outcome").to_pylist()) == {"commit"}  # the change undone by ROLLBACK TO is not there
    assert -777 not in got.column("n").to_pylist() and -1 in got.column("n").to_pylist()


@needs_read_limits
def test_killed_in_the_middle_of_a_batch(spark, mariadb_server, tmp_path):
    """The query runs in a process of its own (tests/support/stream_query.py), which is killed
    (SIGKILL, with its JVM) while micro-batch 2 is half written; restarted from the checkpoint,
    Spark runs batch 2 again over the same offsets, and the sink holds every change once."""
    s = mariadb_server
    first = fresh_database(s, "killed")
    s.execute(TABLE_DDL, *(f"INSERT INTO t VALUES ({i}, 'k{i}', {i})" for i in range(40)),
              "UPDATE t SET id = -id WHERE id % 4 = 0", "FLUSH BINARY LOGS", "DELETE FROM t WHERE id % 5 = 1",
              "UPDATE t SET n = n + 1", database="killed")
    settle(s)
    ck, sink = tmp_path / "ck", tmp_path / "sink"
    sink.mkdir()
    log = open(tmp_path / "query.log", "wb")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.stream_query", str(s.binlog_dir), "killed.t", str(ck), str(sink),
         "--starting", f"{first}:4", "--max-bytes", "1k", "--hang-at", "2"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 600  # not a measure: a bound on waiting for a process that failed
        while not (sink / "hanging-2").exists():
            assert proc.poll() is None, (tmp_path / "query.log").read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the query never reached micro-batch 2"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the query's process group: python and its JVM
        proc.wait()
        log.close()
    assert (ck / "offsets" / "2").exists() and not (ck / "commits" / "2").exists()  # batch 2 began, never ended
    assert not (sink / "batch-000002.parquet").exists() and (sink / ".batch-000002.parquet.tmp").exists()
    drain(start(spark, str(s.binlog_dir), "killed.t", ck, sink, startingPosition=f"{first}:4",
                maxBytesPerTrigger="1k"))
    expected = read_table(server_files(s, first), "killed.t")
    got = read_sink(sink)
    assert (sink / "batch-000002.parquet").exists()
    assert_each_change_once(got, expected)
    assert replay(got) == sorted(s.query("SELECT id, v, n FROM killed.t"))


# -- a file growing under the reader ------------------------------------------------------------
@pytest.fixture(scope="module")
def growing(mariadb_server):
    """A file of DDL, one transaction of many rows events, and small ones; its listing."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS grow", "CREATE DATABASE grow")
    path = s.capture_binlog(
        TABLE_DDL, *(f"INSERT INTO t VALUES ({i}, 'g{i}', {i})" for i in range(10)),
        "BEGIN", *(f"UPDATE t SET n = n + {k} WHERE id = {k}" for k in range(10)), "INSERT INTO t VALUES (50, 'x', 0)",
        "COMMIT", "UPDATE t SET id = id + 100 WHERE id < 3", "DELETE FROM t WHERE id = 9", database="grow")
    return path, server_events(s, path.name), sorted(s.query("SELECT id, v, n FROM grow.t"))


def _cuts(events: list[dict]) -> list[int]:
    """Cuts of the file: in the middle of the big transaction, in the middle of one of its rows
    events, in the middle of a GTID event, at the end of a transaction, then the whole file."""
    rows_events = [e for e in events if e["type"] == "Update_rows_v1"]
    big = rows_events[len(rows_events) // 2]
    gtids = [e for e in events if e["type"] == "Gtid"]
    later = gtids[-2]
    xid = [e for e in events if e["type"] == "Xid"][-1]
    return [big["end"], (big["pos"] + big["end"]) // 2, later["pos"] + 5, xid["end"], events[-1]["end"]]


def test_file_growing_under_the_reader(spark, growing, tmp_path):
    """Bytes appended between micro-batches, cut in the middle of an event and of a transaction:
    each time the sink holds exactly the transactions complete in the bytes there (the server's
    listing says where they end), and in the end every change once."""
    path, events, final = growing
    data = path.read_bytes()
    folder = tmp_path / "archive"
    folder.mkdir()
    copy = folder / path.name
    expected = read_table(path, "grow.t")
    ck, sink = tmp_path / "ck", tmp_path / "sink"
    copy.write_bytes(data[: events[[e["type"] for e in events].index("Xid")]["end"]])  # the first INSERT
    q = start(spark, str(folder), "grow.t", ck, sink)
    try:
        q.processAllAvailable()
        shown = [len(data[: events[[e["type"] for e in events].index("Xid")]["end"]])]
        for cut in sorted(set(_cuts(events))):
            with open(copy, "ab") as f:
                f.write(data[copy.stat().st_size:cut])
            q.processAllAvailable()
            end = complete_end(events, cut)
            want = expected.filter(pc.less(expected.column("_transaction_pos"), end)) if end < len(data) \
                else expected
            assert_each_change_once(read_sink(sink), want)
            shown.append(cut)
    finally:
        q.stop()
    assert replay(read_sink(sink)) == final
    # the cuts were in the middle of a transaction and of an event
    ends = {complete_end(events, c) for c in shown}
    assert any(complete_end(events, c) < c for c in shown) and len(ends) >= 4


# -- S3 ----------------------------------------------------------------------------------------------
def test_s3_copies_uploaded_as_they_grow(spark, mariadb_server, s3, tmp_path):
    """The server's files uploaded to the S3 server as they are written (the newest one again
    at each upload, once cut in the middle of a transaction, as an upload still under way),
    read by trigger(availableNow=True) runs of one query through a folder URI: each run takes
    what is complete in the bucket then, and in the end every change once."""
    client, query, endpoint = s3
    s = mariadb_server
    first = fresh_database(s, "s3live")
    uri = f"s3://testing:testing@binlogs/live/{query}"
    ck, sink = tmp_path / "ck", tmp_path / "sink"

    def upload(cut_newest: int | None = None) -> None:
        settle(s)
        files = server_files(s, first)
        for f in files:
            body = f.read_bytes()
            if f == files[-1] and cut_newest is not None:
                body = body[:cut_newest]
            client.put_object(Bucket="binlogs", Key=f"live/{f.name}", Body=body)

    def run() -> None:
        drain(start(spark, uri, "s3live.t", ck, sink, trigger={"availableNow": True}, startingPosition=f"{first}:4",
                    maxBytesPerTrigger="1k"))

    s.execute(TABLE_DDL, *(f"INSERT INTO t VALUES ({i}, 's{i}', {i})" for i in range(12)), database="s3live")
    upload()
    run()
    s.execute("BEGIN", *(f"UPDATE t SET n = n + 1 WHERE id = {i}" for i in range(6)), "COMMIT",
              "UPDATE t SET id = id + 50 WHERE id < 2", database="s3live")
    current = s.current_binlog().name
    events = server_events(s, current)
    inside = [e for e in events if e["type"] == "Update_rows_v1"][2]  # inside the 6-UPDATE transaction
    upload(cut_newest=(inside["pos"] + inside["end"]) // 2)
    run()
    got = read_sink(sink)
    gtid = max(e["pos"] for e in events if e["type"] == "Gtid" and e["pos"] < inside["pos"])
    assert [p for f, p in zip(got.column("_log_file").to_pylist(), got.column("_transaction_pos").to_pylist())
            if f == current and p >= gtid] == []  # the transaction cut by the upload: not yet
    s.execute("FLUSH BINARY LOGS", "DELETE FROM t WHERE id = 7", "FLUSH BINARY LOGS", "INSERT INTO t VALUES (99, 'z', 9)",
              database="s3live")
    upload()
    run()
    files = server_files(s, first)
    assert len(files) >= 3
    got = read_sink(sink)
    assert_each_change_once(got, read_table(files, "s3live.t"))
    assert replay(got) == sorted(s.query("SELECT id, v, n FROM s3live.t"))


# -- schema changes ---------------------------------------------------------------------------------
def test_new_column_stops_the_stream_and_a_restart_reads_on(spark, mariadb_server, tmp_path):
    """A dropped column is a layout the stream's schema holds (the column stays, null from
    there): the stream goes on. A column added by ALTER TABLE is not: the query stops with
    SchemaChangedError once every change before the first row of the new layout was delivered,
    never dropping the column's values; restarted from its checkpoint it has the new column
    and reads on, every change once."""
    s = mariadb_server
    first = fresh_database(s, "alt")
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30), n INT, gone INT)",
              *(f"INSERT INTO t VALUES ({i}, 'a{i}', {i}, {i})" for i in range(8)), database="alt")
    folder = str(s.binlog_dir)
    ck, sink = tmp_path / "ck", tmp_path / "sink"
    options = {"startingPosition": f"{first}:4"}
    q = start(spark, folder, "alt.t", ck, sink, **options)
    try:
        q.processAllAvailable()
        s.execute("ALTER TABLE t DROP COLUMN gone", "UPDATE t SET n = n + 10 WHERE id < 4",
                  "ALTER TABLE t ADD COLUMN c INT", "UPDATE t SET c = id * 100 WHERE id >= 4",
                  "INSERT INTO t VALUES (9, 'b9', 9, 900)", database="alt")
        with pytest.raises(Exception) as failed:
            q.processAllAvailable()
    finally:
        q.stop()
    message = str(failed.value)
    assert "SchemaChangedError" in message and "restart the query" in message and "'c'" in message
    before = read_sink(sink)
    files = server_files(s, first)
    expected = read_table(files, "alt.t")
    old_layouts = expected.filter(pc.less(expected.column("_schema_version"), 2))
    assert "c" not in before.column_names
    assert_each_change_once(before, old_layouts)  # everything before the new column, the DROP's rows included
    drain(start(spark, folder, "alt.t", ck, sink, **options))
    got = read_sink(sink)
    assert_each_change_once(got, expected, COMPARED + ["c"])
    assert replay(got, ("id", "v", "n", "c")) == sorted(s.query("SELECT id, v, n, c FROM alt.t"))


def test_a_stream_with_a_schema_of_the_users_reads_on_through_new_columns(spark, mariadb_server, tmp_path):
    """readStream.schema(...): a column added by ALTER TABLE (which stops a stream of the
    schema found) is left out, a column the table never had is null, INT read as BIGINT; every
    change once, as read_table gives them; a value that does not fit the schema stops the query
    with an error naming the column and the file and offset of its row."""
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    s = mariadb_server
    first = fresh_database(s, "own")
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30), n INT)",
              *(f"INSERT INTO t VALUES ({i}, 'a{i}', {i})" for i in range(5)), database="own")
    folder = str(s.binlog_dir)
    columns = ["_log_file", "_log_pos", "_event_row", "_change_type", "id", "n"]
    schema = StructType([StructField("_log_file", StringType()), StructField("_log_pos", LongType()),
                         StructField("_event_row", IntegerType()), StructField("_change_type", StringType()),
                         StructField("id", LongType()), StructField("n", LongType()),
                         StructField("never", StringType())])
    ck, sink = tmp_path / "ck", tmp_path / "sink"
    q = start(spark, folder, "own.t", ck, sink, schema=schema, startingPosition=f"{first}:4")
    try:
        q.processAllAvailable()
        s.execute("ALTER TABLE t ADD COLUMN c INT", "UPDATE t SET c = id * 100, n = n + 1 WHERE id >= 2",
                  "INSERT INTO t VALUES (9, 'b9', 9, 900)", "DELETE FROM t WHERE id = 0", database="own")
        q.processAllAvailable()
    finally:
        q.stop()
    got = read_sink(sink)
    assert got.column_names == schema.fieldNames()
    assert got.column("never").null_count == got.num_rows
    expected = read_table(server_files(s, first), "own.t")
    assert_each_change_once(got, expected, columns)
    bad = StructType([StructField("id", IntegerType()), StructField("v", IntegerType())])
    row = next(r for r in expected.to_pylist())  # its v, 'a0', is not an integer
    with pytest.raises(Exception, match=f"column 'v' of type string cannot be cast to int32 at "
                                        f"{row['_log_file']}:{row['_log_pos']}, row 0 of its event"):
        drain(start(spark, folder, "own.t", tmp_path / "ck2", tmp_path / "sink2", schema=bad,
                    startingPosition=f"{first}:4"))


def test_splits_of_uris_with_credentials_are_told_their_states(mariadb_server, s3, tmp_path):
    """A URI with credentials in it (``s3://KEY:SECRET@bucket/...``) names the same file as the
    URI without them that a file's path is: each split of the batch source gets the layout and
    DDL states where it starts (it was 'not one of the files')."""
    from vecbinlog.splits import plan_splits, read_split, with_history

    client, query, _ = s3
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS creds", "CREATE DATABASE creds")
    path = s.capture_binlog(TABLE_DDL, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)", "ALTER TABLE t ADD COLUMN c INT",
                            "INSERT INTO t VALUES (3, 'c', 3, 30)", database="creds")
    client.put_object(Bucket="binlogs", Key=f"creds/{path.name}", Body=path.read_bytes())
    uri = f"s3://testing:testing@binlogs/creds/{path.name}{query}"
    with vecbinlog.open(uri) as log:
        expected = log.read_table("creds.t")
        layouts = log.history()
    splits = with_history(plan_splits(uri, 1), layouts)
    plan = layouts.plans["creds.t"]
    got = pa.Table.from_batches([plan.conform(b) for s_ in splits for _, b in read_split(s_, "creds.t")])
    assert got.to_pylist() == expected.to_pylist()
    assert sorted(set(got.column("_schema_version").to_pylist())) == [0, 1]


# -- net changes ---------------------------------------------------------------------------------
def test_spark_net_changes_equal_the_arrow_ones(spark, net_workload):
    """vecbinlog.spark.net_changes (Spark SQL) of the stretch (A, B] read by the batch source:
    the key from the schema the source marks, the rows and change types of the Arrow
    net_changes, and applied to the server's SELECT at A its SELECT at B."""
    from vecbinlog import spark as vspark

    a, b = net_workload["a"], net_workload["b"]
    files = stretch(net_workload, a["at"], b["at"])
    df = (spark.read.format("binlog").option("table", "net.t").option("start", str(a["at"].pos))
          .option("stop", str(b["at"].pos)).load(",".join(map(str, files))))
    assert vspark.key_columns(df.schema) == ["id"]
    got = vspark.net_changes(df).toArrow()
    assert got.column_names == df.columns
    expected = quiet(read_net_changes, files, "net.t", start=a["at"].pos, stop=b["at"].pos)
    where = ["id", "_change_type", "v", "_log_file", "_log_pos", "_event_row"]
    assert rows(got, where) == rows(expected, where)
    assert apply_net(a["rows"], got) == b["rows"]


@needs_read_limits
def test_spark_stream_into_delta_example(spark, net_workload, tmp_path):
    """examples/spark_stream_to_delta.py on a Delta table the offline example landed up to A:
    a stream starting after A's GTID, trigger(availableNow=True), 1 KB per micro-batch, merges
    every micro-batch's net changes: the table is the server's SELECT at the end; run again,
    nothing changes."""
    pytest.importorskip("deltalake")
    from deltalake import DeltaTable

    lake, ck = str(tmp_path / "lake"), str(tmp_path / "ck")
    archive = str(net_workload["folder"])
    quiet(load_example("delta_net_changes").run, archive, "net.t", lake, until=net_workload["a"]["at"])
    assert lake_rows(lake) == server_rows(net_workload["a"]["rows"])
    stream = load_example("spark_stream_to_delta")
    argv = [archive, "net.t", lake, ck, "--starting", net_workload["a"]["gtid"], "--max-bytes-per-trigger", "1k",
            "--available-now"]
    stream.main(argv, spark=spark)
    assert lake_rows(lake) == server_rows(net_workload["end"]["rows"])
    version = DeltaTable(lake).version()
    assert version > 2  # several micro-batches, one commit each
    stream.main(argv, spark=spark)
    assert DeltaTable(lake).version() == version


# -- with an archive index ----------------------------------------------------------------------
def test_a_stream_with_an_index_reads_what_it_reads_without(spark, mariadb_server, tmp_path):
    """A table altered, dropped and created again over four files, indexed but the newest (as a
    stream meets an archive: the newest file is still written): a query with
    ``.option("index")`` delivers exactly what the same query walking the files does, and the
    changes of ``read_table`` each once."""
    import shutil

    from vecbinlog.index import build_index

    from ..support.workloads import run_workload

    run = run_workload(mariadb_server, "FULL")
    folder = tmp_path / "archive"
    folder.mkdir()
    for f in run["files"]:
        shutil.copy(f, folder / f.name)
    build_index([str(folder / f.name) for f in run["files"][:-1]], tmp_path / "index", processes=1)
    got = {}
    for name, options in (("walked", {}), ("indexed", {"index": str(tmp_path / "index")})):
        query = start(spark, str(folder), run["table"], tmp_path / f"checkpoint-{name}", tmp_path / name,
                      trigger={"availableNow": True}, **options)
        query.awaitTermination()
        got[name] = read_sink(tmp_path / name)
    assert got["indexed"].num_rows > 0
    assert got["indexed"].to_pylist() == got["walked"].to_pylist()
    expected = read_table([folder / f.name for f in run["files"]], run["table"])
    where = ["_log_file", "_log_pos", "_event_row", "_change_type", "_schema_version", "_incarnation"]
    assert_each_change_once(got["indexed"], expected, where)


def test_a_stream_with_a_schema_of_the_users_starts_before_its_table_has_rows(spark, mariadb_server, tmp_path):
    """readStream.schema(...) of a table that has no rows yet (not even created) starts, and
    delivers the rows once the table is created and written (as read_table gives them); a batch
    read with a schema of a table without rows is empty, of that schema."""
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    s = mariadb_server
    first = fresh_database(s, "later")
    s.execute("CREATE TABLE other (id INT PRIMARY KEY)", "INSERT INTO other VALUES (1)", database="later")
    folder = str(s.binlog_dir)
    schema = StructType([StructField("_log_file", StringType()), StructField("_log_pos", LongType()),
                         StructField("_event_row", IntegerType()), StructField("_change_type", StringType()),
                         StructField("id", LongType()), StructField("v", StringType())])
    empty = spark.read.format("binlog").schema(schema).option("table", "later.t").load(
        ",".join(str(p) for p in server_files(s, first)))
    assert empty.schema == schema and empty.count() == 0
    ck, sink = tmp_path / "ck", tmp_path / "sink"
    q = start(spark, folder, "later.t", ck, sink, schema=schema, startingPosition=f"{first}:4")
    try:
        q.processAllAvailable()
        s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30))",
                  *(f"INSERT INTO t VALUES ({i}, 'a{i}')" for i in range(4)), "UPDATE t SET v = 'b' WHERE id = 2",
                  database="later")
        settle(s)
        q.processAllAvailable()
    finally:
        q.stop()
    got = read_sink(sink)
    expected = read_table(server_files(s, first), "later.t")
    assert expected.num_rows == 6
    assert_each_change_once(got, expected, ["_log_file", "_log_pos", "_event_row", "_change_type", "id", "v"])
