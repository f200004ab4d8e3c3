"""vecbinlog.lake (``sync_delta``, ``sync_iceberg``) against a real MariaDB server, run after run.

A MariaDB server changes three tables in four steps: rows of every type family inserted, then
updated (the key too), deleted, inserted and deleted again, changed in a transaction rolled
back and in one rolled back to a savepoint, over a new binlog file; an ALTER TABLE ADD COLUMN
and changes under the new layout; a TRUNCATE and new rows. After each step the binlog files
are copied into a growing archive (the newest one as the server has written it so far) and
each table is synced into a Delta table (``deltalake``) and an Iceberg table (``pyiceberg``'s
SQL catalog on SQLite), a few KiB of binlog per commit. Read back with pyarrow (and DuckDB
when installed), each lake table must equal the server's ``SELECT`` at that point: ``t``
keyed by its primary key, ``pair`` by a key of two columns, and ``nokey``, without a key, a
change log that replayed gives the server's rows, every change once. A sync killed (SIGKILL)
just before a commit and run again must give the same, nothing twice. Delta also over an S3
server (moto on 127.0.0.1).
"""

from __future__ import annotations

import collections
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import vecbinlog
from vecbinlog.lake import LakeError, LakeSchemaError, LakeWarning, SyncResult, iceberg_catalog, sync_delta, sync_iceberg
from vecbinlog.streaming import Position

from .conftest import ROOT
from .support.fixtures import S3_CREDENTIALS as CREDENTIALS

pytestmark = pytest.mark.mariadb

DB = "lake"
DDL = [
    "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4, n INT UNSIGNED, big BIGINT UNSIGNED, "
    "d DECIMAL(8,2), wide DECIMAL(50,10), at DATETIME(3), tm TIME(6), e ENUM('red','green'), s SET('x','y','z'), "
    "j JSON, g GEOMETRY, ts TIMESTAMP(6) NULL, f DOUBLE, tiny TINYINT, yr YEAR, bits BIT(5), bin VARBINARY(8))",
    "CREATE TABLE pair (a INT, b VARCHAR(8), v INT, PRIMARY KEY (a, b))",
    "CREATE TABLE nokey (x INT, note VARCHAR(20))",
    "CREATE TABLE side (x INT) ENGINE=MyISAM",  # not synced: its change keeps a savepoint's rollback in the binlog
]
TABLES = ("t", "pair", "nokey")
#: binlog bytes per commit: a few transactions each, several commits per run
MAX_BYTES = 4096
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def t_row(i: int) -> str:
    """A row of ``t`` with a value of every column."""
    return (f"({i}, 'v{i} ü', {4000000000 + i if i % 3 == 0 else i}, {2**64 - i}, {i}.25, "
            f"'{i}1234567890123456789012345678901234567.0123456789', '2026-01-0{1 + i % 9} 10:00:00.123', "
            f"'{'-' if i % 4 == 0 else ''}{i}:30:00.5', '{('red', 'green')[i % 2]}', '{('x', 'x,z', '')[i % 3]}', "
            f"'{{\"k\": {i}}}', ST_GeomFromText('POINT({i} 2)'), '2026-02-01 00:00:0{i % 10}.25', {i}.5, {-i}, "
            f"{2000 + i}, b'{i % 32:05b}', X'{i:02x}00ff')")


