"""The sample binlog in data/sample: its change log, replayed, is what the server SELECTed."""

from __future__ import annotations

import json

import pyarrow as pa

import vecbinlog

from .conftest import DATA

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


def _one_pass(log: vecbinlog.Binlog) -> dict[str, pa.Table]:
    """Every table through iter_tables (one pass), batches gathered per table."""
    out: dict[str, list[pa.RecordBatch]] = {}
    for name, batch in log.iter_tables():
        out.setdefault(name, []).append(batch)
    return {name: pa.Table.from_batches(b) for name, b in out.items()}


def _replay(t: pa.Table, ncols: int) -> list[list]:
    state: dict = {}
    for r in t.to_pylist():
        vals = [r[c] for c in t.schema.names[:ncols]]
        if r["_change_type"] == "insert":
            state[vals[0]] = vals
        elif r["_change_type"] == "delete":
            del state[vals[0]]
        elif r["_change_type"] == "update_preimage":
            assert state.pop(vals[0]) == vals
        else:
            state[vals[0]] = vals
    return [state[k] for k in sorted(state)]


def test_sample_replays_to_the_servers_select():
    """read_table, and iter_tables (one pass for every table, in 1-byte segments so that the
    two tables' batches interleave), both replay to the server's SELECT."""
    expected = json.loads((DATA / "sample" / "expected.json").read_text())
    with vecbinlog.open(SAMPLE) as log, vecbinlog.open(SAMPLE, segment_bytes=1) as small:
        assert log.tables == ["shop.customers", "shop.orders"]
        one_pass = _one_pass(small)
        assert sorted(one_pass) == ["shop.customers", "shop.orders"]
        for name, rows in expected.items():
            assert _replay(log.read_table(name), len(rows[0])) == rows
            assert _replay(one_pass[name], len(rows[0])) == rows


def test_sample_schema():
    t = vecbinlog.read_table(SAMPLE, "shop.orders")
    assert t.schema.names == [
        "id", "customer_id", "quantity", "price", "note",
        "_change_type", "_commit_timestamp", "_log_file", "_log_pos", "_event_row", "_absent",
        "_payload_offset", "_gtid", "_transaction_pos", "_xid", "_outcome", "_schema_version", "_incarnation",
    ]
    assert [t.schema.field(n).type for n in ("id", "customer_id", "quantity", "price", "note")] == [
        pa.uint64(), pa.uint32(), pa.uint16(), pa.float64(), pa.string()]
    assert t.column("_change_type").to_pylist() == [
        "insert", "insert", "insert", "insert", "update_preimage", "update_postimage", "delete"]
    assert set(t.column("_log_file").to_pylist()) == {"mariadb-bin.000001"}


def test_read_pandas_keeps_types():
    df = vecbinlog.read_pandas(SAMPLE, "shop.orders")
    assert str(df["id"].dtype) == "uint64[pyarrow]"
    assert df["note"].isna().tolist() == [True, False, False, False, True, False, False]  # 1001 before its update
    assert df.loc[3, "quantity"] == 65535


def test_signedness_option_is_checked():
    import pytest

    with pytest.raises(ValueError, match="must be 'unsigned', 'signed'"):
        vecbinlog.read_table(SAMPLE, "shop.orders", signedness={"*": {"id": "uint32"}})
    t = vecbinlog.read_table(SAMPLE, "shop.orders", signedness={"shop.orders": {"quantity": "signed"}})
    # 65535 in a SMALLINT UNSIGNED read as signed, as the user asked: -1
    assert t.column("quantity").to_pylist()[3] == -1
