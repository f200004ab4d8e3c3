"""What the command line writes, and what it says when it writes nothing or fails half-way.

* ``cat`` of a table that changes columns (a MariaDB server's binlog: CREATE, ALTER ... ADD,
  DROP and MODIFY to a wider type, rows under each layout) prints one schema: pandas and
  pyarrow read its CSV, its JSON lines and its table format (parsed back by the rule line)
  back equal to ``read_table``.
* A filter that leaves nothing says so on stderr (the CSV header still printed); a range
  ``read_table`` finds empty with the same filters is the reference.
* ``to-parquet`` and ``snapshot`` that fail leave nothing behind; ``snapshot`` refuses an
  existing output and a suffix that is not its format.
* Messages of the library come out in the command line's words (``--strict``, ``--tables``,
  ``--key``, ``--until``, ``--no-verify-checksums``).
"""

from __future__ import annotations

import decimal
import io
import json
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest

import vecbinlog

from ..conftest import corpus_path
from ..support.clirun import SAMPLE, json_rows, reference, run, tables_of

DB = "catlay"
#: Rows under the first layout: more than the table format samples its widths from (1000), so
#: that the columns later layouts add or widen are sized by their types, not by a sample.
FIRST_ROWS = 1100
#: The table's own columns as read_table gives them over every layout, and their Arrow types.
OWN = {"id": pa.int32(), "qty": pa.int64(), "price": pa.decimal128(8, 2), "note": pa.string(), "name": pa.string()}
#: Change-log columns compared too (every column's name is compared in every format).
META = ["_change_type", "_log_pos", "_event_row", "_schema_version"]


def _workload() -> list[str]:
    first = ", ".join(f"({i}, 'n{i:04d}', {i % 100}, {i}.{i % 100:02d})" for i in range(2, FIRST_ROWS + 1))
    return [
        f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB} CHARACTER SET utf8mb4", f"USE {DB}",
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), qty SMALLINT, price DECIMAL(8,2))",
        "INSERT INTO t VALUES (1, 'Ada', -32768, 999999.99), " + first,
        "ALTER TABLE t ADD COLUMN note VARCHAR(30)",
        "INSERT INTO t VALUES (2001, 'Søren', 10, 1000.00, 'gift wrap, one \"quote\"'), (2002, NULL, 1, NULL, '')",
        "ALTER TABLE t DROP COLUMN name",
        "INSERT INTO t VALUES (3001, 3, 2.00, 'after the drop'), (3002, NULL, 9.99, NULL)",
        "ALTER TABLE t MODIFY qty BIGINT",
        "INSERT INTO t VALUES (4001, 5000000000, 123456.78, 'after the modify'), (4002, -9000000000000, 0.01, 'x')",
        "UPDATE t SET note = 'updated', qty = 7 WHERE id = 2001",
        "DELETE FROM t WHERE id = 2",
        "CREATE TABLE nokey (a INT)",
        "INSERT INTO nokey VALUES (1), (1)",
        # a row undone by ROLLBACK TO SAVEPOINT after a MyISAM change: the server logs it
        "CREATE TABLE side (a INT) ENGINE=MyISAM",
        "BEGIN", "SAVEPOINT s", "INSERT INTO nokey VALUES (2)", "INSERT INTO side VALUES (2)",
        "ROLLBACK TO SAVEPOINT s", "COMMIT",
        # a zero date, which Arrow cannot hold
        "SET SESSION sql_mode = ''", "CREATE TABLE zero (d DATETIME)",
        "INSERT INTO zero VALUES ('0000-00-00 00:00:00')",
    ]


@pytest.fixture(scope="module")
def altered(mariadb_server, tmp_path_factory):
    """A binlog of the workload (a copy), and read_table's change log of ``catlay.t``."""
    path = mariadb_server.capture_binlog(*_workload())
    copy = tmp_path_factory.mktemp("altered") / path.name
    shutil.copy(path, copy)
    return copy, reference(copy, f"{DB}.t")


def _truth(ref: pa.Table) -> list[dict]:
    return ref.select(list(OWN) + META).to_pylist()


