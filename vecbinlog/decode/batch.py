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
``_absent``            list<dictionary<int16,          names of the table's columns that are not in
                       string>>                        this row image (binlog_row_image MINIMAL or
                                                       NOBLOB); empty for full images. Each name is
                                                       a 2-byte code into the table's column names
                                                       (``to_pylist``/pandas give strings)
``_payload_offset``    int64, nullable                 for a rows event unpacked from a MySQL
                                                       TRANSACTION_PAYLOAD_EVENT (whose offset is
                                                       ``_log_pos``): its offset inside the
                                                       decompressed payload; null otherwise
``_gtid``              dictionary<int32, string>,      the transaction's GTID: ``uuid:N``,
                       nullable                        ``uuid:tag:N`` (MySQL 8.3+), MariaDB
                                                       ``domain-server-seq``; null when the server
                                                       wrote none (ANONYMOUS_GTID, old servers)
``_transaction_pos``   int64, nullable                 offset of the event that opened the
                                                       transaction (its GTID event, else BEGIN) in
                                                       ``_log_file``: with it, identifies the
                                                       transaction; null outside any transaction
``_xid``               uint64, nullable                the XID_EVENT's xid that committed it; null
                                                       when it ended otherwise (COMMIT query of
                                                       non-transactional tables, ROLLBACK...)
``_outcome``           dictionary<int8, string>        how the transaction ended: commit,
                                                       rollback (also: undone by ROLLBACK TO
                                                       SAVEPOINT), prepare (XA), incomplete (no
                                                       end in the file); see transactions.py
``_schema_version``    int32                           which layout of the table the row was written
                                                       under: 0 for the first met in the files read,
                                                       +1 at every change (an ALTER TABLE seen in the
                                                       DDL or in the TABLE_MAP); see tableplan.py
``_incarnation``       int32                           which table of that name the row belongs to: 0
                                                       for the first met in the files read, +1 at
                                                       every DROP, CREATE (OR REPLACE), RENAME onto
                                                       or TRUNCATE TABLE of the name in the log
``_query``             dictionary<int32, string>,      only with ``queries=True``: the statement
                       nullable                        (ROWS_QUERY / MariaDB ANNOTATE_ROWS event)
``_json_diffs``         list<struct<column, operation,  only for tables with a MySQL JSON column: the
                       path, value: string>>           partial JSON updates logged in this after image
                                                       (PARTIAL_UPDATE_ROWS_EVENT), in order; empty
                                                       for every other image
=====================  ==============================  =============================================

A column absent from an image is null in its own column *and* listed in ``_absent``; a
NULL value is null and not listed.

Partial JSON updates (``binlog_row_value_options=PARTIAL_JSON``): when the before image
holds the column's document, the diffs are applied and the post-image holds the full new
JSON text. When it does not (``binlog_row_image=MINIMAL``/``NOBLOB``, or a NULL before
value) the new document is not in the binlog: the column is null *and* listed in
``_absent`` (so replaying by primary key keeps the old value), its diffs are in
``_json_diffs`` to be applied to it, and a DecodeWarning counts such values.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from ..arrowbuild import numbers, strings, valid_mask
from ..binlog.transactions import COMMIT, OUTCOMES, ROLLBACK, TxnContext
from ..constants import ColumnType
from ..errors import BinlogError
from ..groups import group, ranks
from ..pools import TaskGroup, run_all
from ..tables.table_map import TableMap
from ..tables.types import MARIADB_OLD_TEMPORAL
from .decoders import ColumnData, DecodeOptions, arrow_field, decode_column, gathers_values
from .decoders.common import CountedNote, gather_columns
from .decoders.jsondiff import JsonDiff, apply_partial
from .rows import CHANGE_TYPES, RowImages

__all__ = ["METADATA_FIELDS", "JSON_DIFFS_FIELD", "table_schema", "build_batch"]

CHANGE_TYPE = pa.dictionary(pa.int8(), pa.string())
LOG_FILE = pa.dictionary(pa.int32(), pa.string())
COMMIT_TIMESTAMP = pa.timestamp("us", tz="UTC")

