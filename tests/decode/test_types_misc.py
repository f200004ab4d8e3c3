"""DECIMAL, BIT, ENUM, SET and GEOMETRY columns written by a real MariaDB server, checked
against its SELECT and against mariadb-binlog -vv."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.tables.ddl import Catalog

from ..support import reference as ref
from ..support.builder import fix_crcs
from ..support.mariadb import parse_vv, run_mariadb_binlog_vv, vv_unescape

pytestmark = pytest.mark.mariadb

# Edge cases from the peers' trackers (python-mysql-replication, canal, Debezium):
DECIMALS = [  # (column type, values)
    ("DECIMAL(10,0)", ["0", "1", "-1", "9999999999", "-9999999999"]),
    ("DECIMAL(18,9)", ["0.000000000", "123456789.123456789", "-0.000000001"]),  # scale a multiple of 9
    ("DECIMAL(10,1)", ["0.1", "-0.1"]),
    ("DECIMAL(5,2)", ["-0.01", "0.01", "999.99", "-999.99"]),
    ("DECIMAL(18,0)", ["999999999999999999", "-999999999999999999", "-1"]),  # the widest summed in an int64
    ("DECIMAL(19,0)", ["9999999999999999999", "-9999999999999999999"]),  # the narrowest that is not
    ("DECIMAL(20,2)", ["1.10", "-123456789012345678.90"]),
    ("DECIMAL(12,6)", ["123.000123", "-123.000123"]),
    ("DECIMAL(38,10)", ["9999999999999999999999999999.9999999999", "-1.0000000001"]),
    ("DECIMAL(65,30)", ["99999999999999999999999999999999999.999999999999999999999999999999",
                        "-99999999999999999999999999999999999.999999999999999999999999999999",
                        "0.000000000000000000000000000001", "0"]),
    ("DECIMAL(65,0)", ["-" + "9" * 65, "9" * 65]),
    # MariaDB's scale goes to 38 (MySQL's to 30)
    ("DECIMAL(38,38)", ["0.12345678901234567890123456789012345678", "-0.99999999999999999999999999999999999999",
                        "0.00000000000000000000000000000000000001"]),
    ("DECIMAL(39,38)", ["1.5", "-9.99999999999999999999999999999999999999"]),
    ("DECIMAL(65,38)", ["123456789012345678901234567.12345678901234567890123456789012345678",
                        "-99999999999999999999999999.99999999999999999999999999999999999999"]),
]


def test_decimals_equal_select_and_vv(mariadb_server):
    s = mariadb_server
    cols = ", ".join(f"d{k} {t} NULL" for k, (t, _) in enumerate(DECIMALS))
    n = max(len(v) for _, v in DECIMALS)
    rows = []
    for r in range(n):
        rows.append("(" + ", ".join([str(r)] + [vals[r] if r < len(vals) else "NULL" for _, vals in DECIMALS]) + ")")
    path = s.capture_binlog("DROP DATABASE IF EXISTS dec_t", "CREATE DATABASE dec_t", "USE dec_t",
                            f"CREATE TABLE t (id INT PRIMARY KEY, {cols})", "INSERT INTO t VALUES " + ", ".join(rows))
    t = vecbinlog.read_table(path, "dec_t.t")
    for k, (ctype, _) in enumerate(DECIMALS):
        p, sc = (int(x) for x in ctype[8:-1].split(","))
        assert t.schema.field(f"d{k}").type == (pa.decimal128(p, sc) if p <= 38 else pa.decimal256(p, sc))
    select = s.query("SELECT * FROM dec_t.t ORDER BY id")
    ours = [[r[c] for c in t.schema.names[: len(DECIMALS) + 1]] for r in t.to_pylist()]
    assert ours == [list(r) for r in select]
    # mariadb-binlog prints decimals as text with the declared scale
    (image,) = [im for im in parse_vv(run_mariadb_binlog_vv(path)) if im.table == "dec_t.t"][:1]
    for v in image.values[1:]:
        assert Decimal(v.text) == ours[0][v.index - 1]


def test_bit_enum_set(mariadb_server, mariadb_globals):
    s = mariadb_server
    ddl = ("CREATE TABLE t (id INT PRIMARY KEY, b1 BIT(1), b7 BIT(7), b8 BIT(8), b9 BIT(9), b63 BIT(63), b64 BIT(64),"
           " e ENUM('a','b','c') CHARACTER SET utf8mb4, e2 ENUM(" + ",".join(f"'v{k}'" for k in range(300)) + "),"
           " st SET('x','y','z') CHARACTER SET utf8mb4, s64 SET(" + ",".join(f"'m{k}'" for k in range(64)) + "))")
    rows = [
        "(1, b'1', b'1111111', b'10000000', b'100000001', b'1' << 62, 18446744073709551615, 'b', 'v299', 'x,z', 'm0,m63')",
        "(2, b'0', 0, 0, 0, 0, 0, '', 'v0', '', '')",
        "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    ]
    for metadata in ("FULL", "NO_LOG"):
        mariadb_globals(binlog_row_metadata=metadata)
        path = s.capture_binlog("SET SESSION sql_mode=''", "DROP DATABASE IF EXISTS bes", "CREATE DATABASE bes",
                                "USE bes", ddl, "INSERT INTO t VALUES " + ", ".join(rows))
        t = vecbinlog.read_table(path, "bes.t", ddl=False)  # @N names, as the reference has them
        got = t.to_pylist()
        names = t.schema.names
        bits = s.query("SELECT b1+0, b7+0, b8+0, b9+0, b63+0, b64+0, e+0, e2+0, st+0, s64+0 FROM bes.t ORDER BY id")
        for row, ref in zip(got, bits):
            assert [row[names[k]] for k in range(1, 7)] == list(ref[:6])
        assert t.schema.field(names[1]).type == pa.uint64()
        if metadata == "FULL":
            assert t.schema.field("e").type == pa.dictionary(pa.uint16(), pa.string())
            labels = s.query("SELECT e, e2, st, s64 FROM bes.t ORDER BY id")
            for row, (e, e2, st, s64) in zip(got, labels):
                assert row["e"] == e and row["e2"] == e2
                assert row["st"] == (None if st is None else [m for m in st.split(",") if m])
                assert row["s64"] == (None if s64 is None else [m for m in s64.split(",") if m])
        else:  # no labels in the binlog: the ENUM index and the SET mask
            assert [t.schema.field(k).type for k in ("@8", "@9", "@10", "@11")] == [
                pa.uint16(), pa.uint16(), pa.uint64(), pa.uint64()]
            for row, ref in zip(got, bits):
                # the server's SET+0 is a signed BIGINT: bit 63 reads negative there
                assert [row[k] for k in ("@8", "@9", "@10", "@11")] == [None if v is None else v % 2**64 for v in ref[6:]]


ENUM_SET_DDL = ("CREATE TABLE t (id INT PRIMARY KEY, e ENUM('', 0x0000, x'41', b'01000010', 'q'), "
                "s SET('', x'00', X'4142', 'z'), e2 ENUM('a', 'b', 'cd', 'é'), u ENUM('a', 'b') CHARACTER SET latin1)")
ENUM_SET_ROWS = "(1, 0x0000, x'00', 'cd', 'b'), (2, 'A', 'AB,z', 'é', 'a'), (3, 'B', '', 'a', NULL), " \
    "(4, '', x'00', 'b', 'a'), (5, 'q', 'z', NULL, 'b')"


def test_enum_set_members_as_hex_and_bit_literals(mariadb_server, mariadb_globals):
    """ENUM('', 0x0000, x'41', b'01000010') and SET('', x'00', X'4142'): binary-string members
    are the column's bytes. NO_LOG: the labels come from the CREATE TABLE in the log alone, and
    equal the server's (HEX(e), e+0) and FULL metadata's."""
    s = mariadb_server
    got = {}
    for metadata in ("FULL", "NO_LOG"):
        mariadb_globals(binlog_row_metadata=metadata)
        path = s.capture_binlog("SET SESSION sql_mode=''", "DROP DATABASE IF EXISTS ens",
                                "CREATE DATABASE ens CHARACTER SET utf8mb4", "USE ens", ENUM_SET_DDL,
                                f"INSERT INTO t VALUES {ENUM_SET_ROWS}")
        t = vecbinlog.read_table(path, "ens.t")
        assert [t.schema.field(n).type for n in ("e", "s", "e2")] == [
            pa.dictionary(pa.uint16(), pa.string()), pa.list_(pa.string()), pa.dictionary(pa.uint16(), pa.string())]
        got[metadata] = t.to_pylist()
        server = s.query("SELECT id, HEX(e), e+0, HEX(s), s+0, e2, u FROM ens.t ORDER BY id")
        indexes = t.column("e").combine_chunks().indices.to_pylist()
        for row, index, (_, e_hex, e_num, s_hex, _, e2, u) in zip(got[metadata], indexes, server):
            assert (row["e"].encode().hex().upper(), index) == (e_hex, e_num)
            assert ",".join(row["s"]).encode().hex().upper() == s_hex
            assert (row["e2"], row["u"]) == (e2, u)
    assert got["NO_LOG"] == [{**r, "_log_file": got["NO_LOG"][k]["_log_file"], "_log_pos": got["NO_LOG"][k]["_log_pos"],
                              "_transaction_pos": got["NO_LOG"][k]["_transaction_pos"], "_xid": got["NO_LOG"][k]["_xid"],
                              "_gtid": got["NO_LOG"][k]["_gtid"], "_commit_timestamp": got["NO_LOG"][k]["_commit_timestamp"]}
                             for k, r in enumerate(got["FULL"])]


def test_enum_and_set_values_beyond_the_labels_are_errors_at_their_byte(mariadb_server, mariadb_globals, tmp_path):
    """A SET mask with a bit past the last member, or an ENUM index past the last label (bytes
    no server writes: a damaged file), is a MalformedEventError at the value's own offset."""
    mariadb_globals(binlog_row_metadata="FULL")
    path = mariadb_server.capture_binlog(
        "DROP DATABASE IF EXISTS enx", "CREATE DATABASE enx", "USE enx",
        "CREATE TABLE t (id INT PRIMARY KEY, s SET('x', 'y', 'z'), e ENUM('a', 'b', 'c'))",
        "INSERT INTO t VALUES (1, 'x,z', 'c')")
    data = path.read_bytes()
    assert vecbinlog.read_table(path, "enx.t").select(["s", "e"]).to_pylist() == [{"s": ["x", "z"], "e": "c"}]
    (rows,) = [e for e in ref.walk_events(data)[0] if e.type in (23, 30)]  # WRITE_ROWS_EVENT(_V1): ..., s, e, CRC32
    s_at, e_at = rows.offset + rows.size - 6, rows.offset + rows.size - 5
    assert (data[s_at], data[e_at]) == (0b101, 3)
    for at, value, message in [(s_at, 0b1001, "column 's': SET mask 0x9 has members beyond the column's 3 labels"),
                               (e_at, 4, "column 'e': ENUM index 4 but the column has 3 labels")]:
        damaged = bytearray(data)
        damaged[at] = value
        bad = tmp_path / f"damaged-{at}.bin"
        bad.write_bytes(fix_crcs(damaged))
        with pytest.raises(vecbinlog.MalformedEventError, match=message) as info:
            vecbinlog.read_table(bad, "enx.t")
        assert info.value.offset == at