def _normal(rows: list[dict]) -> list[dict]:
    """Rows read back, as Python values of read_table's types (NaN/None -> None, numbers from
    their text where a reader made floats of them, DECIMAL exact from its text)."""
    def value(name, v):
        if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
            return None
        if name == "price":
            return decimal.Decimal(str(v)).quantize(decimal.Decimal("0.01"))
        if name in ("id", "qty", "_log_pos", "_event_row", "_schema_version"):
            return int(v)
        return str(v)
    return [{k: value(k, r[k]) for k in list(OWN) + META} for r in rows]


@pytest.mark.mariadb
def test_cat_csv_has_one_header_over_every_layout(altered):
    path, ref = altered
    assert sorted(set(ref.column("_schema_version").to_pylist())) == [0, 1, 2, 3]  # four layouts
    text = run("cat", str(path), "-t", f"{DB}.t", "-f", "csv", module=True).stdout
    assert text.count('"id"') == 1  # one header
    # pyarrow: NULL is an empty field, the empty string ""
    opts = pacsv.ConvertOptions(column_types=OWN, strings_can_be_null=True, quoted_strings_can_be_null=False)
    got = pacsv.read_csv(io.BytesIO(text.encode()), convert_options=opts)
    assert got.column_names == ref.column_names
    assert got.select(list(OWN)).equals(ref.select(list(OWN)))
    assert got.select(list(OWN) + META).to_pylist() == _truth(ref)
    # pandas, with its defaults but for the types
    df = pd.read_csv(io.StringIO(text), dtype={"price": str, "note": str, "name": str}, keep_default_na=False,
                     na_values={"qty": [""], "price": [""], "note": [""], "name": [""]})
    assert list(df.columns) == ref.column_names
    truth = [dict(r, note=r["note"] or None) for r in _truth(ref)]  # pandas reads "" and NULL alike
    assert _normal(df.to_dict("records")) == truth


@pytest.mark.mariadb
def test_cat_jsonl_has_the_same_keys_in_every_line(altered):
    path, ref = altered
    text = run("cat", str(path), "-t", f"{DB}.t", "-f", "jsonl", module=True).stdout
    lines = [json.loads(line) for line in text.splitlines()]
    assert {tuple(r) for r in lines} == {tuple(ref.column_names)}
    assert lines == json_rows(ref)
    got = pajson.read_json(io.BytesIO(text.encode()))
    assert got.column_names == ref.column_names
    assert _normal(got.to_pylist()) == _truth(ref)
    df = pd.read_json(io.StringIO(text), lines=True, dtype=False)
    assert list(df.columns) == ref.column_names
    assert _normal(df.to_dict("records")) == _truth(ref)


def parse_table(text: str) -> tuple[list[str], list[list[str | None]]]:
    """The table format read back: column spans from the rule line (dashes, two spaces apart);
    a cell is its span, stripped; NULL is None. Header and rule come once."""
    lines = text.splitlines()
    assert lines[1].replace("-", "").strip() == "", lines[1]
    spans, at = [], 0
    for dashes in lines[1].split("  "):
        spans.append((at, at + len(dashes)))
        at += len(dashes) + 2
    def cells(line: str) -> list[str]:
        return [line[a:b].strip() for a, b in spans]
    header = cells(lines[0])
    assert all(not set(line) <= {"-", " "} for line in lines[2:])  # one header, one rule
    return header, [[None if c == "NULL" else c for c in cells(line)] for line in lines[2:]]


@pytest.mark.mariadb
def test_cat_table_format_parsed_back(altered):
    """One block: the columns later layouts add or widen (note, qty) are as wide as their types'
    values (the sample of the first 1000 rows has none of them), so every line is aligned and
    nothing is cut."""
    path, ref = altered
    text = run("cat", str(path), "-t", f"{DB}.t", module=True).stdout
    header, rows = parse_table(text)
    assert header == ref.column_names and len(rows) == ref.num_rows
    widths = [len(d) for d in text.splitlines()[1].split("  ")]
    assert widths[header.index("note")] == 40 and widths[header.index("qty")] == len(str(-2**63))
    # pyarrow: the cells, cast to read_table's types
    cols = {name: pa.array([r[k] for r in rows], pa.string()) for k, name in enumerate(header)}
    got = pa.table({name: pc.cast(cols[name], t) for name, t in OWN.items()})
    assert got.equals(ref.select(list(OWN)))
    # pandas: a fixed-width reader, with the spans of the rule line
    spans, at = [], 0
    for w in widths:
        spans.append((at, at + w))
        at += w + 2
    df = pd.read_fwf(io.StringIO(text), colspecs=spans, skiprows=[1], dtype=str, keep_default_na=False,
                     na_values=["NULL"])
    assert list(df.columns) == ref.column_names
    assert _normal(df.to_dict("records")) == _truth(ref)  # the empty string: a blank cell, NULL: NULL


