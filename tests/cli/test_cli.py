"""The ``vecbinlog`` command line, run as the installed console script (and ``python -m``).

References are independent of the CLI: the library's ``read_table`` for what the CLI writes
and prints, and a 10-line walk over the 19-byte event headers for the counts of ``info``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import vecbinlog
from vecbinlog.cli.writers import PartWriter, plain_per_batch_dictionaries

from ..conftest import DATA, corpus_path
from ..support.clirun import SAMPLE, json_rows, reference, run, tables_of

MULTI = "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32"
TRUNCATED = "blackbeam__rust_mysql_common/binlog_truncated_prev_gtid_event.000001"
NOT_A_BINLOG = "polardb__polardbx-cdc/mysql_bin.19_1"

# Event type codes -> names, from the servers' sources (log_event.h / log_event.h of MariaDB).
TYPE_NAMES = {
    2: "QUERY_EVENT", 4: "ROTATE_EVENT", 15: "FORMAT_DESCRIPTION_EVENT", 16: "XID_EVENT",
    19: "TABLE_MAP_EVENT", 23: "WRITE_ROWS_EVENT_V1", 24: "UPDATE_ROWS_EVENT_V1",
    25: "DELETE_ROWS_EVENT_V1", 30: "WRITE_ROWS_EVENT", 31: "UPDATE_ROWS_EVENT",
    32: "DELETE_ROWS_EVENT", 33: "GTID_LOG_EVENT", 34: "ANONYMOUS_GTID_LOG_EVENT",
    35: "PREVIOUS_GTIDS_LOG_EVENT", 160: "ANNOTATE_ROWS_EVENT", 161: "BINLOG_CHECKPOINT_EVENT",
    162: "GTID_EVENT", 163: "GTID_LIST_EVENT",
}
ROWS_CODES = {23, 24, 25, 30, 31, 32}


def header_walk(path: Path) -> Counter:
    """Events by type code: the chain of 19-byte headers (type at +4, event_size at +9)."""
    buf, pos, out = path.read_bytes(), 4, Counter()
    while pos + 19 <= len(buf):
        size = struct.unpack_from("<I", buf, pos + 9)[0]
        if size < 19 or pos + size > len(buf):
            break  # a truncated last event: not an event
        out[buf[pos + 4]] += 1
        pos += size
    return out


# -- (1) to-parquet ---------------------------------------------------------------------
def _read_back(outdir: Path, table: str, fmt: str) -> pa.Table:
    folder = outdir / f"table={table}"
    assert folder.is_dir(), sorted(p.name for p in outdir.iterdir())
    got = ds.dataset(folder, format=fmt, partitioning="hive").to_table()
    # no hive column comes from below the table's own folder; drop one if a reader adds it
    return got.drop_columns([c for c in ("table",) if c in got.column_names])


def _assert_same(got: pa.Table, ref: pa.Table, fmt: str = "parquet") -> None:
    if fmt == "arrow":  # Arrow IPC files hold the per-batch dictionaries as plain strings
        ref = pa.Table.from_batches([plain_per_batch_dictionaries(b) for b in ref.to_batches()])
    assert got.column_names == ref.column_names
    assert got.num_rows == ref.num_rows
    for name in ref.column_names:
        g, r = got.schema.field(name), ref.schema.field(name)
        assert g.type == r.type, name  # dictionary columns included: same index and value types
        assert g.equals(r, check_metadata=True), (g, r)
        a, b = got.column(name), ref.column(name)
        if pa.types.is_dictionary(r.type):  # the dictionaries may be split differently: compare decoded
            a, b = a.cast(r.type.value_type), b.cast(r.type.value_type)
        assert a.equals(b), name
    assert got.equals(ref)


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
@pytest.mark.parametrize("source", ["sample", "multi"])
def test_to_parquet_equals_read_table(tmp_path, fmt, source):
    path = SAMPLE if source == "sample" else corpus_path(MULTI)
    out = tmp_path / "out"
    p = run("to-parquet", str(path), str(out), "--format", fmt)
    tables = tables_of(path)
    assert len(tables) >= 2
    # hive-style: one folder per table, discovered as the partition column `table`
    parts = ds.dataset(out, format="parquet" if fmt == "parquet" else "ipc", partitioning="hive")
    assert {str(f.partition_expression) for f in parts.get_fragments()} == {f'(table == "{t}")' for t in tables}
    for t in tables:
        files = sorted((out / f"table={t}").iterdir())
        assert [f.name for f in files] == [f"part-00000.{fmt}"]
        _assert_same(_read_back(out, t, "parquet" if fmt == "parquet" else "ipc"), reference(path, t), fmt)
        assert f"{t}: {reference(path, t).num_rows:,} rows" in p.stderr
    # an existing output is not silently replaced
    again = run("to-parquet", str(path), str(out), "--format", fmt, check=2)
    assert again.stderr == (f"vecbinlog: error: {out / ('table=' + tables[0])} already has part files; "
                            "use --overwrite to replace them\n")
    run("to-parquet", str(path), str(out), "--format", fmt, "--overwrite", "-q")
    _assert_same(_read_back(out, tables[0], "parquet" if fmt == "parquet" else "ipc"), reference(path, tables[0]), fmt)


def test_to_parquet_csv_row_counts(tmp_path):
    path = corpus_path(MULTI)
    run("to-parquet", str(path), str(tmp_path), "--format", "csv", "-q")
    for t in tables_of(path):
        ref = reference(path, t)
        with open(tmp_path / f"table={t}" / "part-00000.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ref.column_names
        assert len(rows) - 1 == ref.num_rows
        assert [int(r[ref.column_names.index("_log_pos")]) for r in rows[1:]] == ref.column("_log_pos").to_pylist()


def test_to_parquet_filters_and_two_files(tmp_path):
    """Two files (copies of the sample under two names): one part per table in Parquet; the
    Arrow IPC file format cannot change a dictionary (`_log_file`), so a part per file."""
    a, b = tmp_path / "mysql-bin.000002", tmp_path / "mysql-bin.000003"  # the sample rotates to mysql-bin.000003
    shutil.copy(SAMPLE, a)
    shutil.copy(SAMPLE, b)
    ref = reference([a, b], "shop.orders", change_types=["update", "delete"])
    run("to-parquet", str(a), str(b), str(tmp_path / "pq"), "--tables", "shop.o*", "--change-types", "update,delete")
    assert [p.name for p in (tmp_path / "pq").iterdir()] == ["table=shop.orders"]
    _assert_same(_read_back(tmp_path / "pq", "shop.orders", "parquet"), ref)
    run("to-parquet", str(a), str(b), str(tmp_path / "ipc"), "-f", "arrow", "--tables", "shop.orders",
        "--change-types", "update,delete")
    assert len(list((tmp_path / "ipc" / "table=shop.orders").iterdir())) == 2
    got = _read_back(tmp_path / "ipc", "shop.orders", "ipc")
    _assert_same(got, ref, "arrow")


def test_schema_change_starts_a_new_part(tmp_path):
    """ALTER TABLE between batches: the writer starts part-00001 with the new schema."""
    with vecbinlog.open(SAMPLE) as log:
        first = next(log.iter_batches("shop.orders"))
    altered = first.append_column("added", pa.array(range(first.num_rows), pa.int64()))
    for fmt, dsfmt in [("parquet", "parquet"), ("arrow", "ipc"), ("csv", "csv")]:
        w = PartWriter(tmp_path / fmt, fmt)
        for batch in (first, first, altered):
            w.write(batch)
        w.close()
        assert [p.name for p in w.files] == [f"part-00000.{fmt}", f"part-00001.{fmt}"]
        if fmt != "csv":
            ready = plain_per_batch_dictionaries if fmt == "arrow" else (lambda b: b)
            assert ds.dataset(w.files[0], format=dsfmt).to_table().equals(pa.Table.from_batches([ready(first)] * 2))
            assert ds.dataset(w.files[1], format=dsfmt).to_table().equals(pa.Table.from_batches([ready(altered)]))


# -- (2) info ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sample", MULTI, TRUNCATED])
def test_info_json_counts_equal_header_walk(name):
    path = SAMPLE if name == "sample" else corpus_path(name)
    p = run("info", "--json", str(path))
    out = json.loads(p.stdout)
    (f,) = out["files"]
    walk = header_walk(path)
    assert f["events"] == {TYPE_NAMES[c]: n for c, n in walk.items()}
    rows_events = sum(n for c, n in walk.items() if c in ROWS_CODES)
    assert sum(t["rows_events"] for t in out["tables"].values()) == rows_events
    for t, counts in out["tables"].items():
        ref = reference(path, t).column("_change_type").to_pylist()
        assert counts["row_images"] == len(ref)
        assert (counts["insert"], counts["update"], counts["delete"]) == (
            ref.count("insert"), ref.count("update_postimage"), ref.count("delete"))
    if name == TRUNCATED:
        last = 4 + sum(struct.unpack_from("<I", path.read_bytes(), 4 + 9))
        assert f["stopped_at"]["offset"] == last == 120
        assert "warning" in p.stderr and "offset 120" in p.stderr
        # --strict: the truncated event is an error
        strict = run("info", "--strict", str(path), check=1)
        assert strict.stderr.count("\n") == 1 and f"{path}, offset 120" in strict.stderr
    else:
        assert f["stopped_at"] is None


def test_info_text_sample():
    p = run("info", str(SAMPLE))
    assert "server version   10.11.19-MariaDB" in p.stdout
    assert "checksum         CRC32" in p.stdout
    assert "2026-11-21 20:00:21 UTC" in p.stdout  # the workload's timestamps
    walk = header_walk(SAMPLE)
    assert f"events           {sum(walk.values())}" in p.stdout
    counts = {line.split()[0]: line.split()[1] for line in p.stdout.splitlines() if line.startswith("    ")}
    assert counts == {TYPE_NAMES[c]: str(n) for c, n in walk.items()}
    assert "shop.orders" in p.stdout and "shop.customers" in p.stdout
    # the GTIDs of the file's transactions, first and last as mariadb-binlog printed them
    printed = re.findall(r"\tGTID (\d+-\d+-\d+)", (SAMPLE.parent / "mariadb-binlog-vv.txt").read_text())
    assert f"gtids            {printed[-1]}  ({len(printed)} transactions, {printed[0]} .. {printed[-1]})" in p.stdout


def test_info_compressed_transactions():
    """Events inside MySQL compressed transactions are counted as the corpus MANIFEST lists them."""
    p = run("info", str(corpus_path("blackbeam__rust_mysql_common/transaction_compression.000001")))
    inner = p.stdout.split("inside compressed transactions ")[1].split("\n\n")[0]
    assert inner.split()[0] == "4"
    counts = {line.split()[0]: int(line.split()[1]) for line in inner.splitlines()[1:] if line.startswith("    ")}
    assert counts == {"QUERY_EVENT": 1, "XID_EVENT": 1, "TABLE_MAP_EVENT": 1, "WRITE_ROWS_EVENT": 1}


# -- tables -----------------------------------------------------------------------------
def test_tables_json_and_text():
    path = corpus_path(MULTI)
    out = json.loads(run("tables", "--json", str(path)).stdout)
    with vecbinlog.open(path) as log:
        assert list(out) == log.tables
        for t, cols in out.items():
            schema = reference(path, t).schema
            own = [f for f in schema if f.metadata and b"mysql_type" in f.metadata]
            assert [c["name"] for c in cols] == [f.name for f in own]
            assert [c["arrow_type"] for c in cols] == [str(f.type) for f in own]
            assert [c["mysql_type"] for c in cols] == [f.metadata[b"mysql_type"].decode() for f in own]
    text = run("tables", str(SAMPLE)).stdout
    assert "price        double      DOUBLE" in text
    assert "name     string      VARCHAR     utf8mb4" in text
    assert text.splitlines()[0] == "shop.customers  (3 columns)"


# -- (3) cat ----------------------------------------------------------------------------
@pytest.mark.parametrize("module", [False, True])
def test_cat_jsonl_limit(module):
    p = run("cat", str(SAMPLE), "--table", "shop.orders", "--format", "jsonl", "--limit", "3", module=module)
    lines = p.stdout.splitlines()
    assert len(lines) == 3
    assert [json.loads(line) for line in lines] == json_rows(reference(SAMPLE, "shop.orders").slice(0, 3))


def test_cat_jsonl_corpus_all_rows():
    path = corpus_path(MULTI)
    for t in tables_of(path)[:4]:
        got = [json.loads(line) for line in run("cat", str(path), "-t", t, "-f", "jsonl").stdout.splitlines()]
        assert got == json_rows(reference(path, t))


def test_cat_csv_and_table():
    ref = reference(SAMPLE, "shop.orders")
    rows = list(csv.reader(io.StringIO(run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "csv").stdout)))
    assert rows[0] == ref.column_names
    expected = ref.select(["id", "customer_id", "quantity", "price", "note"]).to_pylist()
    assert [[int(r[0]), int(r[1]), int(r[2]), float(r[3]), r[4]] for r in rows[1:]] == [
        [e["id"], e["customer_id"], e["quantity"], e["price"], "" if e["note"] is None else e["note"]] for e in expected
    ]
    # NULL is an empty field, the empty string is "" (Arrow's CSV writer quotes every string)
    raw = run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "csv").stdout.splitlines()
    assert raw[1].startswith("1001,1,2,19.99,,") and raw[3].startswith('1003,3,10,0.25,"",')
    text = run("cat", str(SAMPLE), "-t", "shop.orders").stdout.splitlines()
    assert text[0].split() == ref.column_names
    assert len(text) == 2 + ref.num_rows
    assert text[2].split()[:5] == ["1001", "1", "2", "19.99", "NULL"]
    narrow = run("cat", str(SAMPLE), "-t", "shop.orders", "--max-width", "6").stdout.splitlines()
    assert "gift …" in narrow[3] and "  1000000000  " in narrow[5]  # text is cut, numbers never


_CAT_IN_A_CHILD = """
import contextlib, io, json, sys
from vecbinlog.cli import main
out = {}
for args in (["cat", sys.argv[1], "-t", "shop.orders", "-f", "jsonl"], ["cat", sys.argv[1], "-t", "shop.orders", "-f", "csv"],
             ["cat", sys.argv[1], "-t", "shop.orders"], ["events", sys.argv[1], "--json"]):
    buf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(buf):
        code = main(args)
    buf.flush()
    out[" ".join(args[3:]) or args[0]] = [code, buf.buffer.getvalue().decode()]