def test_labels_that_cannot_be_the_columns_fall_back_to_numbers(mariadb_server, mariadb_globals):
    """The TABLE_MAP decides how bytes are read: labels that a 1-byte ENUM cannot have (300 of
    them), or members the DDL interpreter does not understand, are not used: the ENUM number and
    the SET mask, with a SchemaWarning, never an undecodable file."""
    mariadb_globals(binlog_row_metadata="NO_LOG")
    s = mariadb_server
    path = s.capture_binlog("SET SESSION sql_mode=''", "DROP DATABASE IF EXISTS ens2",
                            "CREATE DATABASE ens2 CHARACTER SET utf8mb4", "USE ens2", ENUM_SET_DDL,
                            f"INSERT INTO t VALUES {ENUM_SET_ROWS}")
    wrong = {"ens2.t": ["id", {"name": "e", "enum": [f"v{k}" for k in range(300)]}, "s", "e2", "u"]}
    with pytest.warns(vecbinlog.SchemaWarning, match="300 ENUM members there, which the TABLE_MAP's 1-byte values"):
        t = vecbinlog.read_table(path, "ens2.t", ddl=False, schema=wrong)
    assert t.schema.field("e").type == pa.uint16()
    assert t.column("e").to_pylist() == [r[0] for r in s.query("SELECT e+0 FROM ens2.t ORDER BY id")]
    catalog = Catalog()
    catalog.apply("CREATE TABLE t (id INT, e ENUM('a', 1 + 1), s SET('x'))", "d")  # not a member a server takes
    assert catalog.tables["d.t"].columns[1].enum_values is None
    assert catalog.tables["d.t"].columns[2].set_values == ("x",)
    assert any("ENUM members of column 'e' are not all understood" in n for n in catalog.notes)


