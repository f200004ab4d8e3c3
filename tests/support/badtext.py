"""The invalid-text workload: a real MariaDB server writes a table whose sjis, ujis and utf8mb4
columns hold values that are valid first and not valid in their charset later, over four
layouts (ADD COLUMN, then MODIFY ... CHARACTER SET between sjis and utf8mb4), in five files
(tests/test_invalid_text_layouts.py, tests/spark/test_spark.py).

How the server is made to store bytes Python's codec refuses: a hex literal into an sjis (or
ujis) column (``X'81AD'``, or ``CONCAT(CONVERT('日本' USING sjis), X'81AD')``), in MariaDB's
default strict sql_mode. The server checks only that the bytes are well-formed in the charset
(lead and trail byte ranges); 0x81AD and 0x85A0 (sjis), 0xA2AF and 0x8FA2A1 (ujis) are
well-formed codes with no character, which Python's ``shift_jis``/``euc_jp`` refuse. Bytes that
are not well-formed (0xFF) become ``?`` whatever the sql_mode, also through ``SET NAMES
binary``, ``_binary`` literals and casts: MariaDB 10.11 gives a utf8mb4 column no invalid
UTF-8 so (tests/test_fuzz.py makes one by changing a byte of a file).

The truth is the server's: every row image's bytes as ``mariadb-binlog -vv`` prints them, in
log order (:func:`vv_images`), and the table's rows as ``SELECT HEX(...)`` gives them after each
phase (each phase ends by touching every row, so that each row's last image is in the layout of
that moment).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from .mariadb import parse_vv, run_mariadb_binlog_vv

DB = "badtext"
#: column -> its charset in each phase (phase 3 starts with an ALTER ... MODIFY of m, w and v)
CHARSETS = {
    "s": ["sjis"] * 4,  # values not valid sjis from phase 2 on (a later layout), by INSERT and UPDATE
    "j": ["ujis"] * 4,  # values not valid ujis from phase 2 on
    "g": ["sjis"] * 4,  # valid in every row: text
    "u": ["utf8mb4"] * 4,
    "m": ["sjis", "sjis", "sjis", "utf8mb4"],  # not valid sjis in phase 2, then UTF-8
    "w": ["utf8mb4", "utf8mb4", "utf8mb4", "sjis"],  # UTF-8, then sjis with values not valid in it
    "v": ["sjis", "sjis", "sjis", "utf8mb4"],  # valid in every row: text over both charsets
}
#: the columns a read of the whole log gives as bytes
BINARY = {"s", "j", "m", "w"}
CODECS = {"sjis": "shift_jis", "ujis": "euc_jp", "utf8mb4": "utf-8"}
#: well-formed for the server, no character for Python's codec
BAD = {"sjis": ["81ad", "85a0"], "ujis": ["a2af", "8fa2a1"]}
#: valid text of every charset here ('表' and 'ソ' end in 0x5C in sjis; half-width kana)
TEXTS = ["日本語", "表ソ", "カタカナ", "ｶﾅ", "abc", "漢字テキスト", ""]
ROWS = 30  # inserted per phase
COLUMNS = ["id", "n", "s", "j", "g", "u", "m", "w", "v", "n1", "n2"]
#: the phase of each file's rows (phase 1 flushes the log after its inserts)
FILE_PHASES = [0, 1, 1, 2, 3]


def _text(tag: str, cs: str, i: int, bad: bool = False) -> str:
    """The SQL of row ``i``'s value of column ``tag`` (its name: each column's values differ)
    of charset ``cs``: valid text, or (``bad``) bytes not valid in it."""
    text = tag + TEXTS[i % len(TEXTS)] + str(i)
    if cs == "utf8mb4":
        return f"'{text}😀'" if i % 3 == 0 else f"'{text}'"
    if not bad:
        return f"'{text}'"
    return f"CONCAT(CONVERT('{text}' USING {cs}), X'{BAD[cs][i % 2]}')"


def _row(phase: int, i: int) -> str:
    """The SQL values of row ``i`` of ``r``, inserted in ``phase``."""
    charset = {c: cs[phase] for c, cs in CHARSETS.items()}
    values = {
        "s": _text("s", "sjis", i, phase >= 2 and i % 9 == 0),
        "j": _text("j", "ujis", i, phase >= 2 and i % 13 == 0),
        "g": "NULL" if i % 11 == 0 else _text("g", "sjis", i),
        "u": _text("u", "utf8mb4", i),
        "m": _text("m", charset["m"], i, phase == 2 and i % 9 == 4),
        "w": _text("w", charset["w"], i, phase == 3 and i % 9 == 2),
        "v": _text("v", charset["v"], i),
    }
    extra = [str(i), "NULL"][:phase]  # n1 from phase 1 on, n2 from phase 2 on
    return f"({i}, 0, {', '.join(values.values())}{''.join(', ' + e for e in extra)})"


def _phase(phase: int) -> list[str]:
    """The statements of ``phase``: its DDL, ROWS rows inserted (``o``'s between), updates."""
    ids = range(phase * ROWS + 1, (phase + 1) * ROWS + 1)
    rows = [_row(phase, i) for i in ids]
    sql = {
        0: ["CREATE TABLE r (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0, s VARCHAR(20) CHARACTER SET sjis, "
            "j VARCHAR(20) CHARACTER SET ujis, g VARCHAR(20) CHARACTER SET sjis, u VARCHAR(20) CHARACTER SET utf8mb4, "
            "m VARCHAR(20) CHARACTER SET sjis, w VARCHAR(20) CHARACTER SET utf8mb4, v VARCHAR(20) CHARACTER SET sjis)",
            "CREATE TABLE o (id INT PRIMARY KEY, s VARCHAR(20) CHARACTER SET sjis)"],
        1: ["ALTER TABLE r ADD COLUMN n1 INT"],
        2: ["ALTER TABLE r ADD COLUMN n2 INT"],
        # m's sjis codes without a character and w's emoji become '?' (strict sql_mode refuses the ALTER:
        # Incorrect string value)
        3: ["SET SESSION sql_mode = ''",
            "ALTER TABLE r MODIFY m VARCHAR(20) CHARACTER SET utf8mb4, MODIFY w VARCHAR(20) CHARACTER SET sjis, "
            "MODIFY v VARCHAR(20) CHARACTER SET utf8mb4",
            "SET SESSION sql_mode = DEFAULT"],
    }[phase]
    # the rows in statements of 10, another table's rows between them in the same transaction
    sql += ["BEGIN"]
    for k in range(0, len(rows), 10):
        sql += [f"INSERT INTO r VALUES {', '.join(rows[k:k + 10])}",
                f"INSERT INTO o VALUES ({ids[k]}, {_text('o', 'sjis', ids[k])})"]
    sql += ["COMMIT"]
    if phase == 1:  # the layout's rows in two files: a run carried from file to file
        sql += ["FLUSH BINARY LOGS"]
    sql += [f"UPDATE r SET g = {_text('g', 'sjis', phase)} WHERE id % 5 = 0"]
    if phase == 2:  # a valid value of an earlier layout made invalid: its before image valid, after image not
        sql += ["UPDATE r SET s = X'85a0' WHERE id = 3"]
    if phase == 3:
        sql += ["DELETE FROM r WHERE id % 17 = 0"]
    return sql + ["UPDATE r SET n = n + 1"]  # every row's last image in this layout


def run_badtext(server, metadata: str = "FULL") -> dict:
    """Run the phases with ``binlog_row_metadata=metadata``: the files (:data:`FILE_PHASES`),
    every row image of ``r`` mariadb-binlog prints in them (:func:`vv_images`), after each phase
    the server's rows of ``r`` (``id`` -> {column: value}, a text column's value its bytes) and
    GTID position, and the rows of ``o`` at the end (``id`` -> bytes)."""
    old = server.query("SELECT @@GLOBAL.binlog_row_metadata")[0][0]
    server.set_global("binlog_row_metadata", metadata)
    try:
        server.flush_binary_logs()
        first = server.current_binlog()
        server.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB} CHARACTER SET utf8mb4")
        marks = []
        for phase in range(4):
            server.execute(*_phase(phase), database=DB)
            names = [r[0] for r in server.query(f"SHOW COLUMNS FROM {DB}.r")]
            select = ", ".join(f"HEX({n})" if n in CHARSETS else n for n in names)
            rows = {}
            for values in server.query(f"SELECT {select} FROM {DB}.r ORDER BY id"):
                rows[values[0]] = {n: bytes.fromhex(v) if n in CHARSETS and v is not None else v
                                   for n, v in zip(names, values)}
            marks.append({"rows": rows, "gtid": server.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0]})
            server.flush_binary_logs()
    finally:
        server.set_global("binlog_row_metadata", str(old))
    other = {i: bytes.fromhex(h) for i, h in server.query(f"SELECT id, HEX(s) FROM {DB}.o ORDER BY id")}
    files = server.binlog_files()
    files = files[files.index(first):-1]
    assert len(files) == len(FILE_PHASES)
    return {"files": files, "marks": marks, "images": vv_images(files, FILE_PHASES), "o": other}