STEPS = [
    [  # 1: the tables, their first rows (a row of NULLs, duplicates without a key)
        *DDL, "INSERT INTO t VALUES " + ", ".join(t_row(i) for i in range(1, 21)), "INSERT INTO t (id) VALUES (99)",
        "INSERT INTO pair VALUES (1, 'a', 1), (1, 'b', 2), (2, 'a', 3), (2, 'b', 4)",
        "INSERT INTO nokey VALUES (1, 'one'), (2, 'two'), (2, 'two')",
    ],
    [  # 2: keys changed, deletes, a key inserted and deleted, rolled-back work, a new file in the middle
        "UPDATE t SET id = id + 100 WHERE id <= 3", "DELETE FROM t WHERE id BETWEEN 10 AND 12",
        "INSERT INTO t (id, v) VALUES (500, 'brief')", "DELETE FROM t WHERE id = 500",
        "UPDATE t SET v = 'twice', n = n + 1 WHERE id = 8", "UPDATE t SET v = 'thrice' WHERE id = 8",
        "BEGIN", "INSERT INTO t (id, v) VALUES (700, 'never')", "UPDATE t SET v = 'never' WHERE id < 20", "ROLLBACK",
        "FLUSH BINARY LOGS",
        "BEGIN", "UPDATE t SET v = 'kept' WHERE id = 20", "SAVEPOINT x",
        "UPDATE t SET v = 'undone' WHERE id IN (4, 5, 6)", "INSERT INTO t (id) VALUES (701)",
        "INSERT INTO side VALUES (1)", "ROLLBACK TO SAVEPOINT x", "COMMIT",
        "UPDATE pair SET b = 'c' WHERE a = 1 AND b = 'a'", "DELETE FROM pair WHERE a = 2 AND b = 'a'",
        "UPDATE pair SET v = v * 10 WHERE a = 2",
        "UPDATE nokey SET note = 'deux' WHERE x = 2 LIMIT 1", "DELETE FROM nokey WHERE x = 1",
    ],
    [  # 3: ALTER TABLE ADD COLUMN, and changes under the new layouts
        "ALTER TABLE t ADD COLUMN extra VARCHAR(10) NULL", "UPDATE t SET extra = 'new' WHERE id IN (4, 5)",
        "INSERT INTO t (id, v, extra) VALUES (800, 'after', 'x')",
        "ALTER TABLE pair ADD COLUMN w INT", "INSERT INTO pair VALUES (3, 'a', 5, 50)",
        "INSERT INTO nokey VALUES (3, 'three')",
    ],
    [  # 4: TRUNCATE and new rows; a key given back; another file
        "TRUNCATE TABLE pair", "INSERT INTO pair VALUES (9, 'z', 9, 90), (1, 'c', 7, 70)", "FLUSH BINARY LOGS",
        "DELETE FROM t WHERE id IN (101, 13)", "UPDATE t SET id = 3 WHERE id = 102",
        "UPDATE t SET extra = 'later' WHERE id = 3", "DELETE FROM nokey WHERE x = 3",
    ],
]


# -- the server's rows, and the lake's as the server gives them -------------------------------------
def columns(server, db: str, table: str) -> list[tuple[str, str]]:
    """(name, DATA_TYPE) of the table's columns, in order."""
    return [(c, t) for c, t in server.query(
        f"SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{db}' "
        f"AND TABLE_NAME = '{table}' ORDER BY ORDINAL_POSITION")]


def select(server, db: str, table: str) -> list[dict]:
    """The server's ``SELECT``: geometry as WKB, TIMESTAMP as microseconds, BIT as its number."""
    cols = columns(server, db, table)
    exprs = []
    for name, kind in cols:
        if kind in ("geometry", "point", "linestring", "polygon"):
            exprs.append(f"ST_AsBinary(`{name}`)")
        elif kind == "timestamp":
            exprs.append(f"CAST(UNIX_TIMESTAMP(`{name}`) * 1000000 AS SIGNED)")
        elif kind == "bit":
            exprs.append(f"`{name}` + 0")
        else:
            exprs.append(f"`{name}`")
    rows = server.query(f"SELECT {', '.join(exprs)} FROM `{table}`", database=db)
    return sorted((dict(zip([n for n, _ in cols], r)) for r in rows), key=_order)


def _order(row: dict) -> tuple:
    return tuple("" if v is None else str(v) for v in row.values())


def as_server(rows: list[dict], cols: list[tuple[str, str]]) -> list[dict]:
    """Lake rows with the server's columns, valued as :func:`select` gives them (TIME: microseconds
    back to a timedelta; BIGINT UNSIGNED and BIT: decimal(20,0) back to an int; DECIMAL over 38
    digits: text back to a Decimal; TIMESTAMP: to microseconds)."""
    out = []
    for r in rows:
        row = {}
        for name, kind in cols:
            v = r[name]
            if v is not None:
                if kind == "time":
                    v = timedelta(microseconds=v)
                elif kind == "timestamp":
                    v = (v - EPOCH) // timedelta(microseconds=1)
                elif isinstance(v, Decimal) and kind in ("bigint", "bit"):
                    v = int(v)
                elif isinstance(v, str) and kind == "decimal":
                    v = Decimal(v)
            row[name] = v
        out.append(row)
    return sorted(out, key=_order)


def replayed(log: list[dict], cols: list[str]) -> list[dict]:
    """A change log replayed: the rows it leaves (a multiset), as :func:`select` sorts them."""
    order = sorted(log, key=lambda r: (r["_log_file"], r["_log_pos"], r["_event_row"],
                                       r["_change_type"] == "update_postimage"))
    state: collections.Counter = collections.Counter()
    for r in order:
        values = tuple(r[c] for c in cols)
        state[values] += 1 if r["_change_type"] in ("insert", "update_postimage") else -1
    assert all(n >= 0 for n in state.values()), "a row removed that was not there"
    return sorted((dict(zip(cols, v)) for v in state.elements()), key=_order)


