"""A bad option of the Spark source, through a real local SparkSession: the message names the
option and the value given (issue 37, item 8), on the error's first line once Spark is told to
leave the Python traceback out."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from ..conftest import DATA
from ..support.fixtures import require_pyspark

require_pyspark()

pytestmark = pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning")

SAMPLE = str(DATA / "sample" / "mariadb-bin.000001")
HIDE = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"


def _python_refuses(text: str, parse) -> bool:
    """Whether Python's own parser refuses ``text`` (the independent check that it is bad)."""
    try:
        parse(text)
    except ValueError:
        return True
    return False


#: (option, bad value, what the message says is wrong, Python's own parser that refuses it or None)
CASES = [
    ("since", "yesterday", "not an ISO 8601 date or date-time", datetime.fromisoformat),
    ("until", "2026-13-45", "not an ISO 8601 date or date-time", datetime.fromisoformat),
    ("change_types", "upsert", "each is one of 'insert', 'update', 'delete'", None),
    ("threads", "two", "not an integer", int),
    ("threads", "0", "must be a positive integer", None),
    ("split_bytes", "lots", "a byte count", int),
    ("signedness", '{"shop.orders": {"id": "maybe"}}', "must be 'unsigned', 'signed', True or False", None),
    ("signedness", "{not json", "not JSON", json.loads),
    ("columns", "id,nope", "shop.orders has no column 'nope'", None),
]


def _error(spark, name: str, value: str) -> str:
    with pytest.raises(Exception) as info:
        spark.read.format("binlog").option("table", "shop.orders").option(name, value).load(SAMPLE).collect()
    return str(info.value)


@pytest.mark.parametrize("name,value,why,parse", CASES, ids=[f"{c[0]}={c[1]}" for c in CASES])
def test_the_message_names_the_option_and_the_value(spark, name, value, why, parse):
    if parse is not None:
        assert _python_refuses(value, parse)
    said = f"ValueError: option {name}={value!r}: "
    text = _error(spark, name, value)
    line = next((x for x in text.splitlines() if said in x), None)
    assert line is not None and why in line, text
    spark.conf.set(HIDE, "true")
    try:
        first = _error(spark, name, value).splitlines()[0]
    finally:
        spark.conf.unset(HIDE)
    assert said in first and why in first, first