@pytest.mark.mariadb
def test_snapshot_without_a_key_names_the_flag(altered, tmp_path):
    path, _ = altered
    p = run("snapshot", str(path), str(tmp_path / "o.csv"), "-t", f"{DB}.nokey", check=2, module=True)
    assert p.stderr.endswith("name the key columns: --key COLUMNS\n") and "snapshot(" not in p.stderr
    assert not (tmp_path / "o.csv").exists()
    run("snapshot", str(path), str(tmp_path / "o.csv"), "-t", f"{DB}.nokey", "--key", "a", "-q", module=True)
    assert pacsv.read_csv(tmp_path / "o.csv").to_pylist() == [{"a": 1}]  # one row per key


@pytest.mark.mariadb
def test_library_warnings_name_the_flags(altered):
    """The row undone by ROLLBACK TO SAVEPOINT, the zero date: the library's warnings
    (rolled_back='keep', invalid_dates="string") name the flags that change them, which do."""
    path, _ = altered
    p = run("cat", str(path), "-t", f"{DB}.nokey", "-f", "jsonl", module=True)
    assert [r["a"] for r in map(json.loads, p.stdout.splitlines())] == [1, 1]
    assert ("1 row images left out: their transaction rolled back" in p.stderr and "--rolled-back keep keeps them"
            in p.stderr and "rolled_back=" not in p.stderr), p.stderr
    kept = run("cat", str(path), "-t", f"{DB}.nokey", "-f", "jsonl", "--rolled-back", "keep", module=True)
    assert [(r["a"], r["_outcome"]) for r in map(json.loads, kept.stdout.splitlines())] == [
        (1, "commit"), (1, "commit"), (2, "rollback")]
    p = run("cat", str(path), "-t", f"{DB}.zero", "-f", "jsonl", module=True)
    assert [r["d"] for r in map(json.loads, p.stdout.splitlines())] == [None]
    assert '--invalid-dates string returns every value as MySQL\'s text' in p.stderr and "invalid_dates" not in p.stderr
    p = run("cat", str(path), "-t", f"{DB}.zero", "-f", "jsonl", "--invalid-dates", "string", module=True)
    assert [r["d"] for r in map(json.loads, p.stdout.splitlines())] == ["0000-00-00 00:00:00"] and p.stderr == ""


def test_cat_corpus_table_of_three_layouts_loads():
    """canal's tsdb file: wanshao.wanshao_test has 4, 5 and 6 columns; its CSV loads."""
    path = corpus_path("alibaba__canal/tsdb/mysql-bin.000003")
    ref = reference(path, "wanshao.wanshao_test")
    text = run("cat", str(path), "-t", "wanshao.wanshao_test", "-f", "csv", module=True).stdout
    got = pacsv.read_csv(io.BytesIO(text.encode()))
    assert got.column_names == ref.column_names and got.num_rows == ref.num_rows
    for name in ("@1", "@3", "@4", "@5", "@6"):
        assert got.column(name).to_pylist() == ref.column(name).to_pylist(), name
    assert pd.read_csv(io.StringIO(text)).shape == (ref.num_rows, ref.num_columns)