print(json.dumps({"pandas": "pandas" in sys.modules, "out": out}))
"""


def test_cat_and_events_load_no_pandas():
    """``cat`` (every format) and ``events`` make their text without what makes pyarrow import
    pandas (0.3 s of every command: pa.array, pa.scalar, to_numpy, Python values given to
    compute functions), and print the rows read_table gives and the events mariadb-binlog lists."""
    done = subprocess.run([sys.executable, "-c", _CAT_IN_A_CHILD, str(SAMPLE)], capture_output=True, text=True,
                          check=True, timeout=300)
    got = json.loads(done.stdout)
    assert got["pandas"] is False
    out = got["out"]
    assert all(code == 0 for code, _ in out.values())
    ref = reference(SAMPLE, "shop.orders")
    assert [json.loads(line) for line in out["shop.orders -f jsonl"][1].splitlines()] == json_rows(ref)
    rows = list(csv.reader(io.StringIO(out["shop.orders -f csv"][1])))
    assert rows[0] == ref.column_names and [int(r[0]) for r in rows[1:]] == ref.column("id").to_pylist()
    table = out["shop.orders"][1].splitlines()
    assert table[0].split() == ref.column_names and [int(line.split()[0]) for line in table[2:]] == ref.column("id").to_pylist()
    listing = (DATA / "sample" / "mariadb-binlog-vv.txt").read_text()
    positions = [int(p) for p in re.findall(r"^# at (\d+)$", listing, re.M)]
    assert [json.loads(line)["pos"] for line in out["events"][1].splitlines()] == positions


# -- (4) usage and errors ---------------------------------------------------------------
@pytest.mark.parametrize("args", [
    [], ["frobnicate", str(SAMPLE)], ["cat", str(SAMPLE)], ["info"],
    ["info", "--since", "yesterday", str(SAMPLE)], ["info", "--change-types", "upsert", str(SAMPLE)],
    ["cat", str(SAMPLE), "-t", "shop.orders", "--format", "xml"], ["info", "--start", "-4", str(SAMPLE)],
])
def test_bad_usage_exit_2(args):
    """One line, as the other errors, and where --help tells more (not the usage block)."""
    p = run(*args, check=2)
    command = args[0] if args and args[0] in ("cat", "info") else None
    help_ = f"(see 'vecbinlog {command} --help')" if command else "(see 'vecbinlog --help')"
    assert p.stderr.startswith("vecbinlog: error: ") and p.stderr.endswith(help_ + "\n"), p.stderr
    assert p.stderr.count("\n") == 1 and "usage:" not in p.stderr and p.stdout == ""


@pytest.mark.parametrize("command", [["cat", "-t", "shop.nope"], ["snapshot", "OUT", "-t", "shop.nope"]])
def test_unknown_table_one_line_exit_2(tmp_path, command):
    """Not a usage mistake: one line, as the errors of the files, naming the tables there are."""
    args = [str(tmp_path / "o.csv") if a == "OUT" else a for a in command]
    p = run(args[0], str(SAMPLE), *args[1:], check=2)
    assert p.stderr == f"vecbinlog: error: 'shop.nope' has no rows events in {SAMPLE}; tables: shop.customers, shop.orders\n"
    p = run(args[0], str(SAMPLE), *args[1:], "--tables", "shop.c*", "--tables", "x.y,shop.c*", check=2)
    # the API's words (tables=[...]) as the flag that sets them
    assert p.stderr.endswith(f"{SAMPLE} that --tables shop.c*,x.y,shop.c* keeps; tables: shop.customers\n")


@pytest.mark.parametrize("command", [["info"], ["tables"], ["cat", "-t", "x.y"], ["to-parquet"]])
def test_bad_file_exit_1_one_line(tmp_path, command):
    path = corpus_path(NOT_A_BINLOG)
    extra = [str(tmp_path / "out")] if command == ["to-parquet"] else []
    p = run(command[0], str(path), *command[1:], *extra, check=1)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"vecbinlog: error: {path}, offset 4, QUERY_EVENT: ")


def test_missing_file_and_debug(tmp_path):
    p = run("info", str(tmp_path / "nope"), check=1)
    assert p.stderr.splitlines() == [f"vecbinlog: error: {tmp_path / 'nope'}: No such file or directory"]
    path = corpus_path(NOT_A_BINLOG)
    for args in (["--debug", "info", str(path)], ["info", str(path), "--debug"]):
        d = run(*args, check=1)
        assert "Traceback (most recent call last)" in d.stderr and "NotABinlogError" in d.stderr
        assert d.stderr.splitlines()[-1].startswith(f"vecbinlog: error: {path}, offset 4")


def test_help_everywhere():
    top = run("--help").stdout
    for cmd in ("events", "verify"):
        assert cmd in top
        assert "FILE" in run(cmd, "--help").stdout
    for cmd in ("info", "tables", "cat", "to-parquet", "snapshot"):
        assert cmd in top
        h = run(cmd, "--help").stdout
        for opt in ("--tables", "--start", "--stop", "--since", "--until", "--change-types", "--strict",
                    "--no-verify-checksums", "--invalid-dates", "--quiet", "--debug"):
            assert opt in h, (cmd, opt)
    assert "snapshot" in top and "coming" not in top and "not built yet" not in top
    tables = " ".join(run("tables", "--help").stdout.split())
    assert "one schema over every layout" in tables and "first TABLE_MAP" not in tables
    assert run("--version").stdout.strip() == f"vecbinlog {vecbinlog.__version__}"


# -- (5) filters ------------------------------------------------------------------------
def test_filter_tables_glob():
    p = run("tables", str(SAMPLE), "--tables", "shop.c*", "--json")
    assert list(json.loads(p.stdout)) == ["shop.customers"] == tables_of(SAMPLE, tables=["shop.c*"])
    info = json.loads(run("info", "--json", str(SAMPLE), "--tables", "nothing.*,shop.c*").stdout)
    assert list(info["tables"]) == ["shop.customers"]
    both = json.loads(run("tables", "--json", str(SAMPLE), "--tables", "shop.c*", "--tables", "shop.o*").stdout)
    assert list(both) == ["shop.customers", "shop.orders"]


def test_filter_change_types_and_positions():
    full = json_rows(reference(SAMPLE, "shop.orders"))
    p = run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "--change-types", "delete")
    got = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["_change_type"] for r in got] == ["delete"]
    assert got == [r for r in full if r["_change_type"] == "delete"]
    # --start/--stop: rows events in [start, stop)
    start, stop = 2000, 2815
    p = run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "--start", str(start), "--stop", str(stop))
    got = [json.loads(line) for line in p.stdout.splitlines()]
    assert got == [r for r in full if start <= r["_log_pos"] < stop]
    assert got  # the insert at 2159 and the update at 2494
    # --since/--until (naive = UTC): the sample was written at 2026-11-21 20:00:21 UTC
    assert run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "--since", "2026-11-21T20:00:21").stdout.count("\n") == len(full)
    assert run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "--until", "2026-11-21T20:00:21").stdout == ""
    assert run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "--until", "2026-11-21T21:00:21+01:00").stdout == ""
    assert run("cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl", "--until", "2026-11-21T21:00:22+01:00").stdout.count("\n") == len(full)


# -- progress -----------------------------------------------------------------------------
def test_progress_bar_on_a_terminal(tmp_path, monkeypatch, capsys):
    from vecbinlog import cli

    monkeypatch.setattr(cli.progress, "stderr_isatty", lambda: True)
    assert cli.main(["to-parquet", str(SAMPLE), str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "every table" in err and "3.21k" in err  # the library's bar of the bytes (one pass), on stderr
    _assert_same(_read_back(tmp_path / "o", "shop.orders", "parquet"), reference(SAMPLE, "shop.orders"))
    assert cli.main(["to-parquet", str(SAMPLE), str(tmp_path / "q"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_to_parquet_closes_writers_beyond_the_limit(tmp_path, monkeypatch):
    """With one part file open at a time and the two tables' batches interleaved (1-byte
    segments), each table comes back whole and in order from several part files."""
    from vecbinlog import cli

    monkeypatch.setattr(cli.writers.TableWriters, "MAX_OPEN", 1)
    real_open = cli.commands.open_log
    monkeypatch.setattr(cli.commands, "open_log", lambda args, **kw: vecbinlog.open(args.files, segment_bytes=1)
                        if args.command == "to-parquet" else real_open(args, **kw))
    assert cli.main(["to-parquet", str(SAMPLE), str(tmp_path / "o"), "-q"]) == 0
    parts = {t: sorted((tmp_path / "o" / f"table={t}").glob("part-*.parquet")) for t in ("shop.customers", "shop.orders")}
    assert sum(len(p) for p in parts.values()) > 2  # writers were closed and reopened
    for table in parts:
        got = pa.concat_tables([pq.read_table(p) for p in parts[table]])
        ref = reference(SAMPLE, table)
        assert got.schema.equals(ref.schema)
        # each part has its own dictionaries (nested in _absent too): compare the values
        assert got.to_pylist() == ref.to_pylist()


# -- snapshot ---------------------------------------------------------------------------
def test_snapshot_command(tmp_path):
    """The sample's final state is the server's SELECT (expected.json); --until a GTID, a
    FILE:OFFSET or an offset gives the state before the later changes."""
    expected = json.loads((SAMPLE.parent / "expected.json").read_text())["shop.orders"]
    out = tmp_path / "orders.parquet"
    p = run("snapshot", str(SAMPLE), str(out), "--table", "shop.orders")
    assert "shop.orders: 3 rows" in p.stderr
    got = pq.read_table(out)
    assert sorted(map(list, zip(*got.to_pydict().values()))) == sorted(expected)
    with vecbinlog.open(SAMPLE) as log:
        before_update = log.snapshot("shop.orders", until="0-1-6")
    assert sorted(before_update.column("id").to_pylist()) == [1001, 1002, 1003, 1004]
    for until in ("0-1-6", f"{SAMPLE.name}:2494", "2494"):
        run("snapshot", str(SAMPLE), str(out), "--table", "shop.orders", "--until", until, "-q", "--overwrite")
        assert pq.read_table(out).equals(before_update), until
    bad = run("snapshot", str(SAMPLE), str(out), "--table", "shop.orders", "--key", "nope", "--overwrite", check=2)
    assert bad.stderr.splitlines() == [
        "vecbinlog: error: shop.orders: key column(s) ['nope'] are not among its columns "
        "['id', 'customer_id', 'quantity', 'price', 'note']"]


def test_gtids_filter_command():
    """--gtids keeps the sample's update transaction only, as the API's gtids= does; the GTID
    is the one mariadb-binlog prints before that UPDATE's rows event."""
    listing = (SAMPLE.parent / "mariadb-binlog-vv.txt").read_text()
    gtid = re.findall(r"\tGTID (\d+-\d+-\d+)", listing.split("Update_rows")[0])[-1]
    rows = [json.loads(line) for line in run("cat", str(SAMPLE), "-t", "shop.orders", "--gtids", gtid, "-f", "jsonl").stdout.splitlines()]
    assert [r["_change_type"] for r in rows] == ["update_preimage", "update_postimage"]
    assert {r["_gtid"] for r in rows} == {gtid}
    bad = run("cat", str(SAMPLE), "-t", "shop.orders", "--gtids", "nonsense", check=2)
    assert "neither uuid:intervals nor domain-server-seq" in bad.stderr