def delta_rows(path) -> list[dict]:
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist()


def iceberg_rows(catalog, identifier: str) -> list[dict]:
    return catalog.load_table(identifier).scan().to_arrow().to_pylist()


def delta_position(path) -> tuple[Position, int]:
    """The position the Delta table's last sync wrote, and how many commits have one."""
    found = [json.loads(c["vecbinlog.position"]) for c in DeltaTable(str(path)).history() if "vecbinlog.position" in c]
    return Position.from_offset(found[0]), len(found)


def iceberg_position(catalog, identifier: str) -> tuple[Position, int]:
    """The position the Iceberg table's last sync wrote, and how many catalog commits have one."""
    table = catalog.load_table(identifier)
    found = [s.summary.additional_properties for s in table.snapshots()]
    sequences = {p["vecbinlog.sequence"] for p in found if "vecbinlog.position" in p}
    current = table.current_snapshot().summary.additional_properties
    return Position.from_offset(json.loads(current["vecbinlog.position"])), len(sequences)


# -- the workload, step by step ---------------------------------------------------------------
@dataclass
class Run:
    """The server and the lake tables after one step."""

    rows: dict[str, list[dict]]  #: the server's SELECT of each table
    columns: dict[str, list[tuple[str, str]]]
    at: Position  #: where the archive's copies end
    archive: Path  #: a copy of the archive as it was then
    results: dict[tuple[str, str], SyncResult] = field(default_factory=dict)  #: (format, table) ->
    lake: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  #: (format, table) -> rows read back
    warnings: list[warnings.WarningMessage] = field(default_factory=list)


def settled(server) -> Position:
    """Where the server's binlog ends once it has written all it will (a BINLOG_CHECKPOINT may follow a commit)."""
    for _ in range(100):
        name, pos = server.query("SHOW MASTER STATUS")[0][:2]
        if (server.binlog_dir / name).stat().st_size == int(pos):
            break
        time.sleep(0.05)
    return Position(name, int(pos))


def copy_archive(server, first: str, *folders: Path) -> Position:
    """The server's files from ``first`` on, copied as they are now (the newest one still written);
    returns where the copies end (every transaction in them is complete)."""
    settled(server)
    files = server.binlog_files()
    names = [f.name for f in files]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for f in files[names.index(first):]:
            shutil.copy(f, folder / f.name)
    newest = folders[-1] / files[-1].name
    assert all((f / newest.name).read_bytes() == newest.read_bytes() for f in folders)
    return Position(newest.name, newest.stat().st_size)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """pyiceberg's SQL catalog on SQLite, its warehouse beside it."""
    return iceberg_catalog(f"sqlite:///{tmp_path_factory.mktemp('iceberg')}/catalog.db")


@pytest.fixture(scope="module")
def runs(mariadb_server, tmp_path_factory, catalog) -> list[Run]:
    """The four steps, each followed by a sync of every table into Delta and Iceberg."""
    s = mariadb_server
    s.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    s.flush_binary_logs()
    first = s.current_binlog().name
    root = tmp_path_factory.mktemp("lake")
    archive = root / "archive"
    out = []
    for k, sql in enumerate(STEPS):
        s.execute(*sql, database=DB)
        at = copy_archive(s, first, archive, root / f"archive-{k + 1}")
        run = Run({t: select(s, DB, t) for t in TABLES}, {t: columns(s, DB, t) for t in TABLES}, at,
                  root / f"archive-{k + 1}")
        for table in TABLES:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                run.results["delta", table] = sync_delta(str(archive), f"{DB}.{table}", str(root / "delta" / table),
                                                         max_bytes=MAX_BYTES)
                run.lake["delta", table] = delta_rows(root / "delta" / table)
                run.results["iceberg", table] = sync_iceberg(str(archive), f"{DB}.{table}", f"{DB}.{table}",
                                                             catalog=catalog, max_bytes=MAX_BYTES)
                run.lake["iceberg", table] = iceberg_rows(catalog, f"{DB}.{table}")
            run.warnings.extend(caught)
        out.append(run)
    return out