# -- what matches nothing -------------------------------------------------------------------
@pytest.mark.parametrize("filters,said", [
    (["--start", "100", "--stop", "10"], "--start 100 --stop 10"),
    (["--until", "2000-01-01"], "--until 2000-01-01T00:00:00"),
], ids=["start-after-stop", "until-before-the-first-event"])
def test_cat_of_nothing_says_so(filters, said):
    ref = reference(SAMPLE, "shop.orders")
    api = {"start": 100, "stop": 10} if filters[0] == "--start" else {"until": "2000-01-01"}
    assert reference(SAMPLE, "shop.orders", **api).num_rows == 0  # the API finds nothing there either
    warning = f"vecbinlog: warning: shop.orders: no row changes match {said}\n"
    csv_ = run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "csv", *filters, module=True)
    assert csv_.stdout == ",".join(f'"{n}"' for n in ref.column_names) + "\n" and csv_.stderr == warning
    assert pacsv.read_csv(io.BytesIO(csv_.stdout.encode())).column_names == ref.column_names
    table = run("cat", str(SAMPLE), "-t", "shop.orders", *filters, module=True)
    assert table.stdout.splitlines()[0].split() == ref.column_names and len(table.stdout.splitlines()) == 2
    assert table.stderr == warning
    jsonl = run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", *filters, module=True)
    assert jsonl.stdout == "" and jsonl.stderr == warning
    assert run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "-q", *filters, module=True).stderr == ""


def test_to_parquet_of_nothing_says_so(tmp_path):
    out = tmp_path / "out"
    p = run("to-parquet", str(SAMPLE), str(out), "--tables", "nope.*", module=True)
    assert p.stderr == (f"vecbinlog: warning: --tables nope.* matches none of the tables with rows events: "
                        f"{', '.join(tables_of(SAMPLE))}: nothing written\n")
    assert not out.exists()
    assert all(reference(SAMPLE, t, until="2000-01-01").num_rows == 0 for t in tables_of(SAMPLE))
    p = run("to-parquet", str(SAMPLE), str(out), "--until", "2000-01-01", module=True)
    assert p.stderr == ("vecbinlog: warning: shop.customers, shop.orders: no row changes match "
                        "--until 2000-01-01T00:00:00: nothing written\n")
    assert not out.exists()
    p = run("to-parquet", str(SAMPLE), str(out), "--change-types", "delete", module=True)
    assert reference(SAMPLE, "shop.customers", change_types="delete").num_rows == 0
    assert p.stderr.splitlines() == ["shop.orders: 1 rows, 1 parquet file(s) in " + str(out / "table=shop.orders"),
                                     "vecbinlog: warning: shop.customers: no row changes match --change-types delete"]
    assert sorted(x.name for x in out.iterdir()) == ["table=shop.orders"]


# -- failures leave nothing behind ----------------------------------------------------------
def _two_files_the_second_corrupt(folder):
    """Two copies of the sample (it rotates to mysql-bin.000003), a byte of the second's last
    rows event (the DELETE at 2815) flipped: its CRC32 no longer matches."""
    a, b = folder / "mysql-bin.000002", folder / "mysql-bin.000003"
    shutil.copy(SAMPLE, a)
    data = bytearray(SAMPLE.read_bytes())
    data[2815 + 30] ^= 0xFF
    b.write_bytes(bytes(data))
    return a, b


def test_to_parquet_that_fails_leaves_nothing(tmp_path):
    a, b = _two_files_the_second_corrupt(tmp_path)
    # the failure comes half-way: tables' batches are written before it
    written = []
    with vecbinlog.open([a, b]) as log, pytest.raises(vecbinlog.ChecksumError):
        for name, batch in log.iter_tables():
            written.append(name)
    assert written
    out = tmp_path / "out"
    p = run("to-parquet", str(a), str(b), str(out), check=1, module=True)
    assert p.stderr == (f"vecbinlog: error: {b}, offset 2815, DELETE_ROWS_EVENT_V1: CRC32 mismatch: stored "
                        f"{p.stderr.split('stored ')[1].split(',')[0]}, computed "
                        f"{p.stderr.split('computed ')[1].split(' ')[0]} (--no-verify-checksums skips the check)\n")
    assert not out.exists()  # made by the run, left empty: removed
    # over an earlier dataset, with --overwrite: the dataset is left as it was
    run("to-parquet", str(a), str(out), "-q", module=True)
    before = {t: pq.read_table(out / f"table={t}") for t in tables_of(a)}
    run("to-parquet", str(a), str(b), str(out), "--overwrite", check=1, module=True)
    assert sorted(x.name for x in out.iterdir()) == [f"table={t}" for t in tables_of(a)]  # nothing hidden left
    for t, table in before.items():
        assert sorted(x.name for x in (out / f"table={t}").iterdir()) == ["part-00000.parquet"]
        assert ds.dataset(out / f"table={t}").to_table().equals(table)
        assert table.to_pylist() == reference(a, t).to_pylist()
    # the next run is not refused by anything the failed ones left
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    run("to-parquet", str(a), str(b), str(fresh), "--no-verify-checksums", "-q", module=True)
    for t in tables_of(a):
        assert pq.read_table(fresh / f"table={t}").num_rows == reference([a, b], t, verify_checksums=False).num_rows


