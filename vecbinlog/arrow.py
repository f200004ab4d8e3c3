"""Arrow record batches of a table's change log: its columns, then the metadata columns.

Metadata columns (Spark Change Data Feed names, plus where each row came from):

=====================  ==============================  =============================================
column                 Arrow type                      meaning
=====================  ==============================  =============================================
``_change_type``       dictionary<int8, string>        insert, update_preimage, update_postimage, delete
``_commit_timestamp``  timestamp[us, tz=UTC]           timestamp of the rows event's header
``_log_file``          dictionary<int32, string>       binlog file name (no directory)
``_log_pos``           int64                           byte offset of the rows event in that file
``_event_row``         int32                           row number within the rows event (an UPDATE's
                                                       two images share it)
``_absent``            list<string>                    names of the table's columns that are not in
                                                       this row image (binlog_row_image MINIMAL or
                                                       NOBLOB); empty for full images
=====================  ==============================  =============================================

A column absent from an image is null in its own column *and* listed in ``_absent``; a
NULL value is null and not listed.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .decoders import ColumnData, DecodeOptions, arrow_field, decode_column
from .rows import CHANGE_TYPES, RowImages
from .table_map import TableMap

__all__ = ["METADATA_FIELDS", "table_schema", "build_batch"]

CHANGE_TYPE = pa.dictionary(pa.int8(), pa.string())
LOG_FILE = pa.dictionary(pa.int32(), pa.string())
COMMIT_TIMESTAMP = pa.timestamp("us", tz="UTC")

METADATA_FIELDS: tuple[pa.Field, ...] = (
    pa.field("_change_type", CHANGE_TYPE, nullable=False),
    pa.field("_commit_timestamp", COMMIT_TIMESTAMP, nullable=False),
    pa.field("_log_file", LOG_FILE, nullable=False),
    pa.field("_log_pos", pa.int64(), nullable=False),
    pa.field("_event_row", pa.int32(), nullable=False),
    pa.field("_absent", pa.list_(pa.string()), nullable=False),
)
_CHANGE_DICT = pa.array(CHANGE_TYPES, pa.string())
#: TIMESTAMP, TIME, DATETIME type codes: MariaDB 5.3-10.0 wrote them with fractional seconds
#: and no metadata, so their size in a MariaDB binlog is a guess (MySQL's are exact).
MARIADB_OLD_TEMPORAL = frozenset({7, 11, 12})


def column_names(table_map: TableMap, options: DecodeOptions) -> list[str]:
    """The user's ``names=`` for the table when given, else the binlog's (or ``@N``)."""
    if options.names is None:
        return table_map.column_names
    if len(options.names) != len(table_map.columns):
        raise ValueError(
            f"names= gives {len(options.names)} column names for {table_map.name}, "
            f"whose TABLE_MAP has {len(table_map.columns)} columns"
        )
    return list(options.names)


def table_schema(table_map: TableMap, options: DecodeOptions) -> pa.Schema:
    """The schema a table's change log decodes to (data may turn an undecodable text column to binary)."""
    names = column_names(table_map, options)
    fields = [arrow_field(spec, name, options) for spec, name in zip(table_map.columns, names)]
    return pa.schema(fields + list(METADATA_FIELDS), metadata={b"vecbinlog.table": table_map.name.encode()})


def build_batch(images: RowImages, options: DecodeOptions, log_file: str) -> tuple[pa.RecordBatch, list[str]]:
    """Decode every column of ``images`` into one record batch; returns it and any warnings."""
    tm = images.table_map
    n = len(images)
    names = column_names(tm, options)
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    warnings: list[str] = []
    for c, (spec, name) in enumerate(zip(tm.columns, names)):
        how, width = images.storage[c]
        col = ColumnData(
            spec=spec,
            name=name,
            buf=images.file.buf,
            offsets=np.ascontiguousarray(images.offsets[:, c]),
            lengths=images.lengths.get(c),
            width=width if how == "fixed" else 0,
            valid=np.ascontiguousarray(images.valid[:, c]),
            options=options,
            path=images.file.path,
        )
        arr = decode_column(col)
        warnings.extend(col.warnings)
        if options.flavor == "mariadb" and spec.type in MARIADB_OLD_TEMPORAL and len(images):
            warnings.append(
                f"column {name!r} is {spec.type_name} in MariaDB's pre-10.1 format (mysql56_temporal_format=OFF, "
                "or a table made by MariaDB 10.0), whose binlog does not give its fractional-second precision: "
                "it was read as having none, so its values are wrong if the column has fractional seconds"
            )
        declared = arrow_field(spec, name, options)
        fields.append(declared.with_type(arr.type))
        arrays.append(arr)

    # metadata columns
    arrays.append(pa.DictionaryArray.from_arrays(pa.array(images.change, pa.int8()), _CHANGE_DICT))
    micros = images.timestamp.astype(np.int64) * 1_000_000
    arrays.append(pa.array(micros, COMMIT_TIMESTAMP))
    arrays.append(pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([log_file])))
    arrays.append(pa.array(images.event_pos, pa.int64()))
    arrays.append(pa.array(images.event_row, pa.int32()))
    arrays.append(_absent_lists(images.absent, names))
    fields.extend(METADATA_FIELDS)
    schema = pa.schema(fields, metadata={b"vecbinlog.table": tm.name.encode()})
    return pa.RecordBatch.from_arrays(arrays, schema=schema), warnings


def _absent_lists(absent: np.ndarray, names: list[str]) -> pa.Array:
    """list<string> of absent column names per row, built from the (n, ncols) mask at once."""
    counts = absent.sum(axis=1)
    offsets = np.zeros(len(absent) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    _, cols = np.nonzero(absent)  # row-major: each row's columns in order
    values = pa.array(names, pa.string()).take(pa.array(cols.astype(np.int32)))
    return pa.ListArray.from_arrays(pa.array(offsets), values)
