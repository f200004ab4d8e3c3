"""A real MariaDB server writes the binlog; vecbinlog's change log must agree with the server.

For every binlog_row_metadata (FULL, MINIMAL, NO_LOG) x binlog_row_image (FULL, MINIMAL,
NOBLOB) x binlog_checksum (CRC32, NONE):

* replaying the decoded change log by primary key gives exactly the rows ``SELECT`` returns;
* every row image equals what ``mariadb-binlog -vv --base64-output=DECODE-ROWS`` prints for
  it: the same columns present, the same values.
"""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import Future

import numpy as np
import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.collations import decode_text

from .support.mariadb import INT_BITS, VVInt, hexlit, parse_vv, run_mariadb_binlog_vv, vv_float_text

pytestmark = pytest.mark.mariadb

INT_COLS = [  # name, SQL type, bits, unsigned
    ("t", "TINYINT", 8, False), ("tu", "TINYINT UNSIGNED", 8, True),
    ("s", "SMALLINT", 16, False), ("su", "SMALLINT UNSIGNED", 16, True),
    ("m", "MEDIUMINT", 24, False), ("mu", "MEDIUMINT UNSIGNED", 24, True),
    ("i", "INT", 32, False), ("iu", "INT UNSIGNED", 32, True),
    ("b", "BIGINT", 64, False), ("bu", "BIGINT UNSIGNED", 64, True),
]
TEXT_COLS = [  # name, SQL type, charset of the column (None: binary)
    ("c", "CHAR(10) CHARACTER SET utf8mb4", "utf8mb4"),
    ("v", "VARCHAR(300) CHARACTER SET utf8mb4", "utf8mb4"),  # 1200 bytes: 2-byte lengths
    ("vs", "VARCHAR(20) CHARACTER SET utf8mb4", "utf8mb4"),
    ("l1", "VARCHAR(40) CHARACTER SET latin1", "latin1"),
    ("tx", "TEXT CHARACTER SET utf8mb4", "utf8mb4"),
    ("bl", "BLOB", None),
    ("vb", "VARBINARY(300)", None),
]
WIDE_COLS = [f"a_column_with_a_rather_long_name_{k:02d}" for k in range(40)]  # COLUMN_NAME TLV > 250 bytes


