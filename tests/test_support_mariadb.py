"""Tests of tests/support/mariadb.py against a real MariaDB server and mariadb-binlog.

Every expectation comes from the SQL that was run, a SELECT, or the raw bytes
of the binlog file -- so the -vv parser can be trusted as a reference for the
decoder tests.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import tests.support.mariadb as mdb
from tests.support.fixtures import require_mariadb
from tests.support.mariadb import (
    MariaDBServer,
    VVInt,
    VVRowImage,
    VVValue,
    hexlit,
    parse_vv,
    run_mariadb_binlog_vv,
    vv_float_text,
    vv_python_value,
    vv_unescape,
)

# Rows event type codes (MariaDB writes the v1 events; compressed ones with log_bin_compress).
ROWS_TYPES = {
    "insert": {23, 30, 166, 169},
    "update_before": {24, 31, 167, 170},
    "update_after": {24, 31, 167, 170},
    "delete": {25, 32, 168, 171},
}


def event_header(path: Path, pos: int) -> tuple[int, int, int]:
    """(type code, event size, next position) of the event at `pos`, read from the file itself."""
    with open(path, "rb") as f:
        f.seek(pos)
        _ts, type_code, _sid, size, next_pos, _flags = struct.unpack("<IBIIIH", f.read(19))
    return type_code, size, next_pos


def check_positions(path: Path, images: list[VVRowImage]) -> None:
    """Each image's event range must be a rows event of the right kind in the binlog file."""
    for img in images:
        assert img.event_positions and img.event_positions[0] == img.pos
        start = img.pos
        for p in img.event_positions:
            assert p == start  # the events of one group are contiguous
            type_code, size, next_pos = event_header(path, p)
            assert type_code in ROWS_TYPES[img.kind], (img, type_code)
            assert next_pos == p + size
            start = next_pos
        assert start == img.end_log_pos


def capture(server: MariaDBServer, *sql: str, db: str) -> tuple[Path, list[VVRowImage]]:
    path = server.capture_binlog(*sql, database=db)
    images = parse_vv(run_mariadb_binlog_vv(path))
    check_positions(path, images)
    return path, images