def test_geometry_srid_and_wkb(mariadb_server):
    s = mariadb_server
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS geo", "CREATE DATABASE geo", "USE geo",
        "CREATE TABLE t (id INT PRIMARY KEY, g GEOMETRY NULL, p POINT NULL)",
        "INSERT INTO t VALUES (1, ST_GeomFromText('LINESTRING(0 0, 1 1, 2 5)', 4326), ST_GeomFromText('POINT(1.5 -2)')),"
        " (2, NULL, ST_GeomFromText('POINT(0 0)', 3857))")
    t = vecbinlog.read_table(path, "geo.t")
    ref = s.query("SELECT ST_SRID(g), ST_AsWKB(g), ST_SRID(p), ST_AsWKB(p) FROM geo.t ORDER BY id")
    for row, (gs, gw, ps, pw) in zip(t.to_pylist(), ref):
        assert row["g"] == (None if gw is None else {"srid": gs, "wkb": gw})
        assert row["p"] == {"srid": ps, "wkb": pw}
    assert t.schema.field("p").metadata[b"geometry_type"] == b"1"  # POINT


def test_binary_char_padding_and_mariadb_inet6_uuid(mariadb_server):
    s = mariadb_server
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS binp", "CREATE DATABASE binp", "USE binp",
        "CREATE TABLE t (id INT PRIMARY KEY, b BINARY(8), i6 INET6, i4 INET4, u UUID)",
        "INSERT INTO t VALUES (1, X'6162000000000000', '::1', '10.0.0.1', '123e4567-e89b-12d3-a456-426614174000'),"
        " (2, X'0000000000000000', 'fe80::1', '0.0.0.0', '00000000-0000-0000-0000-000000000000'),"
        " (3, X'61', NULL, NULL, NULL)")
    t = vecbinlog.read_table(path, "binp.t")
    ref = s.query("SELECT b, HEX(i6), HEX(i4) FROM binp.t ORDER BY id")
    for row, (b, i6, i4) in zip(t.to_pylist(), ref):
        assert row["b"] == b and len(row["b"]) == 8  # trailing zero bytes put back, as SELECT shows them
        assert row["i6"] == (None if i6 is None else bytes.fromhex(i6))
        assert row["i4"] == (None if i4 is None else bytes.fromhex(i4))
    # mariadb-binlog prints the stripped form: the binlog holds 'ab' for the first value
    (first,) = [im for im in parse_vv(run_mariadb_binlog_vv(path)) if im.table == "binp.t"][:1]
    assert first.as_dict()[2] == b"ab"