def _lim(bits: int, unsigned: bool) -> tuple[int, int]:
    return (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _int_row(k: int, pick: int) -> list[int | None]:
    out = []
    for j, (_, _, bits, uns) in enumerate(INT_COLS):
        lo, hi = _lim(bits, uns)
        out.append([lo, hi, 0, 1, -1 if not uns else 2, None][(pick + j) % 6] if k else None)
    return out


def _sql(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return hexlit(v)
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"
    return repr(v)


TEXTS = [
    ["ab", "x" * 299 + "é", "", "café", "emoji 😀🎉 ok", b"\x00\xff\x01bin", b""],
    ["", "", "é😀", "ÀÉÎÕÜ", "", b"", b"\x00" * 7],
    [None, None, None, None, None, None, None],
    ["trail  ", "multi\nline\ttab 'q' \\", "ü", "plain", "t" * 3000, bytes(range(256)), bytes(range(200))],
]


def _workload(db: str) -> list[str]:
    ints = ", ".join(f"{n} {t} NULL" for n, t, _, _ in INT_COLS)
    texts = ", ".join(f"{n} {t} NULL" for n, t, _ in TEXT_COLS)
    wide = ", ".join(f"{n} INT NULL" for n in WIDE_COLS)
    sql = [
        f"DROP DATABASE IF EXISTS {db}",
        f"CREATE DATABASE {db}",
        f"USE {db}",
        f"CREATE TABLE ints (id INT NOT NULL PRIMARY KEY, {ints}) ENGINE=InnoDB",
        f"CREATE TABLE texts (id INT NOT NULL PRIMARY KEY, {texts}, f FLOAT NULL, d DOUBLE NULL) ENGINE=InnoDB",
        f"CREATE TABLE wide (id INT NOT NULL PRIMARY KEY, {wide}) ENGINE=InnoDB",
    ]
    # single-row and multi-row inserts
    sql.append("INSERT INTO ints VALUES " + ", ".join(
        "(" + ", ".join(_sql(v) for v in [k, *_int_row(k, k)]) + ")" for k in range(0, 6)))
    for k in range(6, 12):
        sql.append("INSERT INTO ints VALUES (" + ", ".join(_sql(v) for v in [k, *_int_row(k, k * 7)]) + ")")
    floats = [(1.5, -2.25), (-0.0, 1e300), (None, None), (3.0, 0.1)]
    sql.append("INSERT INTO texts VALUES " + ", ".join(
        "(" + ", ".join(_sql(v) for v in [k, *TEXTS[k], *floats[k]]) + ")" for k in range(4)))
    sql.append("INSERT INTO wide VALUES " + ", ".join(
        "(" + ", ".join(str(k * 100 + j) for j in range(41)) + ")" for k in range(3)))
    # updates: one column, several rows, NULLing, un-NULLing, the primary key itself
    sql += [
        "UPDATE ints SET t = 5 WHERE id = 1",
        "UPDATE ints SET bu = 18446744073709551615, b = -9223372036854775808 WHERE id % 3 = 0",
        "UPDATE ints SET iu = NULL, s = -32768 WHERE id IN (2, 4)",
        "UPDATE ints SET id = 100 WHERE id = 11",
        "UPDATE texts SET vs = 'changed 😀', bl = X'00ff' WHERE id = 1",
        "UPDATE texts SET c = NULL WHERE id = 0",
        "UPDATE texts SET f = 2.5 WHERE id = 3",  # blobs unchanged: absent under NOBLOB
        "UPDATE wide SET a_column_with_a_rather_long_name_39 = -1 WHERE id = 100",
        # deletes: one, several
        "DELETE FROM ints WHERE id = 5",
        "DELETE FROM ints WHERE id IN (7, 8)",
        "DELETE FROM texts WHERE id = 2",
        "INSERT INTO ints (id, t, tu, s, su, m, mu, i, iu, b, bu) VALUES (5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)",
    ]
    return sql


CONFIGS = list(itertools.product(["FULL", "MINIMAL", "NO_LOG"], ["FULL", "MINIMAL", "NOBLOB"], ["CRC32", "NONE"]))


def _overrides(metadata: str):
    """What the user tells vecbinlog when the binlog does not say it (NO_LOG)."""
    if metadata != "NO_LOG":
        return {}, {}
    sign = {f"@{j + 2}": uns for j, (_, _, _, uns) in enumerate(INT_COLS)}
    charsets = {f"@{j + 2}": cs or "binary" for j, (_, _, cs) in enumerate(TEXT_COLS)}
    return {"*": sign}, {"*": charsets}


@pytest.fixture(scope="module")
def decoded(mariadb_server):
    """Run the workload under every configuration once; keep the binlog and the server's view."""
    out = {}
    server = mariadb_server
    try:
        for k, (metadata, image, checksum) in enumerate(CONFIGS):
            server.set_global("binlog_row_metadata", metadata)
            server.set_global("binlog_row_image", image)
            server.set_global("binlog_checksum", checksum)
            db = f"rt{k}"
            path = server.capture_binlog(*_workload(db))
            final = {t: server.query(f"SELECT * FROM {db}.{t} ORDER BY id") for t in ("ints", "texts", "wide")}
            columns = {t: [r[0] for r in server.query(f"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='{db}' AND TABLE_NAME='{t}' ORDER BY ORDINAL_POSITION")] for t in ("ints", "texts", "wide")}
            out[(metadata, image, checksum)] = (db, path, final, columns)
    finally:
        for name, value in [("binlog_row_metadata", "FULL"), ("binlog_row_image", "FULL"), ("binlog_checksum", "CRC32")]:
            server.set_global(name, value)
    return out


def _read(path, metadata: str) -> dict[str, pa.Table]:
    sign, cs = _overrides(metadata)
    # ddl=False: what the binlog's metadata and the explicit overrides give (tests/tables/test_ddl.py
    # checks what the CREATE TABLE statements in the same files give)
    with vecbinlog.open(path, signedness=sign, charsets=cs, ddl=False) as log:
        return log.read_all()


def _replay(t: pa.Table, ncols: int) -> dict[int, list]:
    """Apply the change log by primary key (column 0), row at a time: the obvious reference."""
    names = t.schema.names[:ncols]
    state: dict[int, list] = {}
    before_key = None
    for row in t.to_pylist():
        vals = [row[n] for n in names]
        present = [n not in row["_absent"] for n in names]
        kind = row["_change_type"]
        if kind == "insert":
            assert all(present)
            state[vals[0]] = vals
        elif kind == "delete":
            del state[vals[0]]
        elif kind == "update_preimage":
            before_key = vals[0]
        else:
            old = state.pop(before_key)
            state[vals[0] if present[0] else before_key] = [v if p else o for v, p, o in zip(vals, present, old)]
    return state


def _same(ours, server, field: pa.Field) -> bool:
    if server is None or ours is None:
        return ours is None and server is None
    if pa.types.is_float32(field.type):
        return np.float32(server) == np.float32(ours)
    if isinstance(server, str) and isinstance(ours, bytes):
        return False
    return ours == server


@pytest.mark.parametrize("config", CONFIGS, ids=["-".join(c) for c in CONFIGS])
def test_replay_equals_select(decoded, config):
    db, path, final, columns = decoded[config]
    tables = _read(path, config[0])
    assert sorted(tables) == [f"{db}.ints", f"{db}.texts", f"{db}.wide"]
    for name in ("ints", "texts", "wide"):
        t = tables[f"{db}.{name}"]
        ncols = len(columns[name])
        expected_names = columns[name] if config[0] == "FULL" else [f"@{k + 1}" for k in range(ncols)]
        assert t.schema.names[:ncols] == expected_names
        state = _replay(t, ncols)
        assert sorted(state) == [r[0] for r in final[name]]
        for row in final[name]:
            got = state[row[0]]
            for c, (ours, theirs) in enumerate(zip(got, row)):
                assert _same(ours, theirs, t.schema.field(c)), (name, row[0], columns[name][c], ours, theirs)


def test_types_follow_the_metadata(decoded):
    for (metadata, image, checksum), (db, path, _, _) in decoded.items():
        if image != "FULL" or checksum != "CRC32":
            continue
        ints = _read(path, metadata)[f"{db}.ints"].schema
        for j, (_, _, bits, uns) in enumerate(INT_COLS):
            want = getattr(pa, f"{'u' if uns else ''}int{32 if bits == 24 else bits}")()
            assert ints.field(j + 1).type == want, (metadata, j)
        texts = _read(path, metadata)[f"{db}.texts"].schema
        for j, (_, _, cs) in enumerate(TEXT_COLS):
            assert texts.field(j + 1).type == (pa.string() if cs else pa.binary()), (metadata, j)
    # and without the user's help or the DDL, NO_LOG means signed integers and bytes for text
    db, path, _, _ = decoded[("NO_LOG", "FULL", "CRC32")]
    with vecbinlog.open(path, ddl=False) as log:
        schema = log.read_table(f"{db}.texts").schema
        assert all(schema.field(j + 1).type == pa.binary() for j in range(len(TEXT_COLS)))
        assert log.read_table(f"{db}.ints").schema.field("@3").type == pa.int8()
    # with the CREATE TABLE statements of the log, NO_LOG gives what FULL metadata gives
    full_db, full_path, _, _ = decoded[("FULL", "FULL", "CRC32")]
    for name in ("ints", "texts", "wide"):
        with vecbinlog.open(path) as log, vecbinlog.open(full_path) as full:
            assert log.schema(f"{db}.{name}").remove_metadata() == full.schema(f"{full_db}.{name}").remove_metadata(), name


def _vv_matches(ours, printed, field: pa.Field) -> bool:
    if printed is None:
        return ours is None
    if isinstance(printed, VVInt):
        return ours == printed.value(unsigned=pa.types.is_unsigned_integer(field.type))
    if field.metadata.get(b"mysql_type") == b"FLOAT":
        return vv_float_text(ours) == vv_float_text(printed)
    if isinstance(printed, float):
        return ours == printed
    if pa.types.is_string(field.type):
        return ours == decode_text(printed, field.metadata[b"mysql_charset"].decode())
    return ours == printed


@pytest.mark.parametrize("config", CONFIGS, ids=["-".join(c) for c in CONFIGS])
def test_images_equal_mariadb_binlog_vv(decoded, config):
    db, path, _, _ = decoded[config]
    tables = _read(path, config[0])
    printed = [im for im in parse_vv(run_mariadb_binlog_vv(path)) if im.table.startswith(f"{db}.")]
    ours = []
    for name in ("ints", "texts", "wide"):
        for row in tables[f"{db}.{name}"].to_pylist():
            ours.append((f"{db}.{name}", row))
    ours.sort(key=lambda x: (x[1]["_log_pos"], x[1]["_event_row"], x[1]["_change_type"] == "update_postimage"))
    assert len(ours) == len(printed)
    kinds = {"insert": "insert", "delete": "delete", "update_preimage": "update_before", "update_postimage": "update_after"}
    for (table, row), im in zip(ours, printed):
        assert im.table == table and im.kind == kinds[row["_change_type"]]
        assert row["_log_pos"] in (im.event_positions or (im.pos,))
        t = tables[table]
        ncols = len(t.schema.names) - len(vecbinlog.decode.batch.METADATA_FIELDS)
        names = t.schema.names[:ncols]
        shown = im.as_dict()
        assert sorted(shown) == [k + 1 for k, n in enumerate(names) if n not in row["_absent"]]
        for k, value in shown.items():
            field = t.schema.field(k - 1)
            assert _vv_matches(row[names[k - 1]], value, field), (table, row["_log_pos"], names[k - 1], row[names[k - 1]], value)
        assert all(int_bits in INT_BITS for int_bits in [v.typestr for v in im.values if v.typestr.endswith("INT")])


def test_checksum_none_and_crc32_give_the_same_change_log(decoded):
    for metadata, image in itertools.product(["FULL", "MINIMAL", "NO_LOG"], ["FULL", "MINIMAL", "NOBLOB"]):
        a = _read(decoded[(metadata, image, "CRC32")][1], metadata)
        b = _read(decoded[(metadata, image, "NONE")][1], metadata)
        for (na, ta), (nb, tb) in zip(sorted(a.items()), sorted(b.items())):
            drop = ["_log_pos", "_commit_timestamp", "_log_file", "_gtid", "_transaction_pos", "_xid"]
            assert ta.drop_columns(drop).equals(tb.drop_columns(drop)), (metadata, image, na)


def test_names_signedness_charsets_given_by_the_user(decoded):
    # MariaDB's default NO_LOG: no names, no signedness, no charsets; the user says them.
    db, path, final, columns = decoded[("NO_LOG", "FULL", "CRC32")]
    sign, cs = _overrides("NO_LOG")
    with vecbinlog.open(path, names={f"{db}.ints": columns["ints"]}, signedness=sign, charsets=cs) as log:
        ints = log.read_table(f"{db}.ints")
        assert ints.schema.names[: len(columns["ints"])] == columns["ints"]
        assert ints.schema.field("bu").type == pa.uint64()
        assert _replay(ints, len(columns["ints"])) == {r[0]: list(r) for r in final["ints"]}
        with pytest.raises(ValueError, match="names= gives 2 column names"):
            vecbinlog.open(path, names={f"{db}.ints": ["a", "b"]}).read_table(f"{db}.ints")


@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_interleaved_tables_of_one_shape_equal_select(mariadb_server, image):
    """Three tables stored alike (and one not), with multi-row events interleaved in one
    transaction: each table's change log replays to the server's SELECT."""
    server = mariadb_server
    shape = "(id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL, n INT NULL)"
    sql = ["DROP DATABASE IF EXISTS shapes", "CREATE DATABASE shapes", "USE shapes"]
    sql += [f"CREATE TABLE s{k} {shape}" for k in range(3)]
    sql.append("CREATE TABLE other (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL)")
    sql.append("BEGIN")
    for k in range(3):
        for t in range(3):
            rows = ", ".join(f"({k * 100 + i}, {'NULL' if i % 4 == 0 else repr(f's{t}-{k}-{i}')}, "
                             f"{'NULL' if i % 5 == 0 else i * (t + 1)})" for i in range(1 + 7 * t + k))
            sql.append(f"INSERT INTO s{t} VALUES {rows}")
        sql.append(f"INSERT INTO other VALUES ({k}, 'o{k}')")
    sql.append("COMMIT")
    sql += ["UPDATE s1 SET v = 'changed', n = NULL WHERE id % 2 = 0", "DELETE FROM s2 WHERE id % 3 = 0",
            "UPDATE s0 SET id = id + 1000 WHERE id = 100"]
    server.set_global("binlog_row_image", image)
    try:
        path = server.capture_binlog(*sql)
    finally:
        server.set_global("binlog_row_image", "FULL")
    final = {t: server.query(f"SELECT * FROM shapes.{t} ORDER BY id") for t in ("s0", "s1", "s2", "other")}

    with vecbinlog.open(path) as log:
        tables = log.read_all()
    for name, rows in final.items():
        t = tables[f"shapes.{name}"]
        ncols = len(rows[0])
        state = _replay(t, ncols)
        assert sorted(state) == [r[0] for r in rows]
        assert [state[r[0]] for r in rows] == [list(r) for r in rows]


SEGMENT = 64 << 10


def test_a_result_holds_its_values_not_the_walks_room(mariadb_server):
    """MINIMAL images of single-row UPDATEs: the row walk's room for fixed-width values is
    sized by the bytes (a byte an image at least), far more than the images use. Columns
    decoded without a copy (integers) keep the array their bytes are in; the values are moved
    out of such a room first (rows.COMPACT_ROOM_BYTES), so a read's result holds about its own
    size (Arrow's ``nbytes``: 1.9 MB; 1.8 MB held), not every room (before: 7.7 MB held). The
    rows replay to SELECT."""
    import gc
    import tracemalloc

    server = mariadb_server
    cols = ", ".join(f"c{k} BIGINT NULL" for k in range(8))
    sql = ["DROP DATABASE IF EXISTS rooms", "CREATE DATABASE rooms", "USE rooms",
           f"CREATE TABLE t (id INT NOT NULL PRIMARY KEY, {cols})"]
    rnd = np.random.default_rng(20261129)
    sql += [f"INSERT INTO t VALUES ({i}, {', '.join(str(int(v)) for v in rnd.integers(-2**40, 2**40, 8))})"
            for i in range(200)]
    sql += [f"UPDATE t SET c{int(rnd.integers(8))} = {int(rnd.integers(-2**40, 2**40))} WHERE id = {int(rnd.integers(200))}"
            for _ in range(6000)]
    server.set_global("binlog_row_image", "MINIMAL")
    try:
        path = server.capture_binlog(*sql)
    finally:
        server.set_global("binlog_row_image", "FULL")
    final = server.query("SELECT * FROM rooms.t ORDER BY id")

    with vecbinlog.open(path, segment_bytes=SEGMENT) as log:
        log.read_all()  # (kernels loaded, caches made: not counted below)
    gc.collect()
    tracemalloc.start()
    try:
        with vecbinlog.open(path, segment_bytes=SEGMENT) as log:  # (a walk, and a room, a segment)
            tables = log.read_all()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    t = tables["rooms.t"]
    state = _replay(t, 9)
    assert [state[r[0]] for r in final] == [list(r) for r in final]
    assert held < 2 * t.nbytes + (1 << 20), (held, t.nbytes)


@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_small_batches_equal_select(mariadb_server, image):
    """``batch_rows`` cuts the rows of a segment, and of one rows event, into batches of at
    most that many rows, an UPDATE's two images always in one batch: the batches hold the
    rows of a whole-table read, in order, and replay to the server's SELECT. With
    ``segment_bytes=1`` every rows event is walked alone, in pieces. Tables ``f`` and ``g``
    have fixed-width columns only: ``g`` holds no NULL, ``f`` a NULL in a few events."""
    server = mariadb_server
    sql = ["DROP DATABASE IF EXISTS pieces", "CREATE DATABASE pieces", "USE pieces",
           "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL, n SMALLINT NULL)",
           "INSERT INTO t SELECT seq, IF(seq % 7 = 0, NULL, CONCAT('v', seq)), IF(seq % 5 = 0, NULL, seq % 1000) "
           "FROM seq_1_to_3000",
           "UPDATE t SET v = CONCAT(v, '!'), n = NULL WHERE id % 3 = 0",
           "DELETE FROM t WHERE id % 11 = 0",
           "UPDATE t SET id = id + 10000 WHERE id % 13 = 0",
           "CREATE TABLE f (id INT NOT NULL PRIMARY KEY, n SMALLINT NULL)",
           "INSERT INTO f SELECT seq, IF(seq % 1500 = 0, NULL, seq % 30000) FROM seq_1_to_6000",
           "UPDATE f SET n = n + 1 WHERE id % 4 = 0",
           "CREATE TABLE g (id INT NOT NULL PRIMARY KEY, x BIGINT NOT NULL)",
           "INSERT INTO g SELECT seq, seq * 1000003 FROM seq_1_to_6000",
           "UPDATE g SET x = -x WHERE id % 3 = 0", "DELETE FROM g WHERE id % 7 = 0"]
    server.set_global("binlog_row_image", image)
    try:
        path = server.capture_binlog(*sql)
    finally:
        server.set_global("binlog_row_image", "FULL")
    for table, ncols in (("t", 3), ("f", 2), ("g", 2)):
        expected = server.query(f"SELECT * FROM pieces.{table} ORDER BY id")
        with vecbinlog.open(path) as log:
            whole = log.read_table(f"pieces.{table}")
        assert whole.num_rows > len(expected) + 1000  # inserts, and both images of each updated row
        for options in ({"batch_rows": 7}, {"batch_rows": 7, "segment_bytes": 1}, {"batch_rows": 1000},
                        {"batch_rows": 3000}):
            with vecbinlog.open(path, **options) as log:
                batches = list(log.iter_batches(f"pieces.{table}"))
            assert max(b.num_rows for b in batches) <= options["batch_rows"]
            assert len(batches) >= whole.num_rows // options["batch_rows"]
            for b in batches:
                kinds = b.column("_change_type").to_pylist()
                assert kinds[0] != "update_postimage" and kinds[-1] != "update_preimage", (table, options)
            pieces = pa.Table.from_batches(batches)
            assert pieces.to_pylist() == whole.to_pylist(), (table, options)
            state = _replay(pieces, ncols)
            assert sorted(state) == [r[0] for r in expected]
            assert [state[r[0]] for r in expected] == [list(r) for r in expected]
    with pytest.raises(ValueError, match="batch_rows"):
        vecbinlog.open(path, batch_rows=1)


def test_columns_decoded_in_threads_equal_select(mariadb_server, monkeypatch, tmp_path):
    """A batch large enough to be decoded in threads (20 000 rows x 5 columns) == SELECT,
    with threads=2 and threads=1, and in batches of 3000 rows, runs placed and decoded in the
    background two at a time (on both batch threads, the first batch of each; a read stopped
    early, or a reader closed, lets go of them safely); an error in a run decoded in the
    background comes before an error placing a later one, as with threads=1; threads must be
    a positive integer."""
    server = mariadb_server
    path = server.capture_binlog(
        "DROP DATABASE IF EXISTS threaded", "CREATE DATABASE threaded", "USE threaded",
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(30) NULL, d DECIMAL(12,3) NULL, "
        "ts DATETIME(3) NULL, u BIGINT UNSIGNED NULL)",
        "INSERT INTO t SELECT seq, IF(seq % 7 = 0, NULL, CONCAT('v-', seq * 13)), seq * 1.5 - 7000, "
        "TIMESTAMPADD(SECOND, seq * 97, '2020-01-01 00:00:00.125'), IF(seq % 5 = 0, NULL, 18446744073709551615 - seq) "
        "FROM seq_1_to_20000",
        "CREATE TABLE t2 (id INT NOT NULL PRIMARY KEY, w INT)", "INSERT INTO t2 SELECT seq, -seq FROM seq_1_to_100",
    )
    expected = server.query("SELECT * FROM threaded.t ORDER BY id")
    for threads in (2, 1):
        with vecbinlog.open(path, threads=threads) as log:
            t = log.read_table("threaded.t")
        own = t.select(["id", "v", "d", "ts", "u"]).to_pylist()
        assert [tuple(r.values()) for r in own] == expected, threads
    # every run in the background, columns in threads too (the size thresholds set to 1)
    from vecbinlog.decode import batch as arrow
    from vecbinlog.log import batches as batches_module
    from vecbinlog.log import rundecode, scheduler

    monkeypatch.setattr(arrow, "THREADED_CELLS", 1)
    monkeypatch.setattr(batches_module, "BACKGROUND_BYTES", 1)
    monkeypatch.setattr(batches_module, "BACKGROUND_COLUMN_BYTES", 0)
    decoded_on: list[str] = []

    def build_batch(*args, **kwargs):
        out = real_build_batch(*args, **kwargs)
        decoded_on.append(threading.current_thread().name)
        return out

    real_build_batch = rundecode.build_batch
    monkeypatch.setattr(rundecode, "build_batch", build_batch)
    batches, made_by_then = [], []  # made_by_then: batches made when the reader has held each for a while
    with vecbinlog.open(path, threads=2, batch_rows=3000) as log:
        for b in log.iter_batches("threaded.t"):
            batches.append(b)
            time.sleep(0.05)  # a slow reader: the batch threads wait for it, not run ahead
            made_by_then.append(len(decoded_on))
    assert [b.num_rows for b in batches] == [3000] * 6 + [2000]
    own = pa.Table.from_batches(batches).select(["id", "v", "d", "ts", "u"]).to_pylist()
    assert [tuple(r.values()) for r in own] == expected
    # every batch of the run in the background, never more than BACKGROUND_BATCHES made ahead
    # of the batch read (memory bounded)
    assert len(decoded_on) == 7 and all(n.startswith("vecbinlog-batch") for n in decoded_on), decoded_on
    assert all(m <= i + scheduler.BACKGROUND_BATCHES for i, m in enumerate(made_by_then, 1)), made_by_then
    # in segments of 64 KiB t's rows are runs of their own: the two batch threads take them
    decoded_on.clear()
    with vecbinlog.open(path, threads=2, segment_bytes=1 << 16) as log:
        batches = list(log.iter_batches("threaded.t"))
    own = pa.Table.from_batches(batches).select(["id", "v", "d", "ts", "u"]).to_pylist()
    assert [tuple(r.values()) for r in own] == expected
    assert len(batches) > 4 and {n for n in decoded_on} == {"vecbinlog-batch_0", "vecbinlog-batch_1"}, decoded_on
    # a read stopped after its first batch lets go of the runs under way; the next reads
    # get both threads and complete
    for _ in range(3):
        with vecbinlog.open(path, threads=2, segment_bytes=1 << 16) as log:
            it = log.iter_batches("threaded.t")
            assert next(it).num_rows > 0
            it.close()
    with vecbinlog.open(path, threads=2, segment_bytes=1 << 16) as log:
        assert log.read_table("threaded.t").num_rows == len(expected)
    monkeypatch.setattr(rundecode, "build_batch", real_build_batch)
    # a read closed while runs wait to start in the background: once close() returns, every run
    # is done (read the bytes it holds: no error, every row of its batches) or never started
    started: list[Future] = []
    real_start = scheduler.PendingRun.start

    def start(self, workers):
        real_start(self, workers)
        started.append(self.future)

    real_made = scheduler._made_until_error

    def made(make, limit):
        time.sleep(0.2)  # the reader is closed meanwhile
        return real_made(make, limit)

    monkeypatch.setattr(scheduler.PendingRun, "start", start)
    monkeypatch.setattr(scheduler, "_made_until_error", made)
    with vecbinlog.open(path, threads=2, segment_bytes=1 << 16) as log:
        it = log.iter_batches("threaded.t")
        first = next(it).num_rows
    it.close()
    assert started and all(f.done() for f in started), "the read's close() waits for its runs"
    ran = [f.result() for f in started if not f.cancelled()]
    assert first > 0 and ran
    assert all(error is None and out and all(b.num_rows for b, _, _ in out) for out, error, _ in ran[1:]), ran
    # Two faults: row 19 600 (in the last batch of t) gets a DECIMAL digit group out of range
    # (an error decoding that batch), and the rows event of t2, after it, claims 3 columns (an
    # error placing t2's batch, met while t's last batch is decoded in the background; t2 is
    # shaped otherwise, so it is not placed together with t).
    # Row 19 600's v is NULL: its image is id, d (22400.000), ts, u.
    raw = bytearray(path.read_bytes())
    d_at = raw.index((19600).to_bytes(4, "little") + bytes.fromhex("800057800000")) + 4
    raw[d_at:d_at + 4] = b"\xff\xff\xff\xff"
    with vecbinlog.open(path) as log:
        last = [e for e in log.events().to_pylist() if e["type"] == "WRITE_ROWS_EVENT_V1"][-1]  # t2's
    assert last["pos"] > d_at and raw[last["pos"] + 19 + 8] == 2  # column count, after table id and flags
    raw[last["pos"] + 19 + 8] = 3
    bad = tmp_path / "two-faults.bin"
    bad.write_bytes(bytes(raw))
    outcomes = []
    for threads in (1, 2):
        got: list[tuple[str, int]] = []
        with vecbinlog.open(bad, threads=threads, batch_rows=3000, verify_checksums=False) as log:
            with pytest.raises(vecbinlog.BinlogError) as err:
                for name, b in log.iter_tables():
                    got.append((name, b.num_rows))
        outcomes.append((got, str(err.value), err.value.offset))
    assert outcomes[0][0] == [("threaded.t", 3000)] * 6 and outcomes[0][2] == d_at
    assert "digit group out of range" in outcomes[0][1]
    assert outcomes[1] == outcomes[0]
    with pytest.raises(ValueError, match="threads"):
        vecbinlog.open(path, threads=0)
    # a process forked after threaded decoding has the pool object but not its threads: it must
    # make its own, not wait forever on the parent's
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_decode_in_child, args=(str(path), len(expected)))
    child.start()
    child.join(60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung and child.exitcode == 0, "decoding in threads in a forked child hung or failed"


def _decode_in_child(path: str, rows: int) -> None:
    with vecbinlog.open(path, threads=2) as log:
        n = log.read_table("threaded.t").num_rows
    raise SystemExit(0 if n == rows else 3)