def fresh_db(server: MariaDBServer, name: str) -> str:
    server.execute(f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")
    return name


# --------------------------------------------------------------------------
# Against the server
# --------------------------------------------------------------------------

INT_COLS = [  # (sql type, bits, unsigned)
    ("TINYINT", 8, False),
    ("TINYINT UNSIGNED", 8, True),
    ("SMALLINT", 16, False),
    ("SMALLINT UNSIGNED", 16, True),
    ("MEDIUMINT", 24, False),
    ("MEDIUMINT UNSIGNED", 24, True),
    ("INT", 32, False),
    ("INT UNSIGNED", 32, True),
    ("BIGINT", 64, False),
    ("BIGINT UNSIGNED", 64, True),
]


def _int_row(kind: str, bits: int, unsigned: bool) -> int:
    lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return {"min": lo, "max": hi, "one": 1 if unsigned else -1, "half": 2 ** (bits - 1) if unsigned else 0}[kind]


@pytest.mark.mariadb
def test_int_extremes(mariadb_server: MariaDBServer) -> None:
    db = fresh_db(mariadb_server, "vv_ints")
    cols = ", ".join(f"c{i} {t}" for i, (t, _, _) in enumerate(INT_COLS))
    mariadb_server.execute(f"CREATE TABLE t (id INT PRIMARY KEY, {cols})", database=db)
    kinds = ["min", "max", "one", "half"]
    expected = [[k + 1] + [_int_row(kind, b, u) for _, b, u in INT_COLS] for k, kind in enumerate(kinds)]
    values = ", ".join("(" + ", ".join(map(str, row)) + ")" for row in expected)
    _, images = capture(mariadb_server, f"INSERT INTO t VALUES {values}", db=db)

    selected = mariadb_server.query("SELECT * FROM t ORDER BY id", database=db)
    assert [list(r) for r in selected] == expected
    assert [img.kind for img in images] == ["insert"] * 4
    assert len({img.pos for img in images}) == 1  # one multi-row event
    for img, row in zip(images, expected):
        assert img.table == "vv_ints.t"
        got = img.as_dict()
        assert list(got) == list(range(1, len(INT_COLS) + 2))
        assert got[1] == VVInt(row[0], row[0])
        for i, (_, bits, unsigned) in enumerate(INT_COLS):
            v = got[i + 2]
            assert isinstance(v, VVInt)
            assert v.value(unsigned) == row[i + 1]
            assert v.unsigned == row[i + 1] % 2**bits
    # The exact printed forms: negative signed reading first, unsigned one in parentheses.
    by_type = {v.typestr: v.text for v in images[1].values[1:]}  # the "max" row
    assert images[1].values[1].text == "127"
    assert by_type["LONGINT"] == "-1 (18446744073709551615)"
    assert images[0].values[1].text == "-128 (128)"
    assert images[0].values[9].text == "-9223372036854775808 (9223372036854775808)"
    assert [v.typestr for v in images[0].values[1::2]] == ["TINYINT", "SHORTINT", "MEDIUMINT", "INT", "LONGINT"]


@pytest.mark.mariadb
def test_float_double(mariadb_server: MariaDBServer) -> None:
    db = fresh_db(mariadb_server, "vv_float")
    floats = ["1.5", "3.14159274", "-1.17549435e-38", "3.40282e38", "0", "-2.5e-45", "123456789"]
    doubles = ["0.1", "0.3333333333333333", "-2.25e300", "2.2250738585072014e-308", "1.7976931348623157e308",
               "5e-324", "0"]
    rows = ", ".join(f"({i}, {f}, {d})" for i, (f, d) in enumerate(zip(floats, doubles)))
    mariadb_server.execute("CREATE TABLE t (id INT PRIMARY KEY, f FLOAT, d DOUBLE)", database=db)
    _, images = capture(mariadb_server, f"INSERT INTO t VALUES {rows}, (99, NULL, NULL)", db=db)
    selected = mariadb_server.query("SELECT d FROM t ORDER BY id", database=db)
    assert len(images) == len(floats) + 1
    for img, f, d, (sel_d,) in zip(images, floats, doubles, selected):
        fv, dv = img.values[1], img.values[2]
        assert (fv.typestr, fv.meta, dv.typestr, dv.meta) == ("FLOAT", 4, "DOUBLE", 8)
        f32 = float(np.float32(float(f)))
        assert fv.text == vv_float_text(f32)  # 6 significant digits only
        assert vv_python_value(fv) == pytest.approx(f32, rel=1e-5, abs=1e-44)
        assert vv_python_value(dv) == float(d) == sel_d  # DOUBLE is exact
    null_img = images[-1].as_dict()
    assert null_img == {1: VVInt(99, 99), 2: None, 3: None}
    assert images[-1].values[1].text is None and images[-1].values[1].is_null


STRING_COLS = [  # (column sql, charset used to encode str values)
    ("vb VARBINARY(300)", None),
    ("tb TINYBLOB", None),
    ("bl BLOB", None),
    ("mb MEDIUMBLOB", None),
    ("lb LONGBLOB", None),
    ("c4 CHAR(40) CHARACTER SET utf8mb4", "utf-8"),
    ("v4 VARCHAR(50) CHARACTER SET utf8mb4", "utf-8"),
    ("tx TEXT CHARACTER SET utf8mb4", "utf-8"),
    ("l1 VARCHAR(50) CHARACTER SET latin1", "latin-1"),
]
ALL_BYTES = bytes(range(256))
TRICKY = "it's \\ \"q\" /* c */ \\x41 \n\t\r end"


def _expected_strings() -> list[list[bytes | None]]:
    """Rows (one value per STRING_COLS column) and how they are stored, as bytes."""
    binary = [ALL_BYTES, b"", b"\x00", TRICKY.encode(), None]
    text = ["\U0001F600\U0001F389 ok", "", "ab  ", TRICKY, None]  # CHAR drops trailing spaces
    latin = ["\u00e9t\u00e9 \u00fc", "", "x", TRICKY, None]
    rows = []
    for r in range(5):
        row: list[bytes | None] = []
        for col, cs in STRING_COLS:
            if cs is None:
                b = binary[r]
                row.append(b[:255] if b is not None and col.startswith("tb") else b)  # TINYBLOB max
            else:
                s = (latin if cs == "latin-1" else text)[r]
                if s is not None and col.startswith("c4"):
                    s = s.rstrip(" ")
                row.append(None if s is None else s.encode(cs))
        rows.append(row)
    return rows


def _sql_value(v: bytes | None, cs: str | None) -> str:
    if v is None:
        return "NULL"
    if cs is None:
        return hexlit(v)
    return f"CONVERT({hexlit(v)} USING {'utf8mb4' if cs == 'utf-8' else 'latin1'})"


@pytest.mark.mariadb
def test_strings_and_bytes(mariadb_server: MariaDBServer) -> None:
    db = fresh_db(mariadb_server, "vv_str")
    mariadb_server.execute(
        "CREATE TABLE `we``ird.t` (id INT PRIMARY KEY, " + ", ".join(c for c, _ in STRING_COLS) + ")",
        database=db,
    )
    expected = _expected_strings()
    values = ", ".join(
        f"({i}, " + ", ".join(_sql_value(v, cs) for v, (_, cs) in zip(row, STRING_COLS)) + ")"
        for i, row in enumerate(expected)
    )
    # A second statement with the same rows written as plain string literals (escapes parsed by the server).
    _, images = capture(
        mariadb_server,
        f"INSERT INTO `we``ird.t` VALUES {values}",
        "UPDATE `we``ird.t` SET v4 = 'it''s \\\\ \U0001F600' WHERE id = 1",
        db=db,
    )
    names = ", ".join(f"CAST({c.split()[0]} AS BINARY)" for c, _ in STRING_COLS)
    selected = mariadb_server.query(f"SELECT {names} FROM `we``ird.t` ORDER BY id", database=db)

    inserts = [img for img in images if img.kind == "insert"]
    assert len(inserts) == len(expected)
    for img, row in zip(inserts, expected):
        assert img.table == "vv_str.we`ird.t"
        got = img.as_dict()
        assert [got[i + 2] for i in range(len(STRING_COLS))] == row
    for i, sel in enumerate(selected):
        if i != 1:  # row 1 was updated below
            assert list(sel) == expected[i]

    typestrs = [v.typestr for v in inserts[0].values[1:]]
    assert typestrs == [
        "VARSTRING(300)", "TINYBLOB/TINYTEXT", "BLOB/TEXT", "MEDIUMBLOB/MEDIUMTEXT", "LONGBLOB/LONGTEXT",
        "STRING(160)", "VARSTRING(200)", "BLOB/TEXT", "VARSTRING(50)",
    ]
    # Escaping rule, byte for byte: only 0x00-0x1f become \xNN, everything else is raw.
    printed = inserts[0].values[1].text.encode("utf-8", "surrogateescape")
    assert printed == b"'" + b"".join(b"\\x%02x" % b if b < 0x20 else bytes([b]) for b in ALL_BYTES) + b"'"
    assert inserts[0].values[6].text == "'\U0001F600\U0001F389 ok'"  # valid UTF-8 stays readable
    assert inserts[3].values[7].text == "'it's \\ \"q\" /* c */ \\x41 \\x0a\\x09\\x0d end'"

    before, after = [img for img in images if img.kind.startswith("update")]
    assert (before.kind, after.kind) == ("update_before", "update_after")
    assert before.as_dict()[8] == expected[1][6] == b""
    assert after.as_dict()[8] == "it's \\ \U0001F600".encode() == selected[1][6]


def test_escaping_ambiguity_is_documented() -> None:
    """The tool prints the text '\\x0a' and a newline byte identically; we decode it as the byte."""
    assert vv_unescape("'\\x0a'") == b"\n"
    assert vv_unescape("'\\x41'") == b"\\x41"  # only 00-1f are escapes
    assert vv_unescape("'\\\\x01'") == b"\\\x01"
    assert vv_unescape("''") == b""
    assert vv_unescape("'a'b'") == b"a'b"
    with pytest.raises(ValueError):
        vv_unescape("abc")


@pytest.mark.mariadb
def test_update_delete_full_images(mariadb_server: MariaDBServer) -> None:
    db = fresh_db(mariadb_server, "vv_upd")
    mariadb_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20), d DECIMAL(10,3))",
        "INSERT INTO t VALUES (1, 10, 'x', 1.5), (2, 20, 'y', NULL)",
        database=db,
    )
    before_rows = mariadb_server.query("SELECT * FROM t ORDER BY id", database=db)
    _, images = capture(
        mariadb_server,
        "UPDATE t SET a = a + 1, s = 'zz' WHERE id = 1",
        "DELETE FROM t WHERE id = 2",
        "INSERT INTO t VALUES (3, -7, '', -2.25)",
        db=db,
    )
    after_rows = mariadb_server.query("SELECT * FROM t ORDER BY id", database=db)
    assert [img.kind for img in images] == ["update_before", "update_after", "delete", "insert"]
    assert len({images[0].pos, images[2].pos, images[3].pos}) == 3 and images[0].pos == images[1].pos

    def as_row(img: VVRowImage) -> tuple:
        d = img.as_dict()
        return (d[1].signed, None if d[2] is None else d[2].signed, None if d[3] is None else d[3].decode(),
                None if d[4] is None else Decimal(d[4]))

    assert as_row(images[0]) == before_rows[0] == (1, 10, "x", Decimal("1.500"))
    assert as_row(images[1]) == after_rows[0] == (1, 11, "zz", Decimal("1.500"))
    assert as_row(images[2]) == before_rows[1] == (2, 20, "y", None)
    assert as_row(images[3]) == after_rows[1] == (3, -7, "", Decimal("-2.250"))
    assert images[0].values[3].text == "1.500" and images[0].values[3].typestr == "DECIMAL(10,3)"