WIDE_TYPES = [
    ("INT", lambda r, k: (r * 7919 + k) % 2**31 - 2**30),
    ("BIGINT UNSIGNED", lambda r, k: (2**64 - 1 - r * k) if (r + k) % 3 else 0),
    ("DECIMAL(20,4)", lambda r, k: f"{(r - 2) * 1234.5678 + k:.4f}"),
    ("VARCHAR(20) CHARACTER SET utf8mb4", lambda r, k: f"v{r}-{k}-😀"),
    ("DOUBLE", lambda r, k: (r - k) / 4),
    ("BIT(13)", lambda r, k: (r * 31 + k) % 2**13),
    ("TINYINT", lambda r, k: (r + k) % 256 - 128),
]


def test_three_hundred_columns(mariadb_server, mariadb_globals):
    s = mariadb_server
    ncols = 315
    types = [WIDE_TYPES[k % len(WIDE_TYPES)] for k in range(ncols)]
    ddl = "CREATE TABLE w (id INT PRIMARY KEY, " + ", ".join(f"c{k} {t} NULL" for k, (t, _) in enumerate(types)) + ")"

    def lit(r, k):
        if (r * 13 + k) % 11 == 0:
            return "NULL"
        v = types[k][1](r, k)
        return f"'{v}'" if isinstance(v, str) else repr(v)

    rows = ["(" + ", ".join([str(r)] + [lit(r, k) for k in range(ncols)]) + ")" for r in range(6)]
    for image in ("FULL", "MINIMAL"):
        mariadb_globals(binlog_row_image=image)
        path = s.capture_binlog("DROP DATABASE IF EXISTS wide3", "CREATE DATABASE wide3", "USE wide3", ddl,
                                "INSERT INTO w VALUES " + ", ".join(rows),
                                "UPDATE w SET c5 = 42, c304 = 'changed' WHERE id % 2 = 0",
                                "DELETE FROM w WHERE id = 3")
        t = vecbinlog.read_table(path, "wide3.w")
        assert t.num_columns == ncols + 1 + len(vecbinlog.decode.batch.METADATA_FIELDS)
        state = {}
        pre = None
        names = t.schema.names[: ncols + 1]
        for r in t.to_pylist():
            vals = [r[n] for n in names]
            present = [n not in r["_absent"] for n in names]
            if r["_change_type"] == "insert":
                state[vals[0]] = vals
            elif r["_change_type"] == "delete":
                del state[vals[0]]
            elif r["_change_type"] == "update_preimage":
                pre = vals[0]
            else:
                state[pre] = [v if p else o for v, p, o in zip(vals, present, state[pre])]
        select = s.query("SELECT * FROM wide3.w ORDER BY id")
        bit_cols = [k + 1 for k, (t_, _) in enumerate(types) if t_.startswith("BIT")]
        bits = s.query("SELECT " + ", ".join(f"c{k - 1}+0" for k in bit_cols) + " FROM wide3.w ORDER BY id")
        for srow, brow in zip(select, bits):
            expected = list(srow)
            for k, b in zip(bit_cols, brow):
                expected[k] = b
            assert state[srow[0]] == expected, image


