"""A growing archive read as a stream (vecbinlog.streaming), without Spark, against a real
MariaDB server.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.splits import read_split

from .test_table_changes import run_workload

pytestmark = pytest.mark.mariadb


def test_a_split_after_create_database_knows_its_charset(mariadb_server):
    """A range that starts between CREATE DATABASE ... CHARACTER SET and the CREATE TABLE in it,
    and holds the table's rows (NO_LOG: the charset of its text comes from the database), is
    told the database's charset: the DDL states the driver gives ranges (``Binlog.layouts``)
    kept only the statements that changed a table. The batch source's splits and the stream's
    stretches both start so."""
    from vecbinlog.splits import Split, with_layouts

    run = run_workload(mariadb_server, "NO_LOG")
    first = run["files"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        with vecbinlog.open(first) as log:
            expected = log.read_table(run["table"])
            layouts = log.layouts()
            events = log.events().to_pylist()
        create = next(i for i, e in enumerate(events) if (e["info"] or "").startswith("use `chg_nolog`; CREATE TABLE"))
        gtid = max(e["pos"] for e in events[:create] if e["type"] == "GTID_EVENT")
        assert any("CREATE DATABASE" in (e["info"] or "") for e in events[:create])
        split = with_layouts([Split(str(first), gtid, None)], layouts)[0]
        batches = [b for _, b in read_split(split, [run["table"]])]
    assert expected.schema.field("note").type == pa.string()
    assert batches and all(b.schema.field("note").type == pa.string() for b in batches)  # not binary: a charset
    got = pa.Table.from_batches([layouts.plans[run["table"]].conform(b) for b in batches])
    assert got.to_pylist() == expected.to_pylist()