@pytest.mark.mariadb
def test_minimal_images(mariadb_server: MariaDBServer, mariadb_globals) -> None:  # noqa: F811
    db = fresh_db(mariadb_server, "vv_min")
    mariadb_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT DEFAULT 5)", database=db
    )
    workload = (
        "INSERT INTO t (id, a) VALUES (1, 10)",
        "UPDATE t SET b = 'q' WHERE id = 1",
        "DELETE FROM t WHERE id = 1",
    )
    _, full = capture(mariadb_server, *workload, db=db)
    mariadb_globals(binlog_row_image="MINIMAL")
    assert mariadb_server.query("SELECT @@SESSION.binlog_row_image") == [("MINIMAL",)]  # new session sees it
    _, minimal = capture(mariadb_server, *workload, db=db)

    kinds = ["insert", "update_before", "update_after", "delete"]
    assert [i.kind for i in full] == [i.kind for i in minimal] == kinds
    assert [list(i.as_dict()) for i in full] == [[1, 2, 3, 4]] * 4
    assert [i.as_dict() for i in full] == [
        {1: VVInt(1, 1), 2: VVInt(10, 10), 3: None, 4: VVInt(5, 5)},
        {1: VVInt(1, 1), 2: VVInt(10, 10), 3: None, 4: VVInt(5, 5)},
        {1: VVInt(1, 1), 2: VVInt(10, 10), 3: b"q", 4: VVInt(5, 5)},
        {1: VVInt(1, 1), 2: VVInt(10, 10), 3: b"q", 4: VVInt(5, 5)},
    ]
    # MINIMAL: an INSERT logs only the columns it names (not even c's non-NULL default),
    # the before image only the primary key, the after image only the changed columns.
    assert [i.as_dict() for i in minimal] == [
        {1: VVInt(1, 1), 2: VVInt(10, 10)},
        {1: VVInt(1, 1)},
        {3: b"q"},
        {1: VVInt(1, 1)},
    ]


