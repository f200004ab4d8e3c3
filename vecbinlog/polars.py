"""Polars: a binlog table as a ``polars.LazyFrame`` (``pip install vecbinlog[polars]``).

:func:`scan` registers the table as a Polars IO source (``polars.io.plugins.register_io_source``):
its schema is the table's plan (known before any row is read, from the archive index when one is
given); for each query Polars hands the source the columns it needs, its predicate, ``n_rows``
and a batch size, and the source

* reads only the columns asked for (and those the predicate needs): ``columns=``;
* turns the predicate's conjunctions of comparisons on ``_commit_timestamp``, ``_log_file``,
  ``_log_pos``, ``_gtid``, ``_change_type`` and ``_outcome`` into the read's own filters
  (:class:`vecbinlog.scans.Pushdown`: files and ranges left out with the index, rows events
  never decoded without it), found in the predicate's serialized tree; a predicate it cannot
  read pushes nothing;
* filters each batch by the whole predicate itself, so the rows are exactly those Polars asks for;
* stops the read once ``n_rows`` rows are out (``head``, ``limit``).

A query that stops before the end (``head``: ``n_rows``) ends the read, its files closed.
Polars (2.1) may keep a source it stopped pulling without closing it (a ``limit`` after a
filter, a dropped ``collect_batches()``), and go on pulling it in its own threads after the
query has returned: so a read without ``n_rows`` takes :data:`SPLIT_BYTES` of binlog at a
time, read whole, its files closed before its batches go to Polars (a source kept holds
decoded batches, never an open file or a running task). A Polars thread inside Python when
the interpreter exits aborts the process ("FATAL: exception not rethrown", a plain Python
source too): at exit, before the interpreter finalizes, every source of this module stops and
the steps under way are waited for (:class:`_Pulls`), so the process exits cleanly.

Types are those of ``pl.from_arrow`` of the Arrow batches (dictionaries as ``Categorical``), but
``decimal256`` (MySQL DECIMAL of more than 38 digits), which Polars has no type for: its exact
decimal text.
"""

from __future__ import annotations

import atexit
import inspect
import json
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Generator, Iterator

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from .arrowbuild import decimal_text
from .scans import Bound, Pushdown, TableScan

__all__ = ["scan", "pushed"]

#: binlog bytes a query's read takes at a time, read whole, its files closed, before its batches go
#: to Polars: Polars may keep a source it stopped pulling (a ``limit`` after a filter, a dropped
#: ``collect_batches()``) without closing it; then it holds decoded batches, not open files
SPLIT_BYTES = 16 << 20

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: Polars' binary operators (its serialized expressions) -> a Bound's
_OPS = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_TIME_UNITS = {"Microseconds": 1, "Milliseconds": 1000}


def scan(files: Any, table: str, *, index: Any = None, **options: Any) -> pl.LazyFrame:
    """The change log of ``table`` in ``files`` as a LazyFrame: its columns, filters and row
    limits pushed into the read.

    Parameters
    ----------
    files : a folder, a glob, a ``mysql-bin.index``, a file or a list of them, in log order
        (local paths or URIs, as the Spark source takes them).
    table : ``db.table``.
    index : an archive index location (:func:`vecbinlog.build_index`): the schema comes from it
        (no binlog is read until a query runs), and a query's bounds on ``_commit_timestamp``
        or ``_gtid`` read only the files that may hold such rows.
    **options : those of :func:`vecbinlog.open` (``since``, ``columns``, ``filesystem``...).

    Examples
    --------
    >>> import polars as pl, vecbinlog.polars                                   # doctest: +SKIP
    >>> orders = vecbinlog.polars.scan("archive/", "shop.orders", index="archive-index/")
    >>> (orders.filter(pl.col("_commit_timestamp") >= datetime(2026, 11, 21, tzinfo=timezone.utc))
    ...        .group_by("status").len().collect())
    """
    base = TableScan.of(files, table, index=index, **options)  # the plan, once (with an index: from it)
    schema = dict(_frame(base.schema.empty_table()).schema)

    def source(with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None,
               batch_size: int | None) -> Iterator[pl.DataFrame]:
        wanted = list(with_columns) if with_columns is not None else list(schema)
        needed = wanted + [c for c in (predicate.meta.root_names() if predicate is not None else []) if c not in wanted]
        needed = needed or list(schema)[:1]  # (rows counted without a column: one read to count them)
        read = TableScan(base.paths, table, base.config.replace(columns=tuple(needed)), index, pushed(predicate),
                         base.history, split_bytes=SPLIT_BYTES)
        batches = read.batches(split_by_split=n_rows is None)  # (with n_rows the source ends the read itself)
        left = n_rows
        try:
            for batch in _PULLS.guarded(batches):
                frame = _frame(batch)
                del batch
                if predicate is not None:
                    frame = frame.filter(predicate)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                if frame.height:
                    yield frame.select(wanted)
                if left == 0:
                    return
        finally:
            batches.close()

    named: dict[str, Any] = {"explain_name": "vecbinlog",
             "explain_detail": f"{table} in {len(base.paths)} file(s)" + (", indexed" if index else "")}
    if not set(named) <= set(inspect.signature(register_io_source).parameters):  # (Polars before 1.3x)
        named = {}
    return register_io_source(source, schema=schema, **named)


