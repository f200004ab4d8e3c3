"""The API as pandas and pyarrow users call it: what ``import vecbinlog`` loads, the inputs
``open()`` accepts (and the errors for the rest), progress bars."""

from __future__ import annotations

import datetime as dt
import io
import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import vecbinlog

from .conftest import DATA

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


def test_import_does_not_load_pandas_or_sqlglot():
    """pandas is imported by read_pandas, sqlglot by the first DDL statement parsed."""
    code = ("import sys, vecbinlog; loaded = [m for m in ('pandas', 'sqlglot') if m in sys.modules]; "
            "print(loaded); vecbinlog.read_pandas(sys.argv[1], 'shop.orders'); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(SAMPLE)], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "True"]
    assert vecbinlog.read_pandas(SAMPLE, "shop.orders")["id"].tolist() == [1001, 1002, 1003, 1004, 1001, 1001, 1003]


#: files with GTIDs: MariaDB GTID_EVENT (the sample), MySQL GTID_LOG_EVENT (inside
#: TRANSACTION_PAYLOAD events) and GTID_TAGGED_LOG_EVENT
GTID_FILES = {"payload": "apecloud__mysql-binlog-connector-rust/mysql-bin.000057",
              "tagged": "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001"}

_READ_EVERYTHING = """
import json, sys, vecbinlog
out = {}
for path in sys.argv[1:]:
    with vecbinlog.open(path) as log:
        tables = log.read_all()
        events = log.events()
        log.history()
        out[path] = {
            "tables": {name: [log.schema(name).names == t.schema.names, t.column("_log_pos").to_pylist(),
                              t.column("_gtid").to_pylist(), t.column(0).to_pylist()]
                       for name, t in tables.items() if name in log.tables},
            "events": events.column("pos").to_pylist(),
            "gtids": log.info()["files"][0]["gtids"],
        }
print(json.dumps({"pandas": "pandas" in sys.modules, "out": out}))
"""


def test_reading_does_not_load_pandas(corpus):
    """read_all, events, tables and layouts (and info) never call what makes pyarrow import
    pandas (0.3 s: pa.array, pa.scalar, to_numpy, compute functions given Python values), and
    give what the servers wrote: the sample's events, rows and GTIDs as mariadb-binlog lists
    them, the MySQL files' GTIDs as tests/binlog/test_transactions.py knows them."""
    paths = [SAMPLE, corpus(GTID_FILES["payload"]), corpus(GTID_FILES["tagged"])]
    done = subprocess.run([sys.executable, "-c", _READ_EVERYTHING, *map(str, paths)], capture_output=True,
                          text=True, check=True)
    got = json.loads(done.stdout)
    assert got["pandas"] is False
    sample, payload, tagged = (got["out"][str(p)] for p in paths)

    # the sample: every event at the position mariadb-binlog gives, each row in its group's GTID
    listing = (DATA / "sample" / "mariadb-binlog-vv.txt").read_text()
    gtid_of, gtid = {}, None
    for line in listing.splitlines():
        if m := re.match(r"# at (\d+)$", line):
            pos = int(m.group(1))
        elif m := re.search(r"\tGTID (\d+-\d+-\d+)", line):
            gtid = m.group(1)
        elif re.search(r"\t(Write|Update|Delete)_rows", line):
            gtid_of[pos] = gtid
    assert sample["events"] == [int(p) for p in re.findall(r"^# at (\d+)$", listing, re.M)]
    assert sorted(sample["tables"]) == ["shop.customers", "shop.orders"]
    for name, (same_schema, log_pos, gtids, _) in sample["tables"].items():
        assert same_schema
        assert gtids == [gtid_of[p] for p in log_pos], name
    assert sample["tables"]["shop.orders"][3] == [1001, 1002, 1003, 1004, 1001, 1001, 1003]
    assert sample["gtids"]["set"] == "0-1-9"

    uuid = "76f3e7be-6720-11ed-9cad-0242ac110002"
    assert payload["tables"]["a.b"][2] == [f"{uuid}:12"]
    assert payload["tables"]["a.test_table_3"][2] == [f"{uuid}:13"] * 3
    assert (payload["gtids"]["previous"], payload["gtids"]["set"]) == (f"{uuid}:1-10", f"{uuid}:11-13")
    uuid = "55778904-0299-11f1-b1b8-4ef0c4956feb"
    ((_, _, gtids, _),) = tagged["tables"].values()
    assert gtids == [f"{uuid}:mytag:3"] * len(gtids) and gtids
    assert tagged["gtids"]["previous"] == f"{uuid}:1-13:mytag:1-2"


# -- inputs -----------------------------------------------------------------------------------
def _same(a, b) -> None:
    assert a.drop_columns(["_log_file"]).equals(b.drop_columns(["_log_file"]))


def test_bytes_and_file_objects_read_as_the_path():
    """The binlog's bytes, a bytearray, a memoryview, io.BytesIO and a file opened "rb" give
    the rows the path gives; _log_file is the file object's name, else <memory N>."""
    path_read = vecbinlog.read_table(SAMPLE, "shop.orders")
    data = SAMPLE.read_bytes()
    for source in (data, bytearray(data), memoryview(data), io.BytesIO(data)):
        t = vecbinlog.read_table(source, "shop.orders")
        _same(t, path_read)
        assert set(t.column("_log_file").to_pylist()) == {"<memory 1>"}
    with open(SAMPLE, "rb") as fh:
        t = vecbinlog.read_table(fh, "shop.orders")
    _same(t, path_read)
    assert set(t.column("_log_file").to_pylist()) == {SAMPLE.name}
    assert vecbinlog.read_table(pathlib.PurePosixPath(SAMPLE), "shop.orders").equals(path_read)
    with vecbinlog.open([data, io.BytesIO(data)]) as log:  # two in-memory files: two names
        assert log.paths == ["<memory 1>", "<memory 2>"]
        assert log.read_table("shop.orders").num_rows == 2 * path_read.num_rows
    with pytest.raises(vecbinlog.NotABinlogError, match=r"^<memory 1>, offset 0: magic bytes"):
        vecbinlog.open(b"not a binlog at all")


@pytest.mark.parametrize("bad,error,text", [
    (5, TypeError, "a path (str or os.PathLike) or URI, a glob, a mysql-bin.index, a folder, the binlog's bytes"),
    (None, TypeError, "not NoneType"),
    ([str(SAMPLE), 3.5], TypeError, "not float"),
    (io.StringIO("text"), TypeError, "open the file with mode 'rb'"),
])
def test_other_inputs_say_what_is_accepted(bad, error, text):
    with pytest.raises(error) as err:
        vecbinlog.open(bad)
    assert text in str(err.value)


def test_since_until_as_pandas_and_pyarrow_users_pass_them():
    """ISO strings (a date, a 'Z', an offset), dates, numpy datetime64 and pandas Timestamps
    select what the equal datetime selects (the sample was written at 2026-11-21 20:00:21 UTC)."""
    import pandas as pd

    at = dt.datetime(2026, 11, 21, 20, 0, 21)
    equal_to_at = ["2026-11-21T20:00:21", "2026-11-21 20:00:21Z", "2026-11-21T21:00:21+01:00", np.datetime64("2026-11-21T20:00:21"),
                   pd.Timestamp("2026-11-21 20:00:21", tz="UTC"), at.replace(tzinfo=dt.timezone.utc)]
    for when in equal_to_at:
        assert vecbinlog.read_table(SAMPLE, "shop.orders", since=when).num_rows == 7, when
        assert vecbinlog.read_table(SAMPLE, "shop.orders", until=when).num_rows == 0, when
    assert vecbinlog.read_table(SAMPLE, "shop.orders", until="2026-11-21T20:00:22").num_rows == 7
    assert vecbinlog.read_table(SAMPLE, "shop.orders", since=dt.date(2026, 11, 22)).num_rows == 0
    assert vecbinlog.read_table(SAMPLE, "shop.orders", since="2026-11-21", until=dt.date(2026, 11, 22)).num_rows == 7
    with pytest.raises(ValueError, match=r"since: not an ISO 8601 date or date-time: 'yesterday'"):
        vecbinlog.open(SAMPLE, since="yesterday")
    with pytest.raises(TypeError, match=r"until: a datetime, a date, a numpy datetime64 or an ISO 8601 string, not int"):
        vecbinlog.open(SAMPLE, until=1700000000)
    with pytest.raises(ValueError, match=r"since: .*NaT"):
        vecbinlog.open(SAMPLE, since=np.datetime64("NaT"))


def test_change_types_one_or_several():
    counts = {"insert": 4, "update": 2, "delete": 1}
    for given, kinds in [("delete", ["delete"]), ("Update", ["update"]), ("update,delete", ["update", "delete"]),
                         (["insert"], ["insert"]), ({"insert", "delete"}, ["insert", "delete"]), (("update",), ["update"])]:
        assert vecbinlog.read_table(SAMPLE, "shop.orders", change_types=given).num_rows == sum(counts[k] for k in kinds), given
    with pytest.raises(ValueError, match=r"change_types: 'upsert'; each is one of 'insert', 'update', 'delete'"):
        vecbinlog.open(SAMPLE, change_types="upsert")
    with pytest.raises(TypeError, match="change_types"):
        vecbinlog.open(SAMPLE, change_types=[1, 2])


def test_unknown_table_is_a_documented_key_error():
    with vecbinlog.open(SAMPLE) as log:
        for read in (log.read_table, lambda t: list(log.iter_batches(t)), log.schema, log.snapshot):
            with pytest.raises(vecbinlog.TableNotFoundError) as err:
                read("shop.nope")
            assert isinstance(err.value, KeyError) and err.value.table == "shop.nope"
            assert str(err.value) == f"'shop.nope' has no rows events in {SAMPLE}; tables: shop.customers, shop.orders"
    with pytest.raises(vecbinlog.TableNotFoundError, match=r"that tables=\['shop.c\*'\] keeps; tables: shop.customers$"):
        vecbinlog.read_table(SAMPLE, "shop.orders", tables="shop.c*")


# -- threads -----------------------------------------------------------------------------------
def test_a_small_read_decodes_in_its_own_thread_unless_threads_is_given(monkeypatch):
    """``threads`` not given: a read of under THREADED_READ_BYTES of binlog decodes every run on
    the reading thread (a second thread does not pay there: docs/speed.md, "Threads"), even with
    the thresholds that send runs to the batch threads set to nothing; ``threads=2`` given, they
    go there. A larger read keeps the default (the CPUs, at most 4)."""
    import threading

    from vecbinlog.log import batches, rundecode
    from vecbinlog.log.config import THREADED_READ_BYTES, ReadConfig, default_threads

    monkeypatch.setattr(batches, "BACKGROUND_BYTES", 1)
    monkeypatch.setattr(batches, "BACKGROUND_EVENT_BYTES", 0)
    monkeypatch.setattr(batches, "BACKGROUND_COLUMN_BYTES", 0)
    decoded_on: list[str] = []
    real_build_batch = rundecode.build_batch

    def build_batch(*args, **kwargs):
        decoded_on.append(threading.current_thread().name)
        return real_build_batch(*args, **kwargs)

    monkeypatch.setattr(rundecode, "build_batch", build_batch)
    with vecbinlog.open(SAMPLE, threads=1) as log:
        expected = log.read_all()
    for threads, on in ((None, {"MainThread"}), (2, {"vecbinlog-batch"})):
        decoded_on.clear()
        with vecbinlog.open(SAMPLE, **({} if threads is None else {"threads": threads})) as log:
            got = log.read_all()
        assert {n.rsplit("_", 1)[0] for n in decoded_on} == on, threads
        assert {k: v.to_pylist() for k, v in got.items()} == {k: v.to_pylist() for k, v in expected.items()}
    config = ReadConfig.build()
    assert config.for_sizes([SAMPLE.stat().st_size] * 3).threads == 1
    assert config.for_sizes([THREADED_READ_BYTES // 2] * 2).threads == default_threads()
    assert config.for_sizes([100, None]).threads == default_threads()  # (a compressed file: its size not known)
    assert ReadConfig.build(threads=2).for_sizes([100]).threads == 2


# -- progress ----------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::vecbinlog.BinlogSetWarning")  # the sample twice does not chain
def test_progress_bar_of_binlog_bytes(capsys):
    """progress=True draws on stderr (tqdm.auto outside notebooks) up to the files' size;
    tqdm options go to tqdm; the default prints nothing."""
    size = SAMPLE.stat().st_size
    vecbinlog.read_table(SAMPLE, "shop.orders")
    list(vecbinlog.open(SAMPLE).iter_tables())
    assert capsys.readouterr() == ("", "")
    vecbinlog.read_table(SAMPLE, "shop.orders", progress=True)
    err = capsys.readouterr().err
    assert "shop.orders" in err and "/3.21k" in err  # the bar of the file's bytes (drawn, then cleared)
    buf = io.StringIO()
    with vecbinlog.open([SAMPLE, SAMPLE], progress={"file": buf, "mininterval": 0, "unit_scale": False}) as log:
        tables = log.read_all()
    assert set(tables) == {"shop.customers", "shop.orders"}
    assert f"| {2 * size}/{2 * size} " in buf.getvalue() and "every table" in buf.getvalue()
    # the rows of the batches handed out, counted (read_table's expected: 7 of orders, both files)
    rows = sum(t.num_rows for t in tables.values())
    assert f"{rows} rows, " in buf.getvalue() and " rows/s" in buf.getvalue()
    assert capsys.readouterr() == ("", "")