@pytest.mark.mariadb
def test_checksum_none(mariadb_server: MariaDBServer, mariadb_globals) -> None:  # noqa: F811
    db = fresh_db(mariadb_server, "vv_crc")
    mariadb_server.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))", database=db)
    sql = ("INSERT INTO t VALUES (1, 'a'), (2, NULL)", "UPDATE t SET s = 'b' WHERE id = 2", "DELETE FROM t")
    crc_path, crc = capture(mariadb_server, *sql, db=db)
    mariadb_globals(binlog_checksum="NONE")
    none_path, none = capture(mariadb_server, *sql, db=db)
    assert "CRC32 0x" in run_mariadb_binlog_vv(crc_path)
    assert "CRC32 0x" not in run_mariadb_binlog_vv(none_path)
    assert [i.as_dict() for i in crc] == [i.as_dict() for i in none] == [
        {1: VVInt(1, 1), 2: b"a"},
        {1: VVInt(2, 2), 2: None},
        {1: VVInt(2, 2), 2: None},
        {1: VVInt(2, 2), 2: b"b"},
        {1: VVInt(1, 1), 2: b"a"},
        {1: VVInt(2, 2), 2: b"b"},
    ]
    # Same events, 4 bytes of checksum fewer each (check_positions already matched them to the file).
    for a, b in zip(crc, none):
        assert (a.end_log_pos - a.pos) - (b.end_log_pos - b.pos) == 4