# -- events and verify ------------------------------------------------------------------------
@pytest.mark.mariadb
def test_events_command_equals_show_binlog_events(mariadb_server):
    """`vecbinlog events --json` over two files == the server's SHOW BINLOG EVENTS of each,
    event by event; --start/--stop/--limit == SHOW BINLOG EVENTS ... FROM / LIMIT."""
    s = mariadb_server
    first = s.capture_binlog(
        "DROP DATABASE IF EXISTS evc", "CREATE DATABASE evc", "USE evc", "CREATE TABLE t (id INT PRIMARY KEY, v TEXT)",
        "INSERT INTO t VALUES (1, 'a'), (2, 'b')", "SET @x = 'héllo'", "UPDATE t SET v = @x WHERE id = 1")
    second = s.capture_binlog("USE evc", "DELETE FROM t WHERE id = 2", "INSERT INTO t VALUES (3, 'c')")
    listing = {f.name: s.query(f"SHOW BINLOG EVENTS IN '{f.name}'") for f in (first, second)}
    keys = ["file", "pos", "server_id", "end_log_pos", "info"]

    def ours(*extra):
        p = run("events", str(first), str(second), "--json", *extra)
        return [[e[k] for k in keys] for e in map(json.loads, p.stdout.splitlines())]

    server = [list(r[:2]) + list(r[3:]) for f in (first, second) for r in listing[f.name]]
    assert ours() == server
    start, stop = listing[first.name][5][1], listing[second.name][4][1]
    from_start = s.query(f"SHOW BINLOG EVENTS IN '{first.name}' FROM {start}")
    before_stop = [r for r in listing[second.name] if r[1] < stop]
    assert ours("--start", str(start), "--stop", str(stop)) == [list(r[:2]) + list(r[3:]) for r in from_start + before_stop]
    limited = s.query(f"SHOW BINLOG EVENTS IN '{first.name}' FROM {start} LIMIT 3")
    assert ours("--start", str(start), "-n", "3") == [list(r[:2]) + list(r[3:]) for r in limited]
    text = run("events", str(first)).stdout.splitlines()
    assert text[0].split() == ["file", "pos", "type", "server_id", "end_log_pos", "info"]
    assert len(text) == 2 + len(listing[first.name])
    for line, r in zip(text[2:], listing[first.name]):  # info as the server gives it, newlines escaped
        assert line.split(None, 5)[:2] == [first.name, str(r[1])] and line.endswith(r[5].replace("\n", "\\n").rstrip())


