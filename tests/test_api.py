"""The API as pandas and pyarrow users call it: what ``import vecbinlog`` loads, the inputs
``open()`` accepts (and the errors for the rest), progress bars."""

from __future__ import annotations

import datetime as dt
import io
import pathlib
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
    (5, TypeError, "a path (str or os.PathLike) or URI, a glob, a mysql-bin.index, the binlog's bytes"),
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
    assert capsys.readouterr() == ("", "")