@pytest.mark.mariadb
@pytest.mark.parametrize("compress", ["OFF", "ON"])
def test_statement_split_over_events(mariadb_server: MariaDBServer, mariadb_globals, compress: str) -> None:  # noqa: F811
    """> 8 KiB of rows: several rows events, whose images the tool prints together after the last one."""
    db = fresh_db(mariadb_server, "vv_split")
    mariadb_globals(log_bin_compress=compress)
    mariadb_server.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(600))", database=db)
    n = 60
    rows = ", ".join(f"({i}, REPEAT(CHAR(65 + {i % 26}), 500))" for i in range(n))
    path, images = capture(mariadb_server, f"INSERT INTO t VALUES {rows}", "DELETE FROM t WHERE id < 3", db=db)
    assert [img.kind for img in images] == ["insert"] * n + ["delete"] * 3
    groups = {img.event_positions for img in images[:n]}
    assert len(groups) == 1
    (positions,) = groups
    assert len(positions) >= 3  # 30 KB cannot fit one 8 KiB rows event
    for i, img in enumerate(images[:n]):
        assert img.as_dict() == {1: VVInt(i, i), 2: bytes([65 + i % 26]) * 500}
    assert len(images[n].event_positions) == 1
    assert [img.as_dict()[1].signed for img in images[n:]] == [0, 1, 2]
    compressed_types = {event_header(path, p)[0] for p in positions}
    assert (compressed_types <= {166, 169}) == (compress == "ON")


def test_parse_handwritten_snippet() -> None:
    """Parser details that need no server: FIFO '# at' matching, padding, tricky values."""
    text = (
        "# at 100\n# at 150\n"
        "#261121 19:41:57 server id 1  end_log_pos 150 \tAnnotate_rows:\n"
        "#Q> INSERT INTO x VALUES ('### INSERT INTO `no`.`no`')\n"
        "#261121 19:41:57 server id 1  end_log_pos 200 \tTable_map: `a`.`b` mapped to number 5\n"
        "# at 200\n"
        "#261121 19:41:57 server id 1  end_log_pos 260 \tWrite_rows: table id 5 flags: STMT_END_F\n"
        "### INSERT INTO `a`.`b`\n### SET\n"
        "###   @1=2.5                  /* FLOAT meta=4 nullable=1 is_null=0 */\n"
        "###   @2='x /* INT meta=0 nullable=0 is_null=0 */' /* VARSTRING(60) meta=60 nullable=1 is_null=0 */\n"
        "###   @3=NULL /* INT meta=0 nullable=1 is_null=1 */\n"
        "###   @4=b'101' /* BIT(3) meta=3 nullable=1 is_null=0 */\n"
        "# Number of rows: 1\n# at 260\n"
    )
    (img,) = parse_vv(text)
    assert (img.pos, img.end_log_pos, img.table, img.kind, img.event_positions) == (200, 260, "a.b", "insert", (200,))
    assert img.values[0] == VVValue(1, "2.5", "FLOAT", 4, True, False)
    assert img.as_dict() == {1: 2.5, 2: b"x /* INT meta=0 nullable=0 is_null=0 */", 3: None, 4: "b'101'"}
    with pytest.raises(ValueError, match="-vv"):  # plain -v output has no type comments
        parse_vv(text.replace(" /* FLOAT meta=4 nullable=1 is_null=0 */", ""))


def test_vvint_readings() -> None:
    v = vv_python_value(VVValue(1, "-1 (255)", "TINYINT", 0, True, False))
    assert v == VVInt(-1, 255) and v.value(unsigned=True) == 255 and v.value(unsigned=False) == -1
    assert vv_python_value(VVValue(1, "7", "LONGINT", 0, True, False)) == VVInt(7, 7)
    with pytest.raises(ValueError):
        vv_python_value(VVValue(1, "-1 (254)", "TINYINT", 0, True, False))


def test_ensure_mariadb_error_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mdb, "find_tool", lambda name: None)
    monkeypatch.setattr(mdb.os, "geteuid", lambda: 1000)
    with pytest.raises(RuntimeError, match="mariadbd.*not running as root"):
        mdb.ensure_mariadb()


@pytest.mark.mariadb
def test_start_failure_shows_error_log() -> None:
    require_mariadb()
    server = MariaDBServer(options={"no_such_option": "1"})
    with pytest.raises(RuntimeError, match=r"(?s)mariadbd exited.*unknown variable 'no-such-option=1'"):
        server.start()
    assert not server.running and not server.workdir.exists()