def test_verify_command(tmp_path):
    """Every CRC32 of the sample checks (as many as the header walk counts events); a flipped
    byte is exit 1 naming the event the header walk finds at that place; a file without
    checksums says so."""
    p = run("verify", str(SAMPLE))
    assert p.stdout == f"{SAMPLE}: {sum(header_walk(SAMPLE).values())} events, every CRC32 matches\n"
    data = bytearray(SAMPLE.read_bytes())
    pos, target = 4, 2159  # the second WRITE_ROWS event of the sample (see the listings of docs/cli.md)
    while pos < target:
        pos += struct.unpack_from("<I", data, pos + 9)[0]
    assert pos == target and data[pos + 4] == 23
    data[pos + 30] ^= 0x01
    bad = tmp_path / "mariadb-bin.000001"
    bad.write_bytes(bytes(data))
    p = run("verify", str(SAMPLE), str(bad), check=1)
    assert p.stdout.splitlines() == [f"{SAMPLE}: 41 events, every CRC32 matches"]
    assert p.stderr.splitlines() == [p.stderr.strip()]
    assert p.stderr.startswith(f"vecbinlog: error: {bad}, offset {target}, WRITE_ROWS_EVENT_V1: CRC32 mismatch")
    none = corpus_path("osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none")
    assert run("verify", str(none)).stdout == f"{none}: no checksums to verify (binlog_checksum NONE)\n"