FORMATS = ["delta", "iceberg"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("table", ["t", "pair"])
def test_lake_table_equals_the_server_after_every_run(runs, fmt, table):
    for k, run in enumerate(runs, 1):
        assert as_server(run.lake[fmt, table], run.columns[table]) == run.rows[table], f"after step {k}"
        result = run.results[fmt, table]
        assert result.mode == "merge" and result.end == run.at, f"after step {k}"
        assert result.created == (k == 1)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_without_a_key_is_its_change_log(runs, fmt):
    """``nokey`` has no primary key: every row image is appended, once; replayed, the change
    log gives the server's rows (duplicates included); a LakeWarning said so once, when the
    table was made."""
    for k, run in enumerate(runs, 1):
        log = run.lake[fmt, "nokey"]
        assert replayed(log, ["x", "note"]) == run.rows["nokey"], f"after step {k}"
        where = [(r["_log_file"], r["_log_pos"], r["_event_row"], r["_change_type"]) for r in log]
        assert len(where) == len(set(where)), "a change landed twice"
        assert run.results[fmt, "nokey"].mode == "append"
    said = [w for w in runs[0].warnings if issubclass(w.category, LakeWarning)]
    assert len(said) == 2 and all("lake.nokey has no primary key" in str(w.message) for w in said)  # Delta, Iceberg
    assert not any(issubclass(w.category, LakeWarning) for run in runs[1:] for w in run.warnings)
    changes = sum(run.results[fmt, "nokey"].changes for run in runs)
    assert changes == 3 + 2 + 1 + 1  # inserts, an update and a delete, an insert, a delete
    assert sum(run.results[fmt, "nokey"].appended for run in runs) == changes + 1  # the update's two images


@pytest.mark.parametrize("fmt", FORMATS)
def test_results_count_what_changed_on_the_server(runs, fmt):
    """A run's upserts and deletes are the keys whose row changed, came or went between two
    SELECTs (no row here is updated to the values it had); a run of several KiB of binlog made
    several commits; a run with nothing new makes none."""
    for k in (1, 3):  # steps 2 and 4 of t: the same columns before and after
        before = {r["id"]: r for r in runs[k - 1].rows["t"]}
        after = {r["id"]: r for r in runs[k].rows["t"]}
        result = runs[k].results[fmt, "t"]
        assert result.deleted == len(before.keys() - after.keys()), f"step {k + 1}"
        assert result.upserted == sum(1 for i, r in after.items() if before.get(i) != r), f"step {k + 1}"
        assert result.start == runs[k - 1].at
    assert runs[1].results[fmt, "t"].commits > 1
    assert runs[3].results[fmt, "pair"].restarts == 1  # TRUNCATE TABLE pair


def test_nothing_new_commits_nothing(runs, catalog, tmp_path):
    archive = runs[-1].archive
    path = tmp_path / "again"
    first = sync_delta(str(archive), f"{DB}.pair", str(path))
    version = DeltaTable(str(path)).version()
    again = sync_delta(str(archive), f"{DB}.pair", str(path))
    assert (again.commits, again.start, again.end) == (0, first.end, first.end)
    assert again.summary() == f"{DB}.pair -> {path} (delta): nothing new; at {runs[-1].at}"
    assert DeltaTable(str(path)).version() == version
    assert as_server(delta_rows(path), runs[-1].columns["pair"]) == runs[-1].rows["pair"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_lake_types(runs, catalog, fmt):
    """The columns of t in the lake, as docs/lake.md says per format."""
    if fmt == "delta":
        schema = pa.schema(DeltaTable(str(runs[-1].archive.parent / "delta" / "t")).schema().to_arrow())
    else:
        schema = catalog.load_table(f"{DB}.t").schema().as_arrow()
    types = {f.name: f.type for f in schema}
    small = pa.int8() if fmt == "delta" else pa.int32()
    want = {"id": pa.int32(), "v": pa.string(), "n": pa.int64(), "big": pa.decimal128(20, 0), "d": pa.decimal128(8, 2),
            "wide": pa.string(), "at": pa.timestamp("us"), "tm": pa.int64(), "e": pa.string(), "s": pa.string(),
            "j": pa.string(), "g": pa.binary(), "ts": pa.timestamp("us", "UTC"), "f": pa.float64(), "tiny": small,
            "yr": pa.int32(), "bits": pa.decimal128(20, 0), "bin": pa.binary(), "extra": pa.string()}
    norm = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    assert {k: norm.get(v, v) for k, v in types.items()} == want
    assert list(types)[:len(want) - 1] == list(want)[:-1] and list(types)[-1] == "extra"  # the new column, last


def test_rolled_back_changes_are_in_the_archive_not_in_the_lake(runs):
    """The changes undone by ROLLBACK TO SAVEPOINT are in the binlog (a MyISAM change keeps them
    there), marked rolled back; those of a transaction rolled back are not logged at all; the
    lake never had either."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
        kept = vecbinlog.read_table(str(runs[-1].archive), f"{DB}.t", rolled_back="keep")
    undone = kept.filter(pa.compute.equal(kept.column("_outcome").cast(pa.string()), "rollback"))
    assert sorted(undone.column("id").to_pylist()) == [4, 4, 5, 5, 6, 6, 701]
    for run in runs:
        for fmt in FORMATS:
            assert not {r["v"] for r in run.lake[fmt, "t"]} & {"undone", "never"}
            assert 701 not in {r["id"] for r in run.lake[fmt, "t"]}


def test_duckdb_reads_the_same(runs, catalog):
    """DuckDB (when installed) reading the lake tables gives the server's rows too (Delta through
    deltalake's pyarrow dataset, Iceberg through pyiceberg's scan)."""
    duckdb = pytest.importorskip("duckdb")
    root = runs[-1].archive.parent
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")

    def rows(sql: str) -> list[dict]:
        rel = con.sql(sql)
        return [dict(zip(rel.columns, r)) for r in rel.fetchall()]

    for table in ("t", "pair"):
        con.register("delta_lake", DeltaTable(str(root / "delta" / table)).to_pyarrow_dataset())
        assert as_server(rows("SELECT * FROM delta_lake"), runs[-1].columns[table]) == runs[-1].rows[table]
        catalog.load_table(f"{DB}.{table}").scan().to_duckdb("ice", connection=con)
        assert as_server(rows("SELECT * FROM ice"), runs[-1].columns[table]) == runs[-1].rows[table]


# -- killed before a commit ------------------------------------------------------------------------
def _child(fmt: str, archive: Path, table: str, target: str, catalog_uri: str, hang: tuple[int, Path] | None = None
           ) -> subprocess.Popen:
    """``tests/support/lake_sync.py`` in a process of its own (a few KiB of binlog per commit)."""
    cmd = [sys.executable, "-m", "tests.support.lake_sync", fmt, str(archive), f"{DB}.{table}", target,
           "--catalog", catalog_uri, "--max-bytes", str(MAX_BYTES)]
    if hang is not None:
        cmd += ["--hang-at", str(hang[0]), str(hang[1])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(marker: Path, child: subprocess.Popen, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if child.poll() is not None:
            pytest.fail(f"the sync ended before its commit (exit {child.returncode}): {child.communicate()[1]}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail("the sync did not reach its commit")
        time.sleep(0.05)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sync_killed_before_its_commit_is_taken_again_once(runs, tmp_path, fmt):
    """A sync of the whole archive is killed (SIGKILL) once two commits are made and the rows of
    the third are read, before it is written: the table holds the changes up to the second
    commit's position; the next sync starts there and leaves the table equal to the server's
    SELECT, each change once (the change log of ``nokey`` has no change twice)."""
    archive, final = runs[-1].archive, runs[-1]
    catalog_uri = f"sqlite:///{tmp_path}/catalog.db"
    catalog = iceberg_catalog(catalog_uri)
    for table in ("t", "nokey"):
        target = str(tmp_path / table) if fmt == "delta" else f"{DB}.{table}"
        marker = tmp_path / f"{table}.hanging"
        child = _child(fmt, archive, table, target, catalog_uri, hang=(2, marker))
        try:
            _wait_for(marker, child)
            child.send_signal(signal.SIGKILL)
        finally:
            child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL
        about = Position.from_offset(dict(zip(("file", "pos"), marker.read_text().strip().rsplit(":", 1))))
        at, commits = delta_position(target) if fmt == "delta" else iceberg_position(catalog, target)
        assert commits == 2 and at < about  # the third commit's rows were read, none written
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
            done = (sync_delta(str(archive), f"{DB}.{table}", target, max_bytes=MAX_BYTES) if fmt == "delta" else
                    sync_iceberg(str(archive), f"{DB}.{table}", target, catalog=catalog, max_bytes=MAX_BYTES))
        assert done.start == at and done.end == final.at and done.commits >= 1
        rows = delta_rows(target) if fmt == "delta" else iceberg_rows(catalog, target)
        if table == "nokey":
            assert replayed(rows, ["x", "note"]) == final.rows["nokey"]
            where = [(r["_log_file"], r["_log_pos"], r["_event_row"], r["_change_type"]) for r in rows]
            assert len(where) == len(set(where)) == 3 + 2 + 1 + 1 + 1
        else:
            assert as_server(rows, final.columns[table]) == final.rows[table]
        positions = [p for p, _ in [delta_position(target) if fmt == "delta" else iceberg_position(catalog, target)]]
        assert positions == [final.at]


# -- object storage --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def s3_server():
    """moto's S3 server on 127.0.0.1 (a free port) in a process of its own: delta-rs keeps the GIL
    while it waits for a request, which an S3 server on a thread of this process (tests/test_archives.py)
    would then never answer. A bucket ``binlogs``; credentials in the environment. Yields (boto3 client,
    the archive URIs' query, endpoint)."""
    import boto3

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"127.0.0.1:{port}"
    try:
        with pytest.MonkeyPatch.context() as env:
            for k, v in CREDENTIALS.items():
                env.setenv(k, v)
            logging.getLogger("botocore").setLevel(logging.ERROR)
            client = boto3.client("s3", endpoint_url=f"http://{endpoint}")
            for _ in range(200):
                try:
                    client.create_bucket(Bucket="binlogs")
                    break
                except Exception:  # not listening yet
                    if server.poll() is not None:
                        pytest.fail(f"moto's server ended (exit {server.returncode})")
                    time.sleep(0.05)
            yield client, f"?endpoint_override={endpoint}&scheme=http&region=us-east-1", endpoint
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_delta_in_s3_from_an_archive_in_s3(runs, s3_server):
    """The archive uploaded to an S3 server as it grew (up to step 2, then all of it), the Delta
    table in the same server: each sync leaves it equal to the server's SELECT then."""
    client, query, endpoint = s3_server
    client.create_bucket(Bucket="lake")
    options = {"AWS_ENDPOINT_URL": f"http://{endpoint}", "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
               "AWS_ACCESS_KEY_ID": CREDENTIALS["AWS_ACCESS_KEY_ID"],
               "AWS_SECRET_ACCESS_KEY": CREDENTIALS["AWS_SECRET_ACCESS_KEY"], "AWS_S3_ALLOW_UNSAFE_RENAME": "true"}
    for k in (1, 3):
        for f in sorted(runs[k].archive.iterdir()):
            client.put_object(Bucket="binlogs", Key=f"lakeset/{f.name}", Body=f.read_bytes())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
            done = sync_delta(f"s3://binlogs/lakeset{query}", f"{DB}.t", "s3://lake/t", storage_options=options,
                              max_bytes=MAX_BYTES)
        assert done.end == runs[k].at and done.created == (k == 1)
        rows = DeltaTable("s3://lake/t", storage_options=options).to_pyarrow_table().to_pylist()
        assert as_server(rows, runs[k].columns["t"]) == runs[k].rows["t"], f"after step {k + 1}"
    assert sync_delta(f"s3://binlogs/lakeset{query}", f"{DB}.t", "s3://lake/t", storage_options=options).commits == 0


# -- schema changes, names from the DDL -------------------------------------------------------------
def _small_workload(server, db: str, tmp_path: Path):
    """A database of its own and a function that runs SQL in it, then copies the archive and
    returns where it ends."""
    server.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    server.flush_binary_logs()
    first = server.current_binlog().name
    archive = tmp_path / "archive"

    def step(*sql: str) -> Position:
        server.execute(*sql, database=db)
        return copy_archive(server, first, archive)

    return archive, step


def test_a_type_change_the_lake_cannot_follow(mariadb_server, tmp_path):
    """INT to BIGINT: Iceberg widens int to long; Delta cannot, and the sync is a LakeSchemaError
    naming the column, the table and its position as they were. INT to VARCHAR: neither can."""
    archive, step = _small_workload(mariadb_server, "lakeevo", tmp_path)
    catalog = iceberg_catalog(f"sqlite:///{tmp_path}/catalog.db")
    path = str(tmp_path / "delta")

    def delta():
        return sync_delta(str(archive), "lakeevo.e", path)

    def iceberg():
        return sync_iceberg(str(archive), "lakeevo.e", "lakeevo.e", catalog=catalog)

    def rows(fmt: str) -> list[dict]:
        got = delta_rows(path) if fmt == "delta" else iceberg_rows(catalog, "lakeevo.e")
        return as_server(got, columns(mariadb_server, "lakeevo", "e"))

    first = step("CREATE TABLE e (id INT PRIMARY KEY, c INT, w INT)", "INSERT INTO e VALUES (1, 1, 1), (2, 2, 2)")
    assert delta().end == iceberg().end == first
    before = select(mariadb_server, "lakeevo", "e")
    step("ALTER TABLE e MODIFY c BIGINT", f"INSERT INTO e VALUES (3, {2**40}, 3)")
    with pytest.raises(LakeSchemaError, match=r"column 'c' is int64 .* Delta table's column is int32") as caught:
        delta()
    assert caught.value.offset == first.pos and caught.value.path.endswith(first.file)
    assert rows("delta") == before and delta_position(path) == (first, 1)
    assert iceberg().commits == 1 and rows("iceberg") == select(mariadb_server, "lakeevo", "e")
    assert catalog.load_table("lakeevo.e").schema().find_field("c").field_type.__class__.__name__ == "LongType"
    widened = iceberg_position(catalog, "lakeevo.e")
    step("ALTER TABLE e MODIFY w VARCHAR(10)", "UPDATE e SET w = 'text' WHERE id = 1")
    with pytest.raises(LakeSchemaError, match=r"column 'w' is string .* Iceberg table's column is int32"):
        iceberg()
    assert iceberg_position(catalog, "lakeevo.e") == widened


def test_names_and_key_from_the_ddl_before_the_stretch(mariadb_server, mariadb_globals, tmp_path):
    """binlog_row_metadata=MINIMAL: TABLE_MAPs have no names and no key. The first sync reads
    the CREATE TABLE in its stretch; the second starts in a later file, without DDL, and finds
    names and key in the archive's first file: both leave the tables equal to the server's SELECT."""
    mariadb_globals(binlog_row_metadata="MINIMAL")
    archive, step = _small_workload(mariadb_server, "lakemin", tmp_path)
    catalog = iceberg_catalog(f"sqlite:///{tmp_path}/catalog.db")
    path = str(tmp_path / "delta")
    cols = [("id", "int"), ("v", "varchar"), ("n", "int")]
    step("CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(10) CHARACTER SET utf8mb4, n INT UNSIGNED)",
         "INSERT INTO m VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3)", "FLUSH BINARY LOGS")
    for k, sql in enumerate([(), ("UPDATE m SET id = 10, v = 'ten' WHERE id = 1", "DELETE FROM m WHERE id = 2",
                                  "INSERT INTO m VALUES (4, 'four', 4294967295)")]):
        at = step(*sql)
        server = select(mariadb_server, "lakemin", "m")
        for fmt in FORMATS:
            done = (sync_delta(str(archive), "lakemin.m", path) if fmt == "delta"
                    else sync_iceberg(str(archive), "lakemin.m", "lakemin.m", catalog=catalog))
            got = delta_rows(path) if fmt == "delta" else iceberg_rows(catalog, "lakemin.m")
            assert as_server(got, cols) == server, (fmt, k)
            assert (done.mode, done.key, done.end) == ("merge", ("id",), at)


# -- the command line -------------------------------------------------------------------------------
def test_cli_sync(runs, tmp_path, capsys):
    """``vecbinlog sync`` into Delta and Iceberg: one line saying what was done, the tables equal
    the server's SELECT; usage errors in one line, exit 2."""
    from vecbinlog.cli import main

    archive, final = str(runs[-1].archive), runs[-1]
    path = tmp_path / "orders"

    def sync(*args: str) -> tuple[int, str, str]:
        code = main(["sync", archive, *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = sync("--table", f"{DB}.t", "--delta", str(path), "--max-bytes", "1m")  # the archive in one commit
    assert code == 0 and as_server(delta_rows(path), final.columns["t"]) == final.rows["t"]
    assert out == (f"{DB}.t -> {path} (delta): {sum(r.results['delta', 't'].changes for r in runs)} changes, "
                   f"{len(final.rows['t'])} upserted, 0 deleted; created, 1 commit; at {final.at}\n")
    assert sync("-t", f"{DB}.t", "--delta", str(path)) == (0, f"{DB}.t -> {path} (delta): nothing new; at {final.at}\n", "")
    code, out, _ = sync("-t", f"{DB}.t", "--delta", str(tmp_path / "early"), "--until", str(runs[1].at), "-q")
    assert code == 0 and out.endswith(f"; created, 1 commit; at {runs[1].at}\n")
    assert as_server(delta_rows(tmp_path / "early"), runs[1].columns["t"]) == runs[1].rows["t"]
    uri = f"sqlite:///{tmp_path}/catalog.db"
    code, out, _ = sync("-t", f"{DB}.pair", "--iceberg-table", "cli.pair", "--iceberg-catalog", uri)
    assert code == 0 and out.startswith(f"{DB}.pair -> cli.pair (iceberg): ") and out.endswith(f"at {final.at}\n")
    assert as_server(iceberg_rows(iceberg_catalog(uri), "cli.pair"), final.columns["pair"]) == final.rows["pair"]
    code, out, err = sync("-t", f"{DB}.pair", "--delta", str(path))
    assert (code, out) == (2, "") and err == f"vecbinlog: error: {path} holds the changes of {DB}.t, not {DB}.pair\n"
    code, _, err = sync("-t", f"{DB}.pair", "--iceberg-table", "cli.pair")
    assert code == 2 and err == "vecbinlog: error: --iceberg-table needs --iceberg-catalog URI\n"
    with pytest.raises(SystemExit) as usage:
        main(["sync", archive, "-t", f"{DB}.t"])  # neither --delta nor --iceberg-table
    assert usage.value.code == 2 and "one of the arguments --delta --iceberg-table is required" in capsys.readouterr().err



@pytest.mark.parametrize("fmt", FORMATS)
def test_two_syncs_at_once_do_not_both_commit(runs, tmp_path, fmt):
    """A second sync of the change log runs to its end while the first, which read the same
    position, is about to commit: the first is a LakeError and commits nothing, and the table
    holds each change once."""
    archive = str(runs[-1].archive)
    catalog = iceberg_catalog(f"sqlite:///{tmp_path}/catalog.db")

    def sync(**options) -> SyncResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
            if fmt == "delta":
                return sync_delta(archive, f"{DB}.nokey", str(tmp_path / "log"), **options)
            return sync_iceberg(archive, f"{DB}.nokey", f"{DB}.log", catalog=catalog, **options)

    with pytest.warns(LakeWarning):
        sync(until=runs[0].at)
    done = []

    def meanwhile(step) -> None:
        if step.stage == "commit" and not done:
            done.append(sync())

    with pytest.raises(LakeError, match="at the same time"):
        sync(progress=meanwhile)
    assert done[0].end == runs[-1].at
    rows = delta_rows(tmp_path / "log") if fmt == "delta" else iceberg_rows(catalog, f"{DB}.log")
    assert replayed(rows, ["x", "note"]) == runs[-1].rows["nokey"]
    assert len(rows) == 3 + 2 + 1 + 1 + 1


def test_minimal_row_images_are_refused(mariadb_server, mariadb_globals, tmp_path):
    """binlog_row_image=MINIMAL: an update's images lack the columns it did not set, and are
    refused, nothing written. A table without a key has every column in its images even so
    (the server has nothing else to find a row by): its change log is complete."""
    mariadb_globals(binlog_row_image="MINIMAL")
    archive, step = _small_workload(mariadb_server, "lakeimg", tmp_path)
    step("CREATE TABLE k (id INT PRIMARY KEY, a INT, b INT)", "CREATE TABLE nk (a INT, b INT)",
         "INSERT INTO k VALUES (1, 1, 1)", "INSERT INTO nk VALUES (1, 1)",
         "UPDATE k SET a = 2 WHERE id = 1", "UPDATE nk SET a = 2")
    with pytest.raises(vecbinlog.UnsupportedError, match="FULL row images"):
        sync_delta(str(archive), "lakeimg.k", str(tmp_path / "k"))
    assert not DeltaTable.is_deltatable(str(tmp_path / "k"))
    with pytest.warns(LakeWarning, match="no primary key"):
        sync_delta(str(archive), "lakeimg.nk", str(tmp_path / "nk"))
    assert replayed(delta_rows(tmp_path / "nk"), ["a", "b"]) == select(mariadb_server, "lakeimg", "nk")


def test_geometry_srids_are_said_not_kept(mariadb_server, tmp_path):
    """A GEOMETRY column is its WKB in the lake (the server's ST_AsBinary); SRIDs other than 0,
    which WKB has no place for, are named in a LakeWarning."""
    archive, step = _small_workload(mariadb_server, "lakegeo", tmp_path)
    step("CREATE TABLE g (id INT PRIMARY KEY, shape GEOMETRY)",
         "INSERT INTO g VALUES (1, ST_GeomFromText('POINT(1 2)', 4326)), (2, ST_GeomFromText('LINESTRING(0 0, 1 1)'))")
    with pytest.warns(LakeWarning, match=r"column 'shape': GEOMETRY values with SRIDs \[4326\]"):
        sync_delta(str(archive), "lakegeo.g", str(tmp_path / "g"))
    assert as_server(delta_rows(tmp_path / "g"), columns(mariadb_server, "lakegeo", "g")) == \
        select(mariadb_server, "lakegeo", "g")