class _Pulls:
    """The batches Polars' threads pull from this module's sources, stopped at exit.

    Polars may go on pulling a source from its own threads after the query that started it
    has returned, and a Polars thread that takes the GIL once the interpreter finalizes is ended
    by Python (``PyThread_exit_thread``), which Polars' runtime turns into an abort. So at exit
    (a ``threading`` exit hook: other threads may still take the GIL, the thread pools still
    run) every source ends its stream at its next step, and the exit waits until no step is
    under way and none has begun or ended for ``quiet`` seconds (Polars' thread, between two
    steps, asks for the next one and is told the stream ended; after the end, it lets go of the
    stream); at most ``timeout`` seconds. A process whose streams have been still for
    ``quiet`` seconds does not wait."""

    def __init__(self, quiet: float = 0.1, timeout: float = 30.0) -> None:
        self.quiet, self.timeout = quiet, timeout
        self.exiting = False
        self.under_way = 0  # steps (a batch being made) under way
        self.last = 0.0  # time.monotonic() of the last step begun or ended
        self.changed = threading.Condition()

    def guarded(self, batches: Iterator[pa.RecordBatch]) -> Generator[pa.RecordBatch, None, None]:
        """``batches`` until they end or the process exits."""
        while True:
            with self.changed:
                if self.exiting:
                    return
                self._step(+1)
            try:
                batch = next(batches, None)
            finally:
                with self.changed:
                    self._step(-1)
            if batch is None or self.exiting:
                return
            yield batch

    def _step(self, change: int) -> None:
        self.under_way += change
        self.last = time.monotonic()
        self.changed.notify_all()

    def stop(self) -> None:
        """End every source's stream; wait for the steps under way and those about to begin."""
        deadline = time.monotonic() + self.timeout
        with self.changed:
            self.exiting = True
            while time.monotonic() < deadline:
                if not self.under_way and time.monotonic() - self.last >= self.quiet:
                    return
                self.changed.wait(self.quiet / 4)


_PULLS = _Pulls()
# (threading's exit hooks run in reverse order of registration: this one before
# concurrent.futures', while the pools the steps under way wait for still run)
getattr(threading, "_register_atexit", atexit.register)(_PULLS.stop)


def _frame(data: pa.RecordBatch | pa.Table) -> pl.DataFrame:
    """``pl.from_arrow`` of :func:`_polars_form` of ``data``: a DataFrame (its type says DataFrame | Series)."""
    frame = pl.from_arrow(_polars_form(data))
    assert isinstance(frame, pl.DataFrame)
    return frame


def _polars_form(data: pa.RecordBatch | pa.Table) -> pa.RecordBatch | pa.Table:
    """``data`` with its ``decimal256`` columns as their decimal text (Polars has no such type)."""
    for i, f in enumerate(data.schema):
        if pa.types.is_decimal256(f.type):
            col = data.column(i)
            text = decimal_text(col) if isinstance(col, pa.Array) else pa.chunked_array(
                [decimal_text(c) for c in col.chunks], pa.string())
            data = data.set_column(i, f.with_type(pa.string()), text)
    return data


