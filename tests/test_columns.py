"""``columns=`` and ``metadata=``: a read returns the columns asked for, in that order, and
decodes only those (others are never decoded); ``cat --columns`` and ``--no-metadata``.

Expected values are the sample's: the server's final rows (``data/sample/expected.json``,
what ``SELECT`` returned when the sample was made) and ``mariadb-binlog -vv``'s listing of it
(``data/sample/mariadb-binlog-vv.txt``, parsed by tests/support/mariadb.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import vecbinlog
from vecbinlog.decode import decoders

from .conftest import DATA
from .support.mariadb import parse_vv

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
EXPECTED = json.loads((DATA / "sample" / "expected.json").read_text())


def _vv_orders() -> list[tuple]:
    """(id, note as text or None, change) of every shop.orders image mariadb-binlog printed."""
    kinds = {"insert": "insert", "update_before": "update_preimage", "update_after": "update_postimage",
             "delete": "delete"}
    out = []
    for im in parse_vv((DATA / "sample" / "mariadb-binlog-vv.txt").read_text()):
        if im.table == "shop.orders":
            v = im.as_dict()
            note = v.get(5)
            out.append((v[1].unsigned, None if note is None else note.decode(), kinds[im.kind]))
    return out


def test_columns_in_the_order_asked(monkeypatch):
    decoded = []
    real = decoders.decode_column

    def counted(col):
        decoded.append(col.name)
        return real(col)

    monkeypatch.setattr(decoders, "decode_column", counted)
    monkeypatch.setattr(vecbinlog.decode.batch, "decode_column", counted)
    t = vecbinlog.read_table(SAMPLE, "shop.orders", columns=["note", "id", "_change_type"])
    assert t.column_names == ["note", "id", "_change_type"]
    assert list(zip(t.column("id").to_pylist(), t.column("note").to_pylist(), t.column("_change_type").to_pylist())) \
        == _vv_orders()
    assert set(decoded) == {"id", "note"}  # customer_id, quantity, price: never decoded


def test_no_metadata_and_the_schema_that_says_so():
    with vecbinlog.open(SAMPLE, metadata=False) as log:
        t = log.read_table("shop.orders")
        assert log.schema("shop.orders").names == t.column_names == ["id", "customer_id", "quantity", "price", "note"]
        every = {name: table.column_names for name, table in log.read_all().items()}
        snap = log.snapshot("shop.orders")  # a snapshot replays every column, whatever columns= says
    assert every == {"shop.customers": ["id", "name", "country"], "shop.orders": t.column_names}
    rows = sorted(tuple(r.values()) for r in snap.to_pylist())
    assert rows == [tuple(r) for r in EXPECTED["shop.orders"]]


def test_batches_carry_the_columns_asked():
    with vecbinlog.open(SAMPLE, columns=["id", "_log_pos"]) as log:
        names = {tuple(b.schema.names) for _, b in log.iter_tables()}
        assert names == {("id", "_log_pos")}
        assert [b.schema.names for b in log.iter_batches("shop.customers")] == [["id", "_log_pos"]]


def test_a_column_no_table_has_is_an_error():
    with pytest.raises(ValueError, match="shop.orders has no column 'nope'"):
        vecbinlog.read_table(SAMPLE, "shop.orders", columns=["id", "nope"])
    with pytest.raises(ValueError, match="no table has a column 'nope'"):
        vecbinlog.open(SAMPLE, columns=["nope"]).read_all()
    with pytest.raises(TypeError, match="columns"):
        vecbinlog.open(SAMPLE, columns=[1])


def test_cat_columns_and_no_metadata():
    run = [sys.executable, "-m", "vecbinlog", "cat", str(SAMPLE), "-t", "shop.orders", "-f", "jsonl"]
    out = subprocess.run([*run, "--columns", "id,note,_change_type"], capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["id"], r["note"], r["_change_type"]) for r in rows] == _vv_orders()
    assert all(list(r) == ["id", "note", "_change_type"] for r in rows)
    out = subprocess.run([*run, "--no-metadata"], capture_output=True, text=True, check=True)
    assert {tuple(json.loads(line)) for line in out.stdout.splitlines()} == {
        ("id", "customer_id", "quantity", "price", "note")}
    bad = subprocess.run([*run, "--columns", "id,nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--columns: shop.orders has no column 'nope'" in bad.stderr
