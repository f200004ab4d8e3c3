"""Snapshots: a table's rows as of a point in the log, from its change log, by primary key.

Every change is an operation on one key: an insert or an update's after image *sets* the row
of its key, a delete or an update's before image *removes* it (an update that changes the key
removes the old key, then sets the new one). The state as of a point is, for every key, the
last operation on it, kept when it sets. That is one Arrow group-by (the last change per key)
and a take: no Python step per row.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrowbuild import numbers, strings
from .decode.tableplan import METADATA_NAMES
from .errors import UnsupportedError

__all__ = ["replay"]

_SETS = ("insert", "update_postimage")


def replay(changes: pa.Table, key: Sequence[str], table: str, columns: Sequence[str] | None = None) -> pa.Table:
    """The rows ``changes`` (a change log in log order, as ``read_table`` gives it) leave.

    Returns the table's own columns (``columns``, by default every column that is not a
    metadata column), in the order of the keys' last change. Raises UnsupportedError when an
    image lacks columns (``binlog_row_image`` other than FULL: the rows' other values are not
    in the binlog) or a key column is NULL.
    """
    own = list(columns) if columns is not None else [n for n in changes.column_names if n not in METADATA_NAMES]
    missing = [k for k in key if k not in own]
    if missing:
        raise ValueError(f"{table}: key column(s) {missing} are not among its columns {own}")
    if changes.num_rows == 0:
        return changes.select(own)
    partial = pc.list_value_length(changes.column("_absent"))
    if pc.max(partial).as_py():
        raise UnsupportedError(
            f"{table}: some row images leave columns out (binlog_row_image MINIMAL or NOBLOB), so the "
            "table's rows are not in the binlog; a snapshot needs FULL row images"
        )
    for k in key:
        if changes.column(k).null_count:
            raise UnsupportedError(f"{table}: key column {k!r} is NULL in some row images; it is not a key")
    seq = numbers(np.arange(changes.num_rows, dtype=np.int64))
    ops = changes.select(list(key)).append_column("_seq", seq)
    last = ops.group_by(list(key), use_threads=False).aggregate([("_seq", "max")]).column("_seq_max")
    last = pc.take(last, pc.sort_indices(last))  # each key's last change, in log order
    kinds = pc.take(changes.column("_change_type").cast(pa.string()), last)
    return changes.select(own).take(pc.filter(last, pc.is_in(kinds, value_set=strings(_SETS))))