#: ``_absent``: the names as codes into the table's column names
ABSENT_TYPE = pa.list_(pa.dictionary(pa.int16(), pa.string()))
METADATA_FIELDS: tuple[pa.Field, ...] = (
    pa.field("_change_type", CHANGE_TYPE, nullable=False),
    pa.field("_commit_timestamp", COMMIT_TIMESTAMP, nullable=False),
    pa.field("_log_file", LOG_FILE, nullable=False),
    pa.field("_log_pos", pa.int64(), nullable=False),
    pa.field("_event_row", pa.int32(), nullable=False),
    pa.field("_absent", ABSENT_TYPE, nullable=False),
    pa.field("_payload_offset", pa.int64()),
    pa.field("_gtid", pa.dictionary(pa.int32(), pa.string())),
    pa.field("_transaction_pos", pa.int64()),
    pa.field("_xid", pa.uint64()),
    pa.field("_outcome", pa.dictionary(pa.int8(), pa.string()), nullable=False),
    pa.field("_schema_version", pa.int32(), nullable=False),
    pa.field("_incarnation", pa.int32(), nullable=False),
)
QUERY_FIELD = pa.field("_query", pa.dictionary(pa.int32(), pa.string()))
#: Present only for tables with a MySQL JSON column, so that the schema of a table depends
#: on its layout alone (never on whether a batch happens to hold partial updates).
JSON_DIFF = pa.struct(
    [pa.field("column", pa.string(), nullable=False), pa.field("operation", pa.string(), nullable=False),
     pa.field("path", pa.string(), nullable=False), pa.field("value", pa.string())]
)
JSON_DIFFS_FIELD = pa.field("_json_diffs", pa.list_(pa.field("item", JSON_DIFF, nullable=False)), nullable=False)
_CHANGE_DICT = strings(CHANGE_TYPES)
_OUTCOME_DICT = strings(OUTCOMES)


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


def has_json(table_map: TableMap) -> bool:
    """Whether the table has a MySQL JSON column (and so a ``_json_diffs`` column)."""
    return any(spec.type == ColumnType.MYSQL_TYPE_JSON for spec in table_map.columns)


def metadata_fields(table_map: TableMap, queries: bool = False) -> list[pa.Field]:
    """The metadata columns of a table: METADATA_FIELDS, ``_json_diffs`` when it has JSON,
    ``_query`` when asked for."""
    return (list(METADATA_FIELDS) + ([JSON_DIFFS_FIELD] if has_json(table_map) else [])
            + ([QUERY_FIELD] if queries else []))


#: declared schemas :func:`table_schema` keeps (then it starts over: bounded memory)
SCHEMAS_KEPT = 1024
_schemas: dict[tuple, tuple[TableMap, pa.Schema]] = {}


def table_schema(table_map: TableMap, options: DecodeOptions, queries: bool = False) -> pa.Schema:
    """The schema a table's change log decodes to (data may turn an undecodable text column to binary).

    Made once per layout object and options in the process, then kept (the layouts of a
    process are shared: ``tables.table_ids.PARSED_MAPS``): an Arrow field with its metadata
    costs ~50 us, a 27-column table's schema ~1 ms, at every open of a log otherwise."""
    key = (id(table_map), queries, *(tuple(sorted(v.items())) if isinstance(v, dict) else v
                                      for v in (getattr(options, f.name) for f in dataclasses.fields(options))))
    kept = _schemas.get(key)
    if kept is not None and kept[0] is table_map:  # the layout is held, so its id is its own
        return kept[1]
    names = column_names(table_map, options)
    fields = [arrow_field(spec, name, options) for spec, name in zip(table_map.columns, names)]
    schema = pa.schema(fields + metadata_fields(table_map, queries),
                       metadata={b"vecbinlog.table": table_map.name.encode()})
    if len(_schemas) >= SCHEMAS_KEPT:
        _schemas.clear()  # (atomic: safe with reads on other threads)
    _schemas[key] = (table_map, schema)
    return schema