# -- the predicate's bounds --------------------------------------------------------------------
def pushed(predicate: pl.Expr | None) -> Pushdown:
    """The bounds of a Polars predicate a read answers (:class:`~vecbinlog.scans.Bound`): those of
    its top-level conjunction that compare a metadata column with a literal; none when its
    serialized form cannot be read (the predicate is still applied whole)."""
    if predicate is None:
        return Pushdown()
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # (a form this version cannot serialize: nothing pushed)
        return Pushdown()
    out = []
    for term in _conjuncts(tree):
        try:
            out.extend(_bounds(term))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, pa.ArrowException):
            continue  # a form not known: not pushed
    return Pushdown(tuple(b for b in out if b is not None))


def _conjuncts(node: Any) -> list[Any]:
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary is not None and binary.get("op") in ("And", "LogicalAnd"):
        return _conjuncts(binary["left"]) + _conjuncts(binary["right"])
    return [node]


def _column(node: Any) -> str | None:
    return node.get("Column") if isinstance(node, dict) and isinstance(node.get("Column"), str) else None


_NOT_A_LITERAL = object()


def _literal(node: Any) -> Any:
    """The Python value of a literal node (an aware datetime for a time with a zone), else _NOT_A_LITERAL."""
    lit = node.get("Literal") if isinstance(node, dict) else None
    if not isinstance(lit, dict):
        return _NOT_A_LITERAL
    (kind, inner), = lit.items()
    what: str | None
    value: Any
    (what, value), = inner.items() if isinstance(inner, dict) else ((None, None),)
    if kind == "Dyn" and what == "Int" or kind == "Scalar" and what in ("Int64", "Int32", "UInt32", "UInt64", "Int16"):
        return int(value)
    if what == "String" or kind == "Dyn" and what == "Str":
        return str(value)
    if what == "Datetime":
        number, unit, zone = value
        if zone is None or unit not in _TIME_UNITS:  # no zone: not an instant; nanoseconds: not exact here
            return _NOT_A_LITERAL
        return _EPOCH + timedelta(microseconds=int(number) * _TIME_UNITS[unit])
    if what == "List":  # an Arrow IPC stream of the list's values
        return tuple(pa.ipc.open_stream(bytes(value)).read_all().column(0).to_pylist())
    return _NOT_A_LITERAL


def _bounds(node: Any) -> list[Bound | None]:
    """The bounds of one conjunct: a comparison, ``is_in``, ``is_between``, ``is_null``,
    ``is_not_null``, ``str.starts_with`` of a column and literals."""
    binary = node.get("BinaryExpr")
    if binary is not None:
        op = _OPS.get(binary["op"])
        left, right = binary["left"], binary["right"]
        if op is None:
            return []
        if (name := _column(left)) is not None and _literal(right) is not _NOT_A_LITERAL:
            return [Bound.make(name, op, _literal(right))]
        if (name := _column(right)) is not None and _literal(left) is not _NOT_A_LITERAL:
            return [Bound.make(name, _FLIPPED[op], _literal(left))]
        return []
    function = node.get("Function")
    if function is None:
        return []
    args, what = function["input"], function["function"]
    column = _column(args[0])
    values = [_literal(a) for a in args[1:]]
    if column is None or any(v is _NOT_A_LITERAL for v in values):
        return []
    if what == {"Boolean": "IsNull"}:
        return [Bound.make(column, "is_null")]
    if what == {"Boolean": "IsNotNull"}:
        return [Bound.make(column, "not_null")]
    if what == {"StringExpr": "StartsWith"}:
        return [Bound.make(column, "starts_with", values[0])]
    if isinstance(what, dict) and isinstance(what.get("Boolean"), dict):
        (name, how), = what["Boolean"].items()
        if name == "IsIn" and isinstance(values[0], tuple) and None not in values[0]:
            return [Bound.make(column, "in", values[0])]
        if name == "IsBetween":
            closed = how["closed"]
            return [Bound.make(column, ">=" if closed in ("Both", "Left") else ">", values[0]),
                    Bound.make(column, "<=" if closed in ("Both", "Right") else "<", values[1])]
    return []