#: the columns of each layout (phase), in their order: n1 and n2 added by phases 1 and 2
LAYOUTS = [COLUMNS[:9], COLUMNS[:10], COLUMNS, COLUMNS]
#: _change_type -> what mariadb-binlog's image is
KINDS = {"insert": "insert", "delete": "delete", "update_preimage": "update_before", "update_postimage": "update_after"}


def vv_images(files: list[Path], phases: list[int]) -> list[tuple[int, str, dict[str, object]]]:
    """Every row image of ``r`` mariadb-binlog prints in ``files`` (whose rows are of the
    ``phases``), in log order: (phase, kind, {column: value}), a text column's value its
    bytes, an integer's its signed reading."""
    out = []
    for phase, path in zip(phases, files):
        for im in parse_vv(run_mariadb_binlog_vv(path)):
            if im.table != f"{DB}.r":
                continue
            values = {}
            for at, value in im.as_dict().items():
                name = LAYOUTS[phase][at - 1]
                values[name] = value.value(False) if name not in CHARSETS and value is not None else value
            out.append((phase, im.kind, values))
    return out


def expected(name: str, phase: int, value, binary: set[str] = BINARY):
    """What a read of the whole log gives for ``value`` (bytes, for a text column) of column
    ``name`` in a row of ``phase``: the bytes (``binary``: the columns that are bytes), or
    their text in the phase's charset."""
    if value is None or name not in CHARSETS or name in binary:
        return value
    return value.decode(CODECS[CHARSETS[name][phase]])