@dataclass
class RowTransactions:
    """The transaction of each row of a batch: a slot of ``context`` (-1: none) and more."""

    context: TxnContext
    txn: np.ndarray  #: int32 (n,)
    undone: np.ndarray  #: bool (n,): undone by ROLLBACK TO SAVEPOINT
    query: np.ndarray  #: int32 (n,): index into context.queries, -1 none
    #: what :meth:`outcome` gives, once it has been asked (the outcome filter, then the column)
    outcomes: np.ndarray | None = None

    def outcome(self) -> np.ndarray:
        """int8 (n,) code into OUTCOMES of each row (rows outside a transaction: commit)."""
        if self.outcomes is None:
            self.outcomes = self._outcome()
        return self.outcomes

    def _outcome(self) -> np.ndarray:
        t = self.txn
        per_slot = self.context.outcome
        if not len(per_slot):
            code = np.full(len(t), COMMIT, np.int8)
        elif bool((t >= 0).all()):  # every row in a transaction: one look-up
            code = per_slot.astype(np.int8, copy=False)[t]
        else:
            code = np.where(t >= 0, per_slot[np.maximum(t, 0)], COMMIT).astype(np.int8)
        if self.undone.any():
            code[self.undone] = ROLLBACK
        return code


def _dictionary(values: pa.Array, codes: np.ndarray, index_type: pa.DataType) -> pa.Array:
    """A dictionary array of ``values[codes]`` (codes < 0 or null values: null), keeping only used values."""
    dtype = index_type.to_pandas_dtype()
    ok = codes >= 0
    if values.null_count and ok.any():
        ok[ok] = valid_mask(values)[codes[ok]]
    every = bool(ok.all())  # the usual case: no row without a value, no boolean selections
    kept = codes if every else codes[ok]
    if len(kept) and bool((kept[1:] >= kept[:-1]).all()):  # in log order: no sort needed
        first = np.empty(len(kept), bool)
        first[0] = True
        np.not_equal(kept[1:], kept[:-1], out=first[1:])
        used = kept[first]
        inverse = np.cumsum(first, dtype=dtype) - 1
    else:
        first, inverse = group(kept)
        used = kept[first]
    if every:
        indices = numbers(inverse.ravel().astype(dtype, copy=False), index_type)
    else:
        idx = np.zeros(len(codes), dtype)
        idx[ok] = inverse.ravel()
        indices = numbers(idx, index_type, valid=ok)
    every_value = len(used) == len(values) and bool((used == np.arange(len(used))).all())  # (a run's own context)
    return pa.DictionaryArray.from_arrays(indices, values if every_value else values.take(numbers(used, pa.int64())))


#: Rows x columns under which a batch's columns are decoded one after the other, and the
#: batch is not decoded in the background (threads cost more than they give on small
#: batches: they take turns at the GIL).
THREADED_CELLS = 1 << 18


def _decode(make: Callable[[], ColumnData]) -> tuple[pa.Array, ColumnData]:
    """Decode one column; the returned ColumnData keeps its warnings, and its positions only
    when a partial JSON update needs them afterwards."""
    col = make()
    arr = decode_column(col)
    if col.spec.type != ColumnType.MYSQL_TYPE_JSON:
        # (let go of: the positions are not read again; valid is typed as the array it is until then)
        col.offsets = col.valid = col.lengths = col.gathered = None  # type: ignore[assignment]
    return arr, col


def _map_columns(makers: list[Callable[[], ColumnData]], n: int, threads: int) -> list[tuple[pa.Array, ColumnData]]:
    """Each column made and decoded, in order; spread over ``threads`` threads when worth it."""
    if threads <= 1 or len(makers) < 2 or n * len(makers) < THREADED_CELLS:
        return [_decode(make) for make in makers]
    # the first error in column order wins, as it would decoding one column after another; every
    # column is done (or cancelled) before this returns, however it ends
    with TaskGroup("a batch's columns") as columns:
        return run_all(columns, "columns", threads, [functools.partial(_decode, make) for make in makers])


