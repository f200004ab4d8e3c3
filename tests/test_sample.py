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


def test_logs_opened_in_turn_share_layouts_and_keep_their_options():
    """A process parses a layout and makes its schema once (TABLE_MAPs and schemas are kept
    for the process): logs opened one after another get the same TableMap object, and
    each read still gets the types and names of its own options (the server says quantity is
    SMALLINT UNSIGNED, 65535 in row 4; note is VARCHAR in utf8mb4)."""
    plain = vecbinlog.read_table(SAMPLE, "shop.orders")
    signed = vecbinlog.read_table(SAMPLE, "shop.orders", signedness={"shop.orders": {"quantity": "signed"}})
    binary = vecbinlog.read_table(SAMPLE, "shop.orders", charsets={"shop.orders": {"note": "binary"}})
    named = vecbinlog.read_table(SAMPLE, "shop.orders", names={"shop.orders": ["a", "b", "c", "d", "e"]})
    again = vecbinlog.read_table(SAMPLE, "shop.orders")
    assert (plain.schema.field("quantity").type, plain.column("quantity")[3].as_py()) == (pa.uint16(), 65535)
    assert (signed.schema.field("quantity").type, signed.column("quantity")[3].as_py()) == (pa.int16(), -1)
    assert plain.schema.field("note").type == pa.string() and binary.schema.field("note").type == pa.binary()
    assert binary.column("note").to_pylist()[1] == plain.column("note").to_pylist()[1].encode()
    assert named.schema.names[:5] == ["a", "b", "c", "d", "e"] and named.column("c")[3].as_py() == 65535
    assert again.schema == plain.schema and again.equals(plain)
    with vecbinlog.open(SAMPLE) as one, vecbinlog.open(SAMPLE) as two:
        assert one.table_maps("shop.orders")[0] is two.table_maps("shop.orders")[0]
