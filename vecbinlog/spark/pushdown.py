"""Spark's filters on the metadata columns, pushed into a batch read of the ``binlog`` source
(pyspark 4.1+: ``DataSourceReader.pushFilters``).

Spark hands ``pushFilters`` the conjuncts of a query's filters (``EqualTo``, ``GreaterThan``...,
``In``, ``IsNull``, ``StringStartsWith``...). The reader keeps those it answers exactly, as
:class:`vecbinlog.scans.Bound` s (:func:`split_filters`): comparisons, ``In``, ``IsNull`` and
``IsNotNull`` on ``_commit_timestamp`` (a time with a zone, as Spark gives a ``timestamp``), ``_log_pos``
(an integer), ``_log_file``, ``_change_type``, ``_outcome`` and ``_gtid`` (strings; ``StringStartsWith``
too). They become the read's filters (:class:`vecbinlog.scans.Pushdown`: files left out by their
names, and with an archive index by their times and GTIDs; splits by their offsets; rows events
outside the times, change types and GTIDs never decoded) and every batch is filtered by them
exactly, as Spark would: Spark does not check them again. The others (``Not``, ``StringEndsWith``,
``StringContains``, other columns, values of another type) go back to Spark.

Spark calls ``pushFilters`` only when ``spark.sql.python.filterPushdown.enabled`` is true (false by
default in Spark 4.1-4.3), and refuses to read through a reader that has it when it is false:
:func:`vecbinlog.spark.register` turns it on and registers the source whose reader has it
(:data:`SUPPORTED`: the pyspark installed has ``pushFilters``); ``register(spark, pushdown=False)``,
pyspark 4.0, or the source registered by hand (``spark.dataSource.register(BinlogDataSource)``)
read as before, every filter Spark's.
"""

from __future__ import annotations

from typing import Any, Iterable

from pyspark.sql.datasource import DataSourceReader
from pyspark.sql.types import StructType

from ..scans import Bound, Pushdown

__all__ = ["SUPPORTED", "CONF", "split_filters"]

#: the pyspark installed hands a batch reader the query's filters (4.1+)
SUPPORTED = hasattr(DataSourceReader, "pushFilters")
#: Spark's switch of pushFilters for Python data sources
CONF = "spark.sql.python.filterPushdown.enabled"

#: Spark's filter class -> a Bound's operator (``EqualNullSafe`` of a value: as ``EqualTo``, a null
#: never matching either way)
_OPS = {"EqualTo": "==", "EqualNullSafe": "==", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<",
        "LessThanOrEqual": "<=", "In": "in", "IsNull": "is_null", "IsNotNull": "not_null",
        "StringStartsWith": "starts_with"}


def _bound(f: Any, columns: set[str]) -> Bound | None:
    op = _OPS.get(type(f).__name__)
    path: tuple[str, ...] = getattr(f, "attribute", ())
    if op is None or len(path) != 1 or path[0] not in columns:
        return None
    value = getattr(f, "value", None)
    if op not in ("is_null", "not_null") and value is None:  # (EqualNullSafe(col, null): IS NULL, Spark's)
        return None
    return Bound.make(path[0], op, value)


def split_filters(filters: Iterable[Any], schema: StructType) -> tuple[Pushdown, list[Any]]:
    """(the filters a read answers, as a Pushdown; the others, Spark's, the same objects)."""
    columns = set(schema.fieldNames())
    kept, back = [], []
    for f in filters:
        b = _bound(f, columns)
        if b is None:
            back.append(f)
        else:
            kept.append(b)
    return Pushdown(tuple(kept)), back
