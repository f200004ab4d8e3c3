"""``spark.readStream.format("binlog")`` on a real local SparkSession, against a real MariaDB
server.

Without pyspark these tests are skipped (in CI a missing pyspark is a failure: test_spark.py).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import vecbinlog

from .test_archives import s3  # noqa: F401  (moto's S3 server on 127.0.0.1)

pytestmark = [pytest.mark.mariadb, pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning")]

TABLE_DDL = "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30) CHARACTER SET utf8mb4, n INT)"


def test_splits_of_uris_with_credentials_are_told_their_states(mariadb_server, s3, tmp_path):  # noqa: F811
    """A URI with credentials in it (``s3://KEY:SECRET@bucket/...``) names the same file as the
    URI without them that a file's path is: each split of the batch source gets the layout and
    DDL states where it starts (it was 'not one of the files')."""
    from vecbinlog.splits import plan_splits, read_split, with_layouts

    client, query, _ = s3
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS creds", "CREATE DATABASE creds")
    path = s.capture_binlog(TABLE_DDL, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)", "ALTER TABLE t ADD COLUMN c INT",
                            "INSERT INTO t VALUES (3, 'c', 3, 30)", database="creds")
    client.put_object(Bucket="binlogs", Key=f"creds/{path.name}", Body=path.read_bytes())
    uri = f"s3://testing:testing@binlogs/creds/{path.name}{query}"
    with vecbinlog.open(uri) as log:
        expected = log.read_table("creds.t")
        layouts = log.layouts()
    splits = with_layouts(plan_splits(uri, 1), layouts)
    plan = layouts.plans["creds.t"]
    got = pa.Table.from_batches([plan.conform(b) for s_ in splits for _, b in read_split(s_, "creds.t")])
    assert got.to_pylist() == expected.to_pylist()
    assert sorted(set(got.column("_schema_version").to_pylist())) == [0, 1]