def test_every_image_equals_mariadb_binlog_vv(mariadb_server, mariadb_globals):
    """BIT, ENUM, SET, DECIMAL and GEOMETRY images (inserts, updates, deletes) against -vv."""
    s = mariadb_server
    mariadb_globals(binlog_row_metadata="NO_LOG")  # ENUM/SET as the index and mask -vv prints
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS vvt", "CREATE DATABASE vvt", "USE vvt",
        "CREATE TABLE t (id INT PRIMARY KEY, b BIT(9), e ENUM('a','b'), st SET('x','y','z'), d DECIMAL(7,3),"
        " g GEOMETRY, dl DECIMAL(40,20))",
        "INSERT INTO t VALUES (1, b'100000001', 'b', 'x,z', -12.5, ST_GeomFromText('POINT(1 2)'), 1.5),"
        " (2, 0, 'a', '', 0, ST_GeomFromText('LINESTRING(0 0, 3 4)', 4326), -0.00000000000000000001),"
        " (3, NULL, NULL, NULL, NULL, NULL, NULL)",
        "UPDATE t SET b = b'111', e = 'a', st = 'y', d = 9999.999 WHERE id IN (1, 3)",
        "DELETE FROM t WHERE id = 2",
    )
    t = vecbinlog.read_table(path, "vvt.t", ddl=False)  # ENUM/SET as the numbers mariadb-binlog -vv prints
    images = [im for im in parse_vv(run_mariadb_binlog_vv(path)) if im.table == "vvt.t"]
    rows = t.to_pylist()
    assert len(images) == len(rows) == 3 + 4 + 1
    names = t.schema.names[:7]
    for row, im in zip(rows, images):
        for v in im.values:
            ours = row[names[v.index - 1]]
            if v.is_null:
                assert ours is None
            elif v.typestr.startswith("BIT") or v.typestr.startswith("SET"):
                assert ours == int(v.text[2:-1], 2), v
            elif v.typestr.startswith("ENUM") or v.typestr == "INT":
                assert ours == int(v.text), v
            elif v.typestr.startswith("DECIMAL"):
                assert ours == Decimal(v.text), v
            else:
                assert v.typestr == "GEOMETRY"
                assert vv_unescape(v.text) == ours["srid"].to_bytes(4, "little") + ours["wkb"], v


@pytest.mark.parametrize("nlabels", [1, 7, 8, 13, 64])
def test_set_members_of_random_masks(nlabels):
    """SET masks of every width (1-8 bytes), random members, NULLs and empty sets: each row's
    members are the labels of its bits in declaration order (as the server lists them), text
    or, for labels that are no text in the charset, bytes."""
    from vecbinlog.constants import BINARY_COLLATION, ColumnType as T
    from vecbinlog.decode.decoders import ColumnData, DecodeOptions, decode_column
    from vecbinlog.tables.table_map import ColumnSpec

    rng = np.random.default_rng(nlabels)
    width = (nlabels + 7) // 8
    text = tuple(f"m{k}é{'x' * (k % 5)}".encode() for k in range(nlabels))
    n = 3000
    masks = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64) << np.uint64(rng.integers(0, 2))
    masks &= np.uint64((1 << nlabels) - 1)
    masks[::7] = 0  # empty sets
    valid = rng.random(n) < 0.85
    raw = masks.view(np.uint8).reshape(n, 8)[:, :width].copy()
    for labels, as_text in ((text, True), (tuple(b"\xff" + lab for lab in text), False)):  # not UTF-8: bytes
        spec = ColumnSpec(index=0, type=T.MYSQL_TYPE_STRING, meta=(T.MYSQL_TYPE_SET << 8) | width, nullable=True,
                          collation=BINARY_COLLATION, set_values=labels)
        col = ColumnData(raw=raw, spec=spec, name="s", buf=np.zeros(8, np.uint8), offsets=None, lengths=None,
                         width=width, valid=valid, options=DecodeOptions())
        got = decode_column(col).to_pylist()
        expected = [[(lab.decode() if as_text else lab) for k, lab in enumerate(labels) if int(m) >> k & 1]
                    if ok else None for m, ok in zip(masks, valid)]
        assert got == expected
