"""Arrow types to Spark types that hold every value, and batches cast to them.

Spark has no unsigned integers, no decimals above 38 digits and no dictionary arrays, so the
Arrow schema of :meth:`vecbinlog.Binlog.schema` is mapped, type by type, as :func:`spark_type`
says; :func:`conform` casts every batch to exactly the Arrow form of that Spark schema before
Spark sees it. Nothing is lost: unsigned integers get the next wider signed type (``uint64``
becomes ``decimal(20,0)``), ``decimal256`` becomes its exact decimal text.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from ..arrowbuild import decimal_text, scalar

__all__ = ["TABLE_COLUMN", "spark_type", "spark_schema", "arrow_schema", "decimal_text", "conform"]

#: Added (string) when the ``table`` option matches more than one table.
TABLE_COLUMN = "_table"
#: Spark's largest decimal precision (DecimalType.MAX_PRECISION).
_SPARK_MAX_PRECISION = 38


# -- types ---------------------------------------------------------------------------------
_PLAIN = {
    pa.bool_(): BooleanType(),
    pa.int8(): ByteType(),
    pa.int16(): ShortType(),
    pa.int32(): IntegerType(),
    pa.int64(): LongType(),
    pa.uint8(): ShortType(),  # unsigned: the next signed type holds every value
    pa.uint16(): IntegerType(),
    pa.uint32(): LongType(),
    pa.uint64(): DecimalType(20, 0),  # 18446744073709551615 has 20 digits
    pa.float16(): FloatType(),
    pa.float32(): FloatType(),
    pa.float64(): DoubleType(),
    pa.string(): StringType(),
    pa.large_string(): StringType(),
    pa.binary(): BinaryType(),
    pa.large_binary(): BinaryType(),
    pa.date32(): DateType(),
    pa.date64(): DateType(),
    pa.null(): NullType(),
}


def spark_type(t: pa.DataType) -> DataType:
    """The Spark type that holds every value of an Arrow type exactly.

    ===============================  =========================================
    Arrow                            Spark
    ===============================  =========================================
    int8/16/32/64, float, bool       the same
    uint8, uint16, uint32            smallint, int, bigint (the next signed type)
    uint64                           decimal(20,0)
    decimal128(p, s)                 decimal(p, s)
    decimal256(p, s), p > 38         string: the exact decimal text (``"-1.50"``)
    timestamp with a time zone       timestamp (UTC instants)
    timestamp without (DATETIME)     timestamp_ntz (wall-clock time)
    duration (TIME)                  interval day to second (microseconds)
    date32                           date
    string, large_string             string
    binary, large_binary, fixed      binary
    dictionary<k, v>                 the type of v (ENUM labels: string)
    list, large_list, fixed_size     array of the mapped element type
    struct                           struct of the mapped field types
    map                              map of the mapped key and value types
    ===============================  =========================================

    Raises TypeError for Arrow types no vecbinlog column has.
    """
    if t in _PLAIN:
        return _PLAIN[t]
    if pa.types.is_fixed_size_binary(t):
        return BinaryType()
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale) if t.precision <= _SPARK_MAX_PRECISION else StringType()
    if pa.types.is_timestamp(t):
        return TimestampType() if t.tz is not None else TimestampNTZType()
    if pa.types.is_duration(t):
        return DayTimeIntervalType()
    if pa.types.is_dictionary(t):
        return spark_type(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(spark_type(t.value_type), containsNull=t.value_field.nullable)
    if pa.types.is_map(t):
        return MapType(spark_type(t.key_type), spark_type(t.item_type), valueContainsNull=t.item_field.nullable)
    if pa.types.is_struct(t):
        return StructType([_spark_field(t.field(i)) for i in range(t.num_fields)])
    raise TypeError(f"no Spark type for the Arrow type {t}")


def _spark_field(f: pa.Field) -> StructField:
    return StructField(f.name, spark_type(f.type), nullable=f.nullable)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema (:func:`spark_type` per field, nullability kept)."""
    return StructType([_spark_field(f) for f in schema])


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema PySpark expects batches of ``schema`` in (its own conversion)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone="UTC")  # pyspark 4.1+
    except TypeError:
        return to_arrow_schema(schema)  # pyspark 4.0: timestamps are UTC by default


def _cast(col: pa.Array, to: pa.DataType) -> pa.Array:
    if pa.types.is_decimal(col.type) and pa.types.is_string(to):
        return decimal_text(col)
    return col.cast(to) if col.type != to else col


def _first_unfit(col: pa.Array, to: pa.DataType) -> int | None:
    """The first row of ``col`` whose value cannot be cast to ``to`` (halving: a cast per half,
    on the error's path only); None when each half casts alone (the whole does not)."""
    lo, n = 0, len(col)
    while n > 1:
        half = n // 2
        try:
            _cast(col.slice(lo, half), to)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            n = half
            continue
        try:
            _cast(col.slice(lo + half, n - half), to)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            lo, n = lo + half, n - half
            continue
        return None
    return lo if n == 1 else None


def _where(rows: pa.RecordBatch, k: int | None) -> str:
    """`` at FILE:POS (row N of its event)`` of row ``k`` of ``rows`` (empty when not known)."""
    if k is None or "_log_file" not in rows.schema.names or "_log_pos" not in rows.schema.names:
        return ""
    row = rows.slice(k, 1).to_pylist()[0]
    event_row = f", row {row['_event_row']} of its event" if "_event_row" in row else ""
    return f" at {row['_log_file']}:{row['_log_pos']}{event_row}"


def conform(batch: pa.RecordBatch, target: pa.Schema, table: str | None = None, *,
            given: bool = False, rows: pa.RecordBatch | None = None) -> pa.RecordBatch:
    """``batch`` cast, column by column (by name), to exactly ``target``.

    A target column the batch lacks (a layout that has fewer columns) is all null; a
    batch column the target lacks is an error, never dropped silently, unless ``target`` was
    ``given`` by the user (``spark.read.schema(...)``: the columns to read). A value that does
    not fit its target type is a ValueError naming the column and where the row is (``rows``:
    the batch with its ``_log_file``/``_log_pos``, when ``batch`` was projected without them).
    """
    names = set(batch.schema.names)
    extra = names - set(target.names)
    if extra and not given:
        raise ValueError(
            f"{table or 'batch'}: columns {sorted(extra)} are not in the schema {target.names} (a batch must be "
            "fitted to its table's plan first: TablePlan.conform)"
        )
    arrays = []
    for field in target:
        if field.name in names:
            col = batch.column(field.name)
            try:
                arrays.append(_cast(col, field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                at = _where(rows if rows is not None else batch, _first_unfit(col, field.type))
                raise ValueError(
                    f"{table or 'batch'}: column {field.name!r} of type {col.type} cannot be cast to {field.type}{at} "
                    f"(text that is invalid in its charset comes back as binary: see the charsets option): {exc}"
                ) from exc
        elif field.name == TABLE_COLUMN and table is not None:
            arrays.append(pa.repeat(scalar(table, field.type), batch.num_rows))
        else:
            arrays.append(pa.nulls(batch.num_rows, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)