def build_batch(
    images: RowImages, options: DecodeOptions, log_file: str | Sequence[str], txn: RowTransactions | None = None,
    queries: bool = False, schema_version: int = 0, threads: int = 1, incarnation: int = 0,
    declared: pa.Schema | None = None, file_of_event: np.ndarray | None = None,
    wanted: Callable[[str, bool], bool] | None = None,
) -> tuple[pa.RecordBatch, list[str]]:
    """Decode every column of ``images`` into one record batch; returns it and any warnings.
    ``log_file``: the name of the file the rows come from, or, with ``file_of_event`` (the
    file of each of the images' events, gathered from several), the names it indexes.
    ``threads``: how many columns may be decoded at once. ``declared``: the layout's
    :func:`table_schema` (with these options and ``queries``), when the caller keeps it for
    the batches of a layout; made here otherwise. ``wanted(name, is_metadata)``: the columns a
    read returns (None: all); the others are all null, not decoded (but ``_log_file``,
    ``_log_pos`` and ``_schema_version``, which say where a batch comes from)."""
    tm = images.table_map
    names = column_names(tm, options)
    if declared is None:
        declared = table_schema(tm, options, queries)
    data = _data_columns(images, options, names, declared, threads, wanted)
    if txn is None:  # no transaction context: every row outside a transaction
        n = len(images)
        txn = RowTransactions(_NO_TXN, np.full(n, -1, np.int32), np.zeros(n, bool), np.full(n, -1, np.int32))
    files = (log_file,) if isinstance(log_file, str) else tuple(log_file)
    rows = _Rows(images, names, files, file_of_event, txn, data.absent, data.diffs, schema_version, incarnation)
    nulls = _SharedNulls(len(images))
    arrays = data.arrays + [
        METADATA_COLUMNS[f.name](rows) if wanted is None or f.name in _WHERE_FROM or wanted(f.name, True)
        else nulls.array(f.type)
        for f in metadata_fields(tm, queries)
    ]
    schema = declared
    for c, arr in enumerate(data.arrays):
        if arr.type != declared.field(c).type:  # text fallen back to binary, by its data
            schema = schema.set(c, declared.field(c).with_type(arr.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema), data.warnings


@dataclass
class _DataColumns:
    """A batch's own columns, decoded, and what decoding them found."""

    arrays: list[pa.Array]
    warnings: list[str]
    absent: np.ndarray | None  #: bool (C, n): columns left out of each image; None: none
    diffs: dict[int, list[tuple[str, JsonDiff]]]  #: row -> (column, partial JSON diff), in column order


def _gathered(images: RowImages, todo: list[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The values of the batch's length-prefixed columns in ``todo`` that their decoders copy
    as they are, copied at once when there are several (:func:`gather_columns`)."""
    cols = [c for c in todo if c in images.var and c not in images.partial
            and gathers_values(images.table_map.columns[c])]
    if len(cols) < 2 or not len(images):
        return {}
    out = gather_columns(images.file.buf, [images.var[c][0] for c in cols], [images.var[c][1] for c in cols],
                         [images.valid[c] for c in cols])
    return {} if out is None else dict(zip(cols, out))


def _data_columns(images: RowImages, options: DecodeOptions, names: list[str], declared: pa.Schema,
                  threads: int, wanted: Callable[[str, bool], bool] | None = None) -> _DataColumns:
    """Each column of the table: decoded (in threads when there are several columns of many
    rows: NumPy and Arrow release the GIL), or a shared all-null array where no row has a
    value; partial JSON updates applied."""
    tm, n = images.table_map, len(images)
    out = _DataColumns([], [], images.absent, {})
    nulls = _SharedNulls(n)

    def column_data(c: int) -> ColumnData:
        valid = images.valid[c]
        partial = images.partial.get(c)
        starts, lengths = images.var.get(c, (None, None))
        return ColumnData(
            raw=images.fixed.get(c), spec=tm.columns[c], name=names[c], buf=images.file.buf, offsets=starts,
            lengths=lengths, width=int(images.fixed[c].shape[1]) if c in images.fixed else 0,
            valid=valid if partial is None else valid & ~partial, options=options, path=images.file.path,
            locate=lambda row: images.value_offset(row, c), gathered=gathered.get(c),
        )

    todo = [c for c in range(len(tm.columns))
            if (not n or images.has_values(c)) and (wanted is None or wanted(names[c], False))]
    gathered = _gathered(images, todo)
    try:
        decoded = dict(zip(todo, _map_columns([functools.partial(column_data, c) for c in todo], n, threads)))
    except BinlogError as exc:
        raise images.file.relocate(exc) from exc
    for c, (spec, name) in enumerate(zip(tm.columns, names)):
        if c in decoded:
            (arr, col), partial = decoded.pop(c), images.partial.get(c)
        else:  # no value in any row, or a column the read does not return
            arr, col, partial = nulls.array(declared.field(c).type), None, None
        if partial is not None and col is not None:  # diff vectors: decoded and applied value by value
            arr = _apply_diffs(arr, col, partial, images, c, name, out)
        if col is not None:
            out.warnings.extend(col.warnings)
        if options.flavor == "mariadb" and spec.type in MARIADB_OLD_TEMPORAL and n and (
                wanted is None or wanted(name, False)):
            out.warnings.append(
                f"column {name!r} is {spec.type_name} in MariaDB's pre-10.1 format (mysql56_temporal_format=OFF, "
                "or a table made by MariaDB 10.0), whose binlog does not give its fractional-second precision: "
                "it was read as having none, so its values are wrong if the column has fractional seconds"
            )
        out.arrays.append(arr)
    return out


def _apply_diffs(arr: pa.Array, col: ColumnData, partial: np.ndarray, images: RowImages, c: int, name: str,
                 out: _DataColumns) -> pa.Array:
    """Column ``c``'s partial JSON updates applied; the rows whose before image does not hold
    the document are marked absent, their diffs kept for ``_json_diffs``."""
    arr, unapplied, column_diffs = apply_partial(arr, col, partial, images.change)
    for r, ds in column_diffs.items():
        out.diffs.setdefault(r, []).extend((name, d) for d in ds)
    if unapplied.any():
        if out.absent is None:
            out.absent = np.zeros((len(images.table_map.columns), len(images)), bool)
        out.absent[c, unapplied] = True
        col.warnings.append(CountedNote(
            "{n} partial JSON update(s) of column {name!r} could not be applied: the "
            "before image does not hold its value (binlog_row_image=MINIMAL or NOBLOB) or it is NULL; "
            "the column is null and listed in _absent, and its diffs are in _json_diffs", name, int(unapplied.sum())))
    return arr


@dataclass
class _Rows:
    """What the metadata columns of a batch are made from."""

    images: RowImages
    names: list[str]
    log_files: tuple[str, ...]
    file_of_event: np.ndarray | None  #: the file (in ``log_files``) of each event of the images; None: the first
    txn: RowTransactions
    absent: np.ndarray | None
    diffs: dict[int, list[tuple[str, JsonDiff]]]
    schema_version: int
    incarnation: int

    @functools.cached_property
    def outside(self) -> np.ndarray:
        """Rows outside any transaction."""
        return self.txn.txn < 0

    @functools.cached_property
    def slot(self) -> np.ndarray:
        """Each row's transaction slot (0 for rows outside any: masked by :attr:`outside`)."""
        return np.maximum(self.txn.txn, 0) if self.outside.any() else self.txn.txn

    def per_txn(self, values: np.ndarray, dtype: type) -> np.ndarray:
        """A per-transaction array of the context spread to the rows."""
        return values[self.slot] if len(values) else np.zeros(len(self.images), dtype)


def _log_file(r: _Rows) -> pa.Array:
    """``_log_file``: a dictionary of the files the batch's rows come from (usually one)."""
    n = len(r.images)
    if r.file_of_event is None:
        return pa.DictionaryArray.from_arrays(numbers(np.zeros(n, np.int32)), _labels(r.log_files[:1]), safe=False)
    codes = r.file_of_event[r.images.event]
    if len(codes) and (codes[1:] >= codes[:-1]).all():  # (the usual order: then ascending is order of first sight)
        used, inverse = ranks(codes)
    else:
        first, inverse = group(codes)
        used = codes[first]
    labels = _labels(tuple(r.log_files[int(c)] for c in used))
    return pa.DictionaryArray.from_arrays(numbers(inverse.astype(np.int32)), labels, safe=False)


def _transaction_pos(r: _Rows) -> pa.Array:
    return _masked(r.per_txn(r.txn.context.start_pos, np.int64), pa.int64(), r.outside)


def _xid(r: _Rows) -> pa.Array:
    ctx = r.txn.context
    has_xid = ~r.outside & (ctx.has_xid[r.slot] if len(ctx.has_xid) else False)
    return _masked(r.per_txn(ctx.xid, np.uint64), pa.uint64(), ~has_xid)


def _query(r: _Rows) -> pa.Array:
    texts = r.txn.context.queries if r.txn.context.queries is not None else pa.nulls(0, pa.string())
    return _dictionary(texts, r.txn.query.astype(np.int64), pa.int32())


def _constant(value_of: Callable[[_Rows], int]) -> Callable[[_Rows], pa.Array]:
    return lambda r: numbers(np.full(len(r.images), value_of(r), np.int32), pa.int32())


#: the metadata columns that say where a batch comes from: made whatever a read returns
_WHERE_FROM = frozenset({"_log_file", "_log_pos", "_schema_version"})
#: each metadata column (METADATA_FIELDS, ``_json_diffs``, ``_query``) by name -> what makes it
#: (the dictionaries' codes are made here, in range: from_arrays does not check them again)
METADATA_COLUMNS: dict[str, Callable[[_Rows], pa.Array]] = {
    "_change_type": lambda r: pa.DictionaryArray.from_arrays(numbers(r.images.change, pa.int8()), _CHANGE_DICT,
                                                             safe=False),
    "_commit_timestamp": lambda r: numbers(r.images.timestamp.astype(np.int64) * 1_000_000, COMMIT_TIMESTAMP),
    "_log_file": _log_file,
    "_log_pos": lambda r: numbers(r.images.event_pos, pa.int64()),
    "_event_row": lambda r: numbers(r.images.event_row, pa.int32()),
    "_absent": lambda r: _absent_lists(r.absent, r.names) if r.absent is not None else _no_absent(len(r.images),
                                                                                                  r.names),
    "_payload_offset": lambda r: _masked(r.images.inner, pa.int64(), r.images.inner < 0),
    "_gtid": lambda r: _dictionary(r.txn.context.gtid, r.txn.txn, pa.int32()),
    "_transaction_pos": _transaction_pos,
    "_xid": _xid,
    "_outcome": lambda r: pa.DictionaryArray.from_arrays(numbers(r.txn.outcome(), pa.int8()), _OUTCOME_DICT,
                                                         safe=False),
    "_schema_version": _constant(lambda r: r.schema_version),
    "_incarnation": _constant(lambda r: r.incarnation),
    "_json_diffs": lambda r: _json_diff_lists(r.diffs, len(r.images)),
    "_query": _query,
}


_NO_TXN = TxnContext(
    txn=np.zeros(0, np.int32), undone=np.zeros(0, bool), query=np.zeros(0, np.int32), start_pos=np.zeros(0, np.int64),
    gtid=pa.nulls(0, pa.string()), xid=np.zeros(0, np.uint64), has_xid=np.zeros(0, bool), outcome=np.zeros(0, np.int8),
    queries=None,
)


class _SharedNulls:
    """All-null arrays of ``n`` rows whose buffers are slices of one zero buffer, shared by
    every column of a batch that has no value at all (a MINIMAL image of a wide table leaves
    most columns out; a hostile event can be all NULLs): such a column costs no memory of its
    own instead of ``n`` value slots. Types with children other than a list fall back to
    ``pa.nulls``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.zeros: pa.Buffer | None = None

    def _buffer(self, nbytes: int) -> pa.Buffer:
        if self.zeros is None or self.zeros.size < nbytes:
            self.zeros = pa.py_buffer(np.zeros(max(nbytes, 1), np.uint8))
        return self.zeros

    def array(self, t: pa.DataType) -> pa.Array:
        n = self.n
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            z = self._buffer((4 if pa.types.is_list(t) else 8) * (n + 1))
            return pa.Array.from_buffers(t, n, [z, z], null_count=n, children=[pa.nulls(0, t.value_type)])
        if pa.types.is_binary(t) or pa.types.is_string(t):
            return pa.Array.from_buffers(t, n, [self._buffer(4 * (n + 1))] * 2 + [pa.py_buffer(b"")], null_count=n)
        if pa.types.is_large_binary(t) or pa.types.is_large_string(t):
            return pa.Array.from_buffers(t, n, [self._buffer(8 * (n + 1))] * 2 + [pa.py_buffer(b"")], null_count=n)
        if pa.types.is_primitive(t) or pa.types.is_decimal(t) or pa.types.is_fixed_size_binary(t):
            z = self._buffer(max((n * t.bit_width + 7) // 8, (n + 7) // 8))
            return pa.Array.from_buffers(t, n, [z, z], null_count=n)
        return pa.nulls(n, t)


def _masked(values: np.ndarray, type_: pa.DataType, null: np.ndarray) -> pa.Array:
    """``values`` as an Arrow array, null where ``null``: no validity bitmap (and no copy of the
    values) when nothing is null, and no values read when everything is."""
    if not null.any():
        return numbers(values, type_)
    if null.all():
        return pa.nulls(len(values), type_)
    return numbers(values, type_, valid=~null)


@functools.lru_cache(maxsize=1024)
def _labels(texts: tuple[str, ...]) -> pa.Array:
    """The dictionary of a batch's ``_log_file`` or ``_absent``: the same few for every batch
    of a file or layout, made once (Arrow arrays are immutable)."""
    return strings(list(texts))


def _no_absent(n: int, names: list[str]) -> pa.Array:
    """``_absent`` of ``n`` rows that hold every column: empty lists."""
    values = pa.DictionaryArray.from_arrays(pa.nulls(0, pa.int16()), _labels(tuple(names)))
    return pa.ListArray.from_arrays(numbers(np.zeros(n + 1, np.int32)), values, type=ABSENT_TYPE)


def _absent_lists(absent: np.ndarray, names: list[str]) -> pa.Array:
    """``_absent`` from the (ncols, n) mask at once: list<dictionary<int16, string>>, two
    bytes per absent column (a MINIMAL image of a wide table has thousands)."""
    by_row = absent.T  # (n, ncols), a view
    offsets = np.zeros(len(by_row) + 1, np.int32)
    if absent.any():
        np.cumsum(np.count_nonzero(by_row, axis=1), out=offsets[1:])
    # row-major boolean selection from a broadcast row of column numbers: no index arrays
    cols = np.broadcast_to(np.arange(by_row.shape[1], dtype=np.int16), by_row.shape)[by_row]
    values = pa.DictionaryArray.from_arrays(numbers(cols, pa.int16()), _labels(tuple(names)))
    return pa.ListArray.from_arrays(numbers(offsets), values, type=ABSENT_TYPE)


def _json_diff_lists(diffs: dict[int, list[tuple[str, JsonDiff]]], n: int) -> pa.Array:
    """``_json_diffs``: the (column, diff) pairs of each row; empty lists where there are none."""
    counts = np.zeros(n, np.int32)
    for r, ds in diffs.items():
        counts[r] = len(ds)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    flat = [pair for r in sorted(diffs) for pair in diffs[r]]
    values = pa.StructArray.from_arrays(
        [strings([c for c, _ in flat]), strings([d.operation for _, d in flat]),
         strings([d.path for _, d in flat]), strings([d.value for _, d in flat])],
        fields=list(JSON_DIFF),
    )
    return pa.ListArray.from_arrays(numbers(offsets), values, type=JSON_DIFFS_FIELD.type)
