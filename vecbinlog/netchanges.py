"""Net changes: a stretch of a change log reduced to one row per key, to apply to a lake table.

Iceberg's ``net_changes`` semantics (``create_changelog_view(net_changes => true)``), keyed by
the table's primary key and ordered by ``(_log_file, _log_pos, _event_row)`` (files in log
order; an UPDATE's before image before its after image). Every change is an operation on
one key: an insert or an update's after image *sets* its row, a delete or an update's before
image *removes* it (an update that changes the key removes the old key and sets the new
one). For each key, its first operation in the stretch says whether the row was there before
(it was when the first operation removes it), its last one whether it is there after:

==============  =============  ======================================================
there before    there after    net change (``_change_type``), with the values of
==============  =============  ======================================================
no              yes            ``insert``: the row's last state
yes             yes            ``update_postimage``: the row's last state
yes             no             ``delete``: the row as it was last (its last image)
no              no             nothing: a key inserted and deleted within the stretch
==============  =============  ======================================================

So ``insert`` and ``update_postimage`` are both *upserts* of the final values, and applying
the net changes of a stretch to the table as it was at its start gives the table at its end
(``tests/test_netchanges.py`` checks it against a MariaDB server's ``SELECT`` at both ends):

.. code-block:: python

    from deltalake import DeltaTable
    net = vecbinlog.netchanges.net_changes(changes)                 # or read_net_changes(...)
    (DeltaTable("lake/orders").merge(net, "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_delete("s._change_type = 'delete'")
        .when_matched_update_all("s._change_type != 'delete'")
        .when_not_matched_insert_all("s._change_type != 'delete'")
        .execute())

Applying them again (a stream's micro-batch run twice after a crash) changes nothing more.
One Arrow sort, one group-by (first and last change of every key) and a take: no Python step
per row. Changes that did not take effect (``_outcome`` rollback or incomplete, kept with
``rolled_back="keep"``) are left out; MINIMAL row images (``_absent`` not empty) lack the
row's other values and are refused, as :mod:`vecbinlog.snapshot` refuses them.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrowbuild import numbers, scalar, strings
from .errors import UnsupportedError
from .log.logset import log_order_key
from .log.versions import SchemaHistory
from .reader import Binlog, PathLike

__all__ = ["net_changes", "read_net_changes", "primary_key", "checked_key", "mark_key", "KEY_METADATA"]

#: field metadata naming a column's place in the table's primary key (vecbinlog.spark's schemas)
KEY_METADATA = "vecbinlog.primary_key"
_SETS = ("insert", "update_postimage")
_REMOVES = ("delete", "update_preimage")
_NOT_TAKEN = ("rollback", "incomplete")


def primary_key(layouts: SchemaHistory, table: str) -> list[str] | None:
    """The primary key of ``table``'s last layout in ``layouts`` (:meth:`vecbinlog.Binlog.history`),
    named as :meth:`~vecbinlog.Binlog.read_table` names the columns; None when the binlog
    (``binlog_row_metadata=FULL``), its DDL and ``schema=`` give none."""
    history = layouts.history.get(table)
    if not history:
        return None
    state = history[-1][1]
    pk = state.table_map.primary_key
    if not pk:
        return None
    names = layouts.plans[table].layout_names(state.version)
    return [names[c] for c in pk]


def _log_order(changes: pa.Table) -> pa.Array:
    """Indices of ``changes`` in log order: files by :func:`~vecbinlog.log.logset.log_order_key`,
    then ``_log_pos``, ``_event_row``, a before image before its after image."""
    files = changes.column("_log_file")
    names = pc.unique(files.cast(pa.string())).to_pylist()
    rank = {n: k for k, n in enumerate(sorted((n for n in names if n is not None), key=log_order_key))}
    file_rank = pc.index_in(files.cast(pa.string()), value_set=strings(list(rank)))
    # index_in gives the place in the value set, which is in log order
    after = pc.equal(changes.column("_change_type").cast(pa.string()), scalar("update_postimage", pa.string()))
    keys = pa.table({"f": file_rank, "p": changes.column("_log_pos"), "r": changes.column("_event_row"),
                     "a": after.cast(pa.int8())})
    return pc.sort_indices(keys, sort_keys=[("f", "ascending"), ("p", "ascending"), ("r", "ascending"),
                                            ("a", "ascending")])


def net_changes(changes: pa.Table, key: Sequence[str] | None = None) -> pa.Table:
    """One row per key: the net effect of ``changes`` (a change log, as ``read_table``, the
    Spark source or a stream's micro-batch give it, in any row order).

    Parameters
    ----------
    changes : a change log with the table's columns and at least ``_change_type``,
        ``_log_file``, ``_log_pos`` and ``_event_row`` (``_absent`` and ``_outcome`` are used
        when there).
    key : the key columns; by default those the schema's field metadata names
        (:data:`KEY_METADATA`, set by :func:`read_net_changes` and the Spark source).

    Returns
    -------
    pyarrow.Table with the columns of ``changes``: for each key whose row is there before
    or after, the row of its last change, ``_change_type`` replaced by the net change
    (``insert``, ``update_postimage`` or ``delete``, see the module docstring), in the log
    order of those last changes.

    Raises ValueError without a key, UnsupportedError for images without every column
    (``binlog_row_image`` other than FULL) or a NULL key.

    Examples
    --------
    >>> import vecbinlog
    >>> from vecbinlog.netchanges import net_changes
    >>> log = vecbinlog.read_table("data/sample/mariadb-bin.000001", "shop.orders")   # doctest: +SKIP
    >>> net_changes(log, ["id"]).to_pydict()["_change_type"]                         # doctest: +SKIP
    ['insert', 'insert', 'insert']
    """
    key = checked_key(key if key is not None else _key_of(changes.schema), changes.column_names)
    if "_outcome" in changes.column_names and changes.num_rows:
        changes = changes.filter(pc.invert(pc.is_in(changes.column("_outcome").cast(pa.string()),
                                                   value_set=strings(_NOT_TAKEN))))
    if changes.num_rows == 0:
        return changes
    if "_absent" in changes.column_names and pc.max(pc.list_value_length(changes.column("_absent"))).as_py():
        raise UnsupportedError("some row images leave columns out (binlog_row_image MINIMAL or NOBLOB): the rows' "
                               "other values are not in the binlog; net changes need FULL row images")
    for k in key:
        if changes.column(k).null_count:
            raise UnsupportedError(f"key column {k!r} is NULL in some row images; it is not a key")
    changes = changes.take(_log_order(changes))
    kinds = changes.column("_change_type").cast(pa.string())
    seq = numbers(np.arange(changes.num_rows, dtype=np.int64))
    ends = (changes.select(key).append_column("_seq", seq)
            .group_by(key, use_threads=False).aggregate([("_seq", "min"), ("_seq", "max")]))
    first, last = ends.column("_seq_min"), ends.column("_seq_max")
    before = pc.is_in(pc.take(kinds, first), value_set=strings(_REMOVES))
    after = pc.is_in(pc.take(kinds, last), value_set=strings(_SETS))
    keep = pc.or_(before, after)
    last, before, after = pc.filter(last, keep), pc.filter(before, keep), pc.filter(after, keep)
    order = pc.sort_indices(last)
    last, before, after = pc.take(last, order), pc.take(before, order), pc.take(after, order)
    update, insert, delete = (scalar(k, pa.string()) for k in ("update_postimage", "insert", "delete"))
    net = pc.if_else(after, pc.if_else(before, update, insert), delete)
    out = changes.take(last)
    where = out.column_names.index("_change_type")
    return out.set_column(where, out.schema.field(where).with_type(pa.string()), net)


def checked_key(key: Sequence[str] | None, columns: Sequence[str]) -> list[str]:
    """``key`` as a list, or ValueError when there is none or a column is not in ``columns``."""
    if not key:
        raise ValueError("net_changes needs the key columns: key=[...] (the binlog gives the primary key with "
                         "binlog_row_metadata=FULL: read_net_changes() and the Spark source find it)")
    missing = [k for k in key if k not in columns]
    if missing:
        raise ValueError(f"key column(s) {missing} are not among the columns {list(columns)}")
    return list(key)


def _key_of(schema: pa.Schema) -> list[str] | None:
    """The key columns the schema's field metadata names, in key order."""
    found = []
    for f in schema:
        value = (f.metadata or {}).get(KEY_METADATA.encode())
        if value is not None:
            found.append((int(value), f.name))
    return [name for _, name in sorted(found)] or None


def read_net_changes(paths: PathLike | Sequence[PathLike], table: str, key: Sequence[str] | None = None,
                     **options: Any) -> pa.Table:
    """The net changes of ``table`` in the files (or the stretch ``options`` select: ``start``
    and ``stop``, ``gtids``, ``since``/``until``), keyed by ``key`` or the primary key the
    binlog gives (:func:`primary_key`); the key columns are marked in the result's field
    metadata (:data:`KEY_METADATA`). See :func:`net_changes`.

    Examples
    --------
    >>> from vecbinlog.netchanges import read_net_changes
    >>> net = read_net_changes("archive/mysql-bin.*", "shop.orders", gtids="0-1-101..250")  # doctest: +SKIP
    """
    with Binlog(paths, **options) as log:
        changes = log.read_table(table)
        if key is None:
            key = primary_key(log.history(), table)
    if not key:
        raise ValueError(f"{table}: neither the binlog (binlog_row_metadata=FULL), its DDL nor schema= give a "
                         "primary key; name the key columns: key=[...]")
    return net_changes(mark_key(changes, key))


def mark_key(table: pa.Table, key: Sequence[str]) -> pa.Table:
    """``table`` with its key columns marked in their field metadata (:data:`KEY_METADATA`)."""
    fields = []
    for f in table.schema:
        if f.name in key:
            f = f.with_metadata({**(f.metadata or {}), KEY_METADATA.encode(): str(list(key).index(f.name)).encode()})
        fields.append(f)
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))
