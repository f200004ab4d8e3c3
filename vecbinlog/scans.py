"""A table read for a query engine: the filters its query pushes into the read, and the read
planned with them (:class:`TableScan`).

A query's filters on the metadata columns become, as far as each can (:class:`Pushdown`):

============================  =====================================================================
``_commit_timestamp``         ``since``/``until`` (the rows event's header time, whole seconds: a
(``<``, ``<=``, ``>``,        bound of microseconds is rounded to the seconds that keep the same
``>=``, ``==``, ``in``)       rows); with an archive index, the files none of whose rows events
                              of the table can be in them are not read (their least and greatest
                              times); without one, rows events outside are never decoded
``_gtid`` (``==``, ``in``)    ``gtids=``: with an index, the files that hold none of them not read
``_change_type``              ``change_types`` (``update_preimage`` and ``update_postimage``
(``==``, ``in``)              are updates)
``_log_file`` (comparisons,   the files whose names cannot match are not read
``in``, ``starts_with``)
``_log_pos`` (comparisons,    the splits (ranges that start at transactions) that cannot hold a
``in``)                       rows event at such an offset are not read
``_outcome`` (``==``, ``in``) nothing read less (``rolled_back`` decides what is left out)
============================  =====================================================================

and every one of them filters the rows exactly as well (:meth:`Pushdown.filter`): the read's
own filters only leave out what cannot match, so an engine that hands a filter to the read
need not check it again (Spark's ``pushFilters``). A filter on another column stays the
engine's. The Spark source (:mod:`vecbinlog.spark.source`), :mod:`vecbinlog.polars` and
:mod:`vecbinlog.duckdb` translate their engine's filters to :class:`Bound` s.

Comparisons follow the engines' rules: strings by their UTF-8 bytes (Python's order of code
points is the same), a null (``_gtid`` of a transaction without one) never matches a
comparison, times are instants (a bound without a time zone is not taken: it is the engine's).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Generator, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrowbuild import numbers, scalar, strings
from .arrowstream import closing_reader
from .binlog.gtid import GtidSet
from .binlog.locations import name_of
from .decode.tableplan import TablePlan
from .errors import TableNotFoundError
from .index import index_history
from .log.config import ReadConfig, RowsFilter
from .log.versions import SchemaHistory
from .reader import Binlog
from .splits import DEFAULT_SPLIT_BYTES, Split, plan_splits, read_splits, with_history
from .streaming import archive_files

__all__ = ["Bound", "Pushdown", "TableScan", "plan_read", "PUSHABLE", "OPS"]

#: the metadata columns whose filters a read answers
PUSHABLE = ("_commit_timestamp", "_log_file", "_log_pos", "_change_type", "_outcome", "_gtid")
#: the operators of a :class:`Bound`
OPS = ("==", "!=", "<", "<=", ">", ">=", "in", "is_null", "not_null", "starts_with")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_STRINGS = ("_log_file", "_change_type", "_outcome", "_gtid")
#: the change types of ``_change_type`` -> the ``change_types`` option that reads them
_CHANGE_OPTION = {"insert": "insert", "update_preimage": "update", "update_postimage": "update", "delete": "delete"}


def _micros(value: Any) -> int | None:
    """A point in time as microseconds since the epoch; None for a time without a zone (the
    instant it means is the engine's to say) or anything else."""
    if isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() is not None:
        return (value - _EPOCH) // timedelta(microseconds=1)
    return None


@dataclass(frozen=True)
class Bound:
    """One filter a read answers: ``column op value`` (``value``: an int for ``_log_pos``,
    microseconds since the epoch for ``_commit_timestamp``, a str for the others; a tuple of
    them for ``in``; None for ``is_null``/``not_null``)."""

    column: str
    op: str
    value: Any = None

    @classmethod
    def make(cls, column: str, op: str, value: Any = None) -> Bound | None:
        """The bound of an engine's filter, or None when a read cannot answer it exactly (another
        column, a value of another type, a time without a zone): the engine keeps it."""
        if column not in PUSHABLE or op not in OPS:
            return None
        if op in ("is_null", "not_null"):
            return cls(column, op)
        values = tuple(value) if op == "in" else (value,)
        if op == "starts_with" and column not in _STRINGS:
            return None
        converted: tuple[Any, ...]  # (None where a value is not of the column's type)
        if column == "_commit_timestamp":
            converted = tuple(_micros(v) for v in values)
        elif column == "_log_pos":
            converted = tuple(v if isinstance(v, int) and not isinstance(v, bool) else None for v in values)
        else:
            converted = tuple(v if isinstance(v, str) else None for v in values)
        if not converted or None in converted:
            return None
        return cls(column, op, converted if op == "in" else converted[0])

    def __str__(self) -> str:
        value = self.value
        if self.column == "_commit_timestamp":
            def shown(v: int) -> str:
                return (_EPOCH + timedelta(microseconds=v)).isoformat()
            value = tuple(map(shown, value)) if self.op == "in" else shown(value)
        return f"{self.column} {self.op}" + ("" if self.op in ("is_null", "not_null") else f" {value!r}")

    # -- what a value of the column it holds -----------------------------------------------------
    def holds(self, v: Any) -> bool:
        """Whether the value ``v`` (not null) of the column passes (a file's name)."""
        op, x = self.op, self.value
        return {"==": lambda: v == x, "!=": lambda: v != x, "<": lambda: v < x, "<=": lambda: v <= x,
                ">": lambda: v > x, ">=": lambda: v >= x, "in": lambda: v in x, "not_null": lambda: True,
                "is_null": lambda: False, "starts_with": lambda: v.startswith(x)}[op]()

    def span(self) -> tuple[int | None, int | None]:
        """``[lo, hi)`` of the integers (offsets, microseconds) this bound may keep (None: unbounded)."""
        op, x = self.op, self.value
        if op == "in":
            return (min(x), max(x) + 1) if x else (0, 0)
        return {"==": (x, x + 1), "<": (None, x), "<=": (None, x + 1), ">": (x + 1, None),
                ">=": (x, None)}.get(op, (None, None))

    def mask(self, col: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
        """The rows of ``col`` (this bound's column) that pass; null where the filter is null."""
        if pa.types.is_dictionary(col.type):  # the few values of the dictionary, then each row's
            chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
            parts = [self.mask(c.dictionary).take(c.indices) for c in chunks]
            return pa.chunked_array(parts, pa.bool_()) if isinstance(col, pa.ChunkedArray) else parts[0]
        if self.op == "is_null":
            return pc.is_null(col)
        if self.op == "not_null":
            return pc.is_valid(col)
        if self.op == "starts_with":
            return pc.starts_with(col, pattern=self.value)
        if self.op == "in":
            values = strings(list(self.value)) if self.column in _STRINGS else numbers(np.array(self.value, np.int64),
                                                                                        col.type)
            return pc.is_in(col, value_set=values)  # (a null: False, where the engines say null: dropped alike)
        value = scalar(self.value, col.type)
        return {"==": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
                ">=": pc.greater_equal}[self.op](col, value)


@dataclass(frozen=True)
class Pushdown:
    """The filters a query pushes into a read of one table (all of them hold: a conjunction)."""

    bounds: tuple[Bound, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.bounds)

    def __str__(self) -> str:
        return " AND ".join(map(str, self.bounds)) or "none"

    def _of(self, column: str) -> list[Bound]:
        return [b for b in self.bounds if b.column == column]

    @property
    def columns(self) -> list[str]:
        """The columns the bounds are on, once each."""
        return list(dict.fromkeys(b.column for b in self.bounds))

    def _span(self, column: str) -> tuple[int | None, int | None]:
        lo, hi = None, None
        for b in self._of(column):
            a, z = b.span()
            lo = a if lo is None else lo if a is None else max(lo, a)
            hi = z if hi is None else hi if z is None else min(hi, z)
        return lo, hi

    def _equal_to(self, column: str) -> set[str] | None:
        """The values an ``==``/``in`` of ``column`` leaves (None: no such bound)."""
        left: set[str] | None = None
        for b in self._of(column):
            if b.op in ("==", "in"):
                values = set(b.value) if b.op == "in" else {b.value}
                left = values if left is None else left & values
        return left

    @property
    def empty(self) -> bool:
        """No row can pass (an empty range of times or offsets, a change type that is none)."""
        for column in ("_commit_timestamp", "_log_pos"):
            lo, hi = self._span(column)
            if lo is not None and hi is not None and lo >= hi:
                return True
        kinds = self._equal_to("_change_type")
        return kinds is not None and not (kinds & _CHANGE_OPTION.keys())

    def config(self, config: ReadConfig) -> ReadConfig:
        """``config`` with the row filters the bounds give (``since``, ``until``, ``change_types``,
        ``gtids``): what they leave out is never decoded, and with an index not read."""
        narrow: dict[str, Any] = {}
        lo, hi = self._span("_commit_timestamp")  # microseconds -> the whole seconds of the same rows
        if lo is not None:
            narrow["since"] = _EPOCH + timedelta(seconds=-(-lo // 1_000_000))
        if hi is not None:
            narrow["until"] = _EPOCH + timedelta(seconds=-(-hi // 1_000_000))
        kinds = self._equal_to("_change_type")
        if kinds is not None and kinds & _CHANGE_OPTION.keys():
            narrow["change_types"] = sorted({_CHANGE_OPTION[k] for k in kinds & _CHANGE_OPTION.keys()})
        gtids = self._equal_to("_gtid")
        if gtids:
            try:
                narrow["gtids"] = GtidSet(",".join(sorted(gtids)))
            except ValueError:  # not GTID texts: no row has them, the exact filter says so
                pass
        return config.with_filters(**narrow) if narrow else config

    def keeps(self, split: Split) -> bool:
        """Whether ``split`` may hold a row that passes (by its file's name and its offsets)."""
        name = name_of(split.path)
        if not all(b.holds(name) for b in self._of("_log_file")):
            return False
        lo, hi = self._span("_log_pos")
        return (hi is None or split.start < hi) and (lo is None or split.stop is None or lo < split.stop)

    def filter(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows of ``batch`` that pass every bound (a row whose filter is null does not)."""
        if not self.bounds or not batch.num_rows:
            return batch
        keep = None
        for b in self.bounds:
            m = b.mask(batch.column(b.column))
            keep = m if keep is None else pc.and_kleene(keep, m)
        return batch.filter(keep, null_selection_behavior="drop")


# -- the read planned ------------------------------------------------------------------------------
def plan_read(paths: Sequence[str], table: str, config: ReadConfig, *, index: Any = None,
              pushdown: Pushdown = Pushdown(), split_bytes: int = DEFAULT_SPLIT_BYTES,
              history: SchemaHistory | None = None) -> tuple[TablePlan, list[Split], SchemaHistory]:
    """The plan of ``table`` in the files ``paths`` (log order) and the splits a read of it with
    ``pushdown`` reads: with an archive ``index`` (where the files are not read to plan), only
    the ranges of the table's rows events, in the files that may hold rows in the read's times
    and GTIDs; without one, every file's (walked once, for the plan and the splits: pass the
    ``history`` a plan returned to plan again without a walk). Either way, the splits the bounds
    on ``_log_file``/``_log_pos`` leave out are not read. Returns (plan, splits, history).

    Raises :class:`~vecbinlog.TableNotFoundError` when the files have no rows events of ``table``.
    """
    config = pushdown.config(config)
    f = config.filter
    config = config.replace(filter=dataclasses.replace(f, tables=RowsFilter.make(table).tables))
    fs = config.filesystem
    if history is None and index is not None:
        history = index_history(list(paths), index, config, filesystem=fs)
    elif history is None:
        with Binlog(list(paths), config) as log:
            history = log.history()
    plan = history.plans.get(table)
    if plan is None:
        raise TableNotFoundError(f"{table!r} has no rows events in {', '.join(paths)}", table=table,
                                 tables=list(history.plans))
    if pushdown.empty:
        return plan, [], history
    if index is not None:  # (the config's filter: this table, the times and GTIDs pushed down)
        splits = with_history(plan_splits(list(paths), split_bytes, config, index=index), history)
    else:
        splits = plan_splits(list(paths), split_bytes, config, history=history)
    return plan, [s for s in splits if pushdown.keeps(s)], history


def _returned(config: ReadConfig, plan: TablePlan, table: str) -> pa.Schema:
    schema = plan.schema
    names = config.project(schema)
    if config.columns is not None and len(names) < len(config.columns):
        missing = [c for c in config.columns if c not in schema.names]
        raise ValueError(f"columns: {table} has no column {', '.join(map(repr, missing))}; its columns: "
                         f"{', '.join(schema.names)}")
    return pa.schema([schema.field(n) for n in names], metadata=schema.metadata)


@dataclass
class TableScan:
    """A table's change log as a query engine reads it: planned once (:func:`plan_read`, its
    schema known before any row is read), read anew each time a stream of it is asked for
    (:meth:`reader`, the Arrow PyCapsule stream ``__arrow_c_stream__`` that DuckDB, Polars,
    DataFusion and pyarrow consume), a batch at a time in log order, each batch fitted to the
    plan and filtered by the pushdown's bounds exactly.

    Made by :func:`vecbinlog.duckdb.scan` (and :func:`vecbinlog.polars.scan` for each query).
    """

    paths: list[str]
    table: str
    config: ReadConfig
    index: Any = None
    pushdown: Pushdown = field(default_factory=Pushdown)
    history: SchemaHistory | None = None
    split_bytes: int = DEFAULT_SPLIT_BYTES  #: the size of the ranges the read is planned in

    def __post_init__(self) -> None:
        self.plan, self.splits, self.history = plan_read(self.paths, self.table, self.config, index=self.index,
                                                         pushdown=self.pushdown, history=self.history,
                                                         split_bytes=self.split_bytes)
        self.schema = _returned(self.config, self.plan, self.table)

    @classmethod
    def of(cls, files: Any, table: str, *, index: Any = None, pushdown: Pushdown = Pushdown(),
           **options: Any) -> TableScan:
        """The scan of ``table`` in ``files`` (a folder, a glob, a ``mysql-bin.index``, files: as
        the Spark source takes them), with the options of :func:`vecbinlog.open`."""
        config = ReadConfig.build(**options)
        return cls(archive_files(files if isinstance(files, str) else list(map(str, files)), config.filesystem),
                   table, config, index, pushdown)

    @property
    def bytes(self) -> int | None:
        """The binlog bytes the read walks (None: a compressed file of unknown size among them)."""
        sizes = [s.size for s in self.splits]
        known = [s for s in sizes if s is not None]
        return sum(known) if len(known) == len(sizes) else None

    def __repr__(self) -> str:
        return (f"<vecbinlog scan of {self.table}: {len(self.splits)} split(s) of {len(self.paths)} file(s); "
                f"pushed: {self.pushdown}>")

    def batches(self, *, split_by_split: bool = False) -> Generator[pa.RecordBatch, None, None]:
        """The batches of a read (in the plan's schema, filtered), one at a time; closing the
        generator ends the read (its files closed).

        ``split_by_split``: the splits are read a group at a time (of ``split_bytes`` or one
        split), each group whole, its files closed, before its batches are handed out: a
        consumer that stops pulling without closing the generator (Polars) holds decoded
        batches (a group's, of the columns asked for), never an open file or a thread's work."""
        config = self.config
        if config.columns is not None:  # the columns the bounds filter on are read too
            config = config.replace(columns=tuple(dict.fromkeys([*config.columns, *self.pushdown.columns])))
        config = self.pushdown.config(config)
        for splits in (self._groups() if split_by_split else [self.splits]):
            read = read_splits(splits, [self.table], config, project=False)
            try:
                if split_by_split:
                    batches = list(self._fitted(read))[::-1]
                    read.close()
                    while batches:  # (each let go of once handed out)
                        yield batches.pop()
                else:
                    yield from self._fitted(read)
            finally:
                read.close()

    def _groups(self) -> list[list[Split]]:
        """The splits in groups of about ``split_bytes`` (those that follow one another are read
        in one walk: small files cost what one does), a split of unknown size alone."""
        groups: list[list[Split]] = []
        size = self.split_bytes
        for split in self.splits:
            if split.size is None or size + split.size > self.split_bytes:
                groups.append([])
                size = 0
            groups[-1].append(split)
            size += split.size or self.split_bytes
        return groups

    def _fitted(self, read: Iterator[tuple[str, pa.RecordBatch]]) -> Iterator[pa.RecordBatch]:
        """The batches of this table in ``read``, fitted to the plan's schema and filtered."""
        schema = self.schema
        for name, batch in read:
            if name != self.table:
                continue
            fitted = self.pushdown.filter(self.plan.conform(batch))
            del batch
            if fitted.num_rows:
                yield pa.RecordBatch.from_arrays([fitted.column(n) for n in schema.names], schema=schema)
            del fitted

    def reader(self) -> pa.RecordBatchReader:
        """A new read, as a ``pyarrow.RecordBatchReader`` (closing or dropping it ends the read)."""
        return closing_reader(self.schema, self.batches())

    def read_all(self) -> pa.Table:
        """Every row of a read, as one table."""
        return self.reader().read_all()

    def __arrow_c_schema__(self) -> Any:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """A new read as an Arrow C stream (the PyCapsule interface): its consumer's release ends it."""
        return self.reader().__arrow_c_stream__(requested_schema)