def valid(value: bytes | None, cs: str) -> bool:
    """Whether ``value`` is text of charset ``cs`` for Python's codec."""
    try:
        value is None or value.decode(CODECS[cs])
    except UnicodeDecodeError:
        return False
    return True


def assert_images(table: pa.Table, images: list, binary: set[str] = BINARY) -> None:
    """Every row of ``table`` (a change log of ``r`` in log order) is the image mariadb-binlog
    printed there (``images``, :func:`vv_images`), value by value: each text column's bytes,
    or their text when it is not in ``binary``."""
    rows = table.to_pylist()
    assert len(rows) == len(images)
    for k, (row, (phase, kind, values)) in enumerate(zip(rows, images)):
        assert KINDS[row["_change_type"]] == kind and row["_schema_version"] == phase, k
        for name, value in values.items():
            assert row[name] == expected(name, phase, value, binary), (k, name, row[name], value)
        assert all(row.get(n) is None for n in COLUMNS if n not in values), k  # columns its layout lacks


def invalid_counts(images: list) -> dict[str, str]:
    """What the DecodeWarning of each column with values Python's codec refuses says: its
    charsets over the layouts, and how many printed values are not valid in their layout's."""
    bad: dict[str, dict[str, int]] = {}
    for phase, _, values in images:
        for name, value in values.items():
            if name in CHARSETS and not valid(value, CHARSETS[name][phase]):
                counts = bad.setdefault(name, {})
                counts[CHARSETS[name][phase]] = counts.get(CHARSETS[name][phase], 0) + 1
    return {name: f"({', '.join(dict.fromkeys(CHARSETS[name]))}) holds "
                  + ", ".join(f"{n} value(s) not valid {cs}" for cs, n in counts.items()) for name, counts in bad.items()}