def test_snapshot_output_is_checked_first(tmp_path):
    """A suffix that is not a format, or an existing OUT: exit 2 before reading; --overwrite
    replaces; a failed snapshot leaves no OUT (nor its temporary file)."""
    expected = reference(SAMPLE, "shop.orders")
    for name in ("orders.txt", "orders"):
        p = run("snapshot", str(SAMPLE), str(tmp_path / name), "-t", "shop.orders", check=2, module=True)
        suffix = ".txt" if name.endswith(".txt") else "none"
        assert p.stderr == (f"vecbinlog: error: {tmp_path / name}: the suffix of OUT is its format: .parquet or "
                            f".csv, not {suffix}\n")
    out = tmp_path / "orders.parquet"
    run("snapshot", str(SAMPLE), str(out), "-t", "shop.orders", "-q", module=True)
    first = pq.read_table(out)
    assert sorted(first.column("id").to_pylist()) == sorted(set(expected.column("id").to_pylist()) - {1003})
    p = run("snapshot", str(SAMPLE), str(out), "-t", "shop.orders", "--until", "0-1-6", check=2, module=True)
    assert p.stderr == f"vecbinlog: error: {out} exists; use --overwrite to replace it\n"
    assert pq.read_table(out).equals(first)
    run("snapshot", str(SAMPLE), str(out), "-t", "shop.orders", "--until", "0-1-6", "--overwrite", "-q", module=True)
    with vecbinlog.open(SAMPLE) as log:
        assert pq.read_table(out).equals(log.snapshot("shop.orders", until="0-1-6"))
    # a GTID the files do not have: the API's message, in the command line's words
    p = run("snapshot", str(SAMPLE), str(tmp_path / "x.csv"), "-t", "shop.orders", "--until", "0-1-99", check=2,
            module=True)
    assert p.stderr == f"vecbinlog: error: --until: GTID '0-1-99' is not in the files ['{SAMPLE.name}']\n"
    p = run("snapshot", str(SAMPLE), str(tmp_path / "x.csv"), "-t", "shop.orders", "--until", "nonsense", check=2,
            module=True)
    assert p.stderr.startswith("vecbinlog: error: argument --until: 'nonsense' is none of POS, FILE:POS, an ISO "
                               "date-time or a GTID (e.g. ")
    assert p.stderr.endswith("(see 'vecbinlog snapshot --help')\n") and p.stderr.count("\n") == 1
    a, b = _two_files_the_second_corrupt(tmp_path)
    run("snapshot", str(a), str(b), str(tmp_path / "bad.csv"), "-t", "shop.orders", check=1, module=True)
    assert sorted(x.name for x in tmp_path.iterdir() if "bad" in x.name) == []


def test_truncated_file_warning_names_the_flag(tmp_path):
    """The sample cut inside its last event: a warning naming --strict (not strict=True);
    with --strict, exit 1."""
    data = SAMPLE.read_bytes()
    cut = tmp_path / SAMPLE.name
    cut.write_bytes(data[:-10])
    p = run("cat", str(cut), "-t", "shop.orders", "-f", "jsonl", module=True)
    assert [json.loads(line) for line in p.stdout.splitlines()] == json_rows(reference(cut, "shop.orders"))
    assert "(--strict raises instead)" in p.stderr and "strict=True" not in p.stderr
    assert p.stderr.startswith(f"vecbinlog: warning: {cut}: reading stopped at offset ")
    p = run("cat", str(cut), "-t", "shop.orders", "--strict", check=1, module=True)
    assert p.stderr.startswith(f"vecbinlog: error: {cut}, offset ") and p.stderr.count("\n") == 1
