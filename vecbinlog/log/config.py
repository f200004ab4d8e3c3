"""The options of a read, checked once: :class:`ReadConfig`, built by :func:`vecbinlog.open`.

A read's options come as keyword arguments (``vecbinlog.open(path, since=..., threads=2)``), as
text (Spark's ``.option("since", "2026-11-21")``, the command line), or from a config already
built (a Spark task, a split read alone). Each form ends here, in one frozen object that the
stages below read and never change: the walk (segments, DDL), the batch reader (filters,
outcomes, threads) and the decoders (signedness, charsets, names).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeGuard

import numpy as np
import pyarrow as pa

from ..binlog.file import DEFAULT_MAX_EVENT_BYTES, DEFAULT_SEGMENT_BYTES, BinlogFile
from ..binlog.gtid import GtidSet
from ..binlog.headers import ROWS_KIND, EventIndex
from ..binlog.sources import ByteSource, MemorySource, NewestPath
from ..decode.decoders import DecodeOptions
from ..decode.rows import MAX_BATCH_IMAGES
from ..decode.tableplan import METADATA_NAMES
from ..options import WhenLike, byte_offset, change_kinds, epoch
from ..pools import TaskGroup
from ..tables.tracker import SchemaSource, load_schema
from .logset import InMemory

if TYPE_CHECKING:  # the DDL modules: imported by the first statement that needs them
    from ..tables.ddl import TableDef

__all__ = ["ReadConfig", "RowsFilter", "TableOptions", "default_threads", "MAX_DEFAULT_THREADS", "ROW_FILTERS",
           "THREADED_READ_BYTES"]

#: ``threads`` by default: the CPUs this process may use, at most this many (beyond, the
#: reading thread's walk is what a read waits for)
MAX_DEFAULT_THREADS = 4


#: a read of fewer binlog bytes than this, with ``threads`` not given, decodes in its own thread:
#: below it, a second thread does not pay for its hand-offs and turns at the GIL. Random shapes
#: (seeds 20261128, 20261129: 60 cases, threads=2 against 1, best of 4): under 48 MB none read
#: more than 4% faster with two threads and some 5-9% slower; above it, 0.96-1.46x
#: (docs/speed.md, "Threads")
THREADED_READ_BYTES = 48 << 20


def default_threads() -> int:
    """The CPUs this process may use (its affinity where the OS has one), at most
    :data:`MAX_DEFAULT_THREADS`."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cpus, MAX_DEFAULT_THREADS)


@dataclass(frozen=True)
class RowsFilter:
    """Which rows events to decode; everything else is walked over, never decoded.

    * ``tables``: ``db.table`` glob patterns (``"shop.*"``); a table matching any is kept.
    * ``start``/``stop``: byte offsets, as ``mysqlbinlog --start-position/--stop-position``:
      ``start`` applies to the first file, ``stop`` to the last; a rows event is kept when it
      starts at or after ``start`` and before ``stop``.
    * ``since``/``until``: datetimes (naive ones are UTC): rows events whose header timestamp
      is at or after ``since`` and before ``until``, as ``--start-datetime/--stop-datetime``.
    * ``change_types``: some of ``"insert"``, ``"update"``, ``"delete"``.
    """

    tables: tuple[str, ...] | None = None
    start: int | None = None
    stop: int | None = None
    since: int | None = None  #: seconds since the epoch
    until: int | None = None
    kinds: frozenset[int] | None = None

    @classmethod
    def make(cls, tables: str | Iterable[str] | None = None, start: int | None = None, stop: int | None = None,
             since: WhenLike | None = None, until: WhenLike | None = None,
             change_types: str | Iterable[str] | None = None) -> RowsFilter:
        """The filter of the options of :class:`~vecbinlog.Binlog`, checked and normalised."""
        if isinstance(tables, str):
            tables = (tables,)
        if tables is not None and not all(isinstance(t, str) for t in tables):
            raise TypeError(f"tables: db.table glob patterns (str), not {tables!r}")
        return cls(
            tables=None if tables is None else tuple(tables), start=byte_offset(start, "start"),
            stop=byte_offset(stop, "stop"), since=epoch(since, "since"), until=epoch(until, "until"),
            kinds=change_kinds(change_types),
        )

    def table(self, name: str) -> bool:
        """Whether the ``tables`` patterns keep table ``name``."""
        return self.tables is None or any(fnmatch.fnmatchcase(name, pat) for pat in self.tables)

    def events(self, index: EventIndex, *, first: bool, last: bool, at: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the events (rows events, in practice) the filter keeps: of every
        event of ``index``, or of those at positions ``at``."""
        def col(name: str) -> np.ndarray:
            values = getattr(index, name)
            return values if at is None else values[at]

        keep = np.ones(len(index) if at is None else len(at), bool)
        if first and self.start is not None:
            keep &= col("pos") >= self.start  # file offsets (of the compressed event, for unpacked ones)
        if last and self.stop is not None:
            keep &= col("pos") < self.stop
        if self.since is not None:
            keep &= col("timestamp").astype(np.int64) >= self.since
        if self.until is not None:
            keep &= col("timestamp").astype(np.int64) < self.until
        if self.kinds is not None:
            kind = ROWS_KIND[col("type_code")]
            keep &= np.isin(kind, list(self.kinds)) | (kind < 0)
        return keep


def _unsigned_flag(column: str, value: bool | str) -> bool:
    """``signedness=`` values: True/"unsigned" or False/"signed"; anything else is a mistake."""
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("unsigned", "signed"):
        return str(value).lower() == "unsigned"
    raise ValueError(f"signedness for {column!r} must be 'unsigned', 'signed', True or False, not {value!r}")


@dataclass(frozen=True)
class TableOptions:
    """The decoding options of each table: ``signedness``, ``charsets`` and ``names`` by
    ``db.table`` (``"*"``: every table), ``invalid_dates``, and whether ``_query`` is added."""

    signedness: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)
    charsets: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    invalid_dates: str = "null"
    queries: bool = False

    @classmethod
    def make(cls, signedness: Mapping[str, Mapping[str, Any]] | None = None,
             charsets: Mapping[str, Mapping[str, str]] | None = None,
             names: Mapping[str, Sequence[str]] | None = None, invalid_dates: str = "null",
             queries: bool = False) -> TableOptions:
        """The options as :class:`~vecbinlog.Binlog` takes them, checked (a bad signedness
        value or ``invalid_dates`` is a ValueError now, not at the first batch)."""
        if invalid_dates not in ("null", "string"):
            raise ValueError(f"invalid_dates must be 'null' or 'string', not {invalid_dates!r}")
        for what, given in (("signedness", signedness), ("charsets", charsets), ("names", names)):
            if given is not None and not isinstance(given, Mapping):
                raise TypeError(f"{what}: a dict by 'db.table', not {type(given).__name__}")
        sign = {t: {c: _unsigned_flag(c, v) for c, v in cols.items()} for t, cols in (signedness or {}).items()}
        return cls(sign, dict(charsets or {}), {k: tuple(v) for k, v in (names or {}).items()}, invalid_dates,
                   bool(queries))

    def of(self, table: str, flavor: str, deferred_text: bool = False) -> DecodeOptions:
        """The DecodeOptions of ``table`` in a file of server ``flavor`` (``deferred_text``:
        see :attr:`~vecbinlog.decode.decoders.common.DecodeOptions.deferred_text`)."""
        def pick(d: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
            return {**d.get("*", {}), **d.get(table, {})}

        return DecodeOptions(signedness=pick(self.signedness), charsets=pick(self.charsets),
                             names=self.names.get(table), flavor=flavor, invalid_dates=self.invalid_dates,
                             deferred_text=deferred_text)


@dataclass(frozen=True)
class ReadConfig:
    """Every option of a read, checked and normalised once (:meth:`build`); the stages read
    it and never change it. The options themselves are documented on :class:`vecbinlog.Binlog`
    (and in docs/api.md)."""

    filter: RowsFilter = RowsFilter()
    decoding: TableOptions = TableOptions()
    strict: bool = False
    verify_checksums: bool = True
    filesystem: Any = None
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    batch_rows: int = MAX_BATCH_IMAGES
    threads: int = 1
    #: ``threads`` was not given: a small read uses one (:meth:`for_sizes`)
    auto_threads: bool = False
    rolled_back: str = "exclude"
    non_transactional: tuple[str, ...] = ()
    gtids: GtidSet | None = None
    #: ``schema=``, parsed: table definitions by ``db.table`` (or a bare table name)
    schema: Mapping[str, TableDef] = field(default_factory=dict)
    ddl: bool = True
    progress: bool | Mapping[str, Any] = False
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    #: the columns a read returns, by name (the table's own and metadata columns), in this
    #: order; None: every column of the table, then the metadata columns (see ``metadata``)
    columns: tuple[str, ...] | None = None
    #: with ``columns`` None: whether the metadata columns come too
    metadata: bool = True

    @classmethod
    def build(
        cls,
        *,
        strict: bool = False,
        verify_checksums: bool = True,
        signedness: Mapping[str, Mapping[str, Any]] | None = None,
        charsets: Mapping[str, Mapping[str, str]] | None = None,
        names: Mapping[str, Sequence[str]] | None = None,
        invalid_dates: str = "null",
        tables: str | Sequence[str] | None = None,
        start: int | None = None,
        stop: int | None = None,
        since: WhenLike | None = None,
        until: WhenLike | None = None,
        change_types: str | Iterable[str] | None = None,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        rolled_back: str = "exclude",
        non_transactional: str | Sequence[str] = (),
        queries: bool = False,
        gtids: str | GtidSet | None = None,
        schema: SchemaSource | Mapping[str, TableDef] | None = None,
        ddl: bool = True,
        threads: int | None = None,
        batch_rows: int = MAX_BATCH_IMAGES,
        filesystem: Any = None,
        progress: bool | Mapping[str, Any] = False,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        columns: str | Sequence[str] | None = None,
        metadata: bool = True,
    ) -> ReadConfig:
        """The config of the keyword options of :func:`vecbinlog.open`, each checked: a bad
        value is a ValueError (or TypeError) that names the option and says what it takes."""
        auto_threads = threads is None
        threads = default_threads() if threads is None else threads
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 2:
            raise ValueError(f"batch_rows must be an integer of at least 2, not {batch_rows!r}")
        if isinstance(segment_bytes, bool) or not isinstance(segment_bytes, int) or segment_bytes < 1:
            raise ValueError(f"segment_bytes must be a positive integer, not {segment_bytes!r}")
        if rolled_back not in ("exclude", "keep"):
            raise ValueError(f"rolled_back must be 'exclude' or 'keep', not {rolled_back!r}")
        if isinstance(max_event_bytes, bool) or not isinstance(max_event_bytes, int) or max_event_bytes < 19:
            raise ValueError(f"max_event_bytes must be an integer of at least 19 (an event header), "
                             f"not {max_event_bytes!r}")
        if isinstance(columns, str):
            columns = [columns]
        if columns is not None:
            columns = tuple(columns)
            if not columns or not all(isinstance(c, str) and c for c in columns):
                raise TypeError(f"columns: a list of column names (the table's own or metadata columns), not {columns!r}")
            if len(set(columns)) != len(columns):
                raise ValueError(f"columns: a name given twice in {list(columns)}")
        if not isinstance(metadata, bool):
            raise TypeError(f"metadata: True or False, not {metadata!r}")
        if not isinstance(progress, (bool, Mapping)):
            raise TypeError(f"progress: True, False or a dict of tqdm options, not {progress!r}")
        parsed_schema = dict(schema) if _is_parsed_schema(schema) else load_schema(schema)
        return cls(
            filter=RowsFilter.make(tables, start, stop, since, until, change_types),
            decoding=TableOptions.make(signedness, charsets, names, invalid_dates, queries),
            strict=bool(strict), verify_checksums=bool(verify_checksums), filesystem=filesystem,
            segment_bytes=segment_bytes, batch_rows=batch_rows, threads=threads, auto_threads=auto_threads,
            rolled_back=rolled_back,
            non_transactional=(non_transactional,) if isinstance(non_transactional, str) else tuple(non_transactional),
            gtids=gtids if isinstance(gtids, GtidSet) or gtids is None else GtidSet(gtids),
            schema=parsed_schema, ddl=bool(ddl), progress=progress, max_event_bytes=max_event_bytes,
            columns=columns, metadata=metadata,
        )

    @classmethod
    def from_text(cls, options: Mapping[str, str], **given: Any) -> ReadConfig:
        """The config of options given as text (Spark's ``.option(...)``), each parsed by the
        rule of :data:`TEXT_OPTIONS`; ``given`` are options already typed. A bad value is a
        ValueError that starts ``option NAME='VALUE': `` and says what is wrong (Spark prints it
        after its own words, on one line with ``spark.sql.execution.pyspark.udf.hideTraceback.enabled``)."""
        typed: dict[str, Any] = dict(given)
        for name, text in options.items():
            parse = TEXT_OPTIONS.get(name)
            if parse is None:
                raise ValueError(f"unknown option {name!r}; options given as text: {', '.join(sorted(TEXT_OPTIONS))}")
            try:
                typed[name] = parse(text)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"option {name}={text!r}: {exc}") from exc
        try:
            return cls.build(**typed)
        except (ValueError, TypeError) as exc:
            text = str(exc)
            named = next((n for n in sorted(options, key=len, reverse=True) if text.startswith(n)), None)
            if named is None:
                raise ValueError(f"{text} (options {', '.join(f'{k}={v!r}' for k, v in options.items())})") from exc
            raise ValueError(f"option {named}={options[named]!r}: {text.removeprefix(named + ': ')}") from exc

    @property
    def queries(self) -> bool:
        return self.decoding.queries

    def effective(self, table: str) -> bool:
        """Whether every change of ``table`` counts, whatever its transaction's outcome
        (``rolled_back="keep"``, or a ``non_transactional`` table)."""
        return self.rolled_back == "keep" or any(fnmatch.fnmatchcase(table, p) for p in self.non_transactional)

    def wants(self, name: str, is_metadata: bool) -> bool:
        """Whether a read returns the column ``name`` (the others are not decoded)."""
        if self.columns is None:
            return self.metadata or not is_metadata
        # a table's column whose type changed apart is named ``name@V`` in read_table's schema
        return name in self.columns or (not is_metadata and any(c.startswith(name + "@") for c in self.columns))

    def project(self, schema: pa.Schema) -> list[str]:
        """The names of ``schema`` a read returns, in the order asked for (those it lacks left
        out: a layout without a column)."""
        if self.columns is None:
            if self.metadata:
                return schema.names
            return [n for n in schema.names if n not in METADATA_NAMES]
        have = set(schema.names)
        return [n for n in self.columns if n in have]

    def replace(self, **changes: Any) -> ReadConfig:
        """This config with some fields changed (``filter=``, ``progress=``...)."""
        return dataclasses.replace(self, **changes)

    def for_sizes(self, sizes: Sequence[int | None]) -> ReadConfig:
        """This config for a read of files of these sizes (None: not known, a compressed
        stream): one thread when ``threads`` was not given and the files are known to hold
        under :data:`THREADED_READ_BYTES` together."""
        known = [s for s in sizes if s is not None]
        if self.auto_threads and self.threads > 1 and len(known) == len(sizes) and sum(known) < THREADED_READ_BYTES:
            return self.replace(threads=1)
        return self

    def over_range(self, start: int | None, stop: int | None, tables: str | Iterable[str] | None = None) -> ReadConfig:
        """This config for ``[start, stop)`` of the files (a split, a stream's micro-batch):
        the byte bounds (and the ``tables`` patterns, when given) replaced."""
        f = self.filter
        pats = f.tables if tables is None else RowsFilter.make(tables).tables
        return self.replace(filter=dataclasses.replace(f, tables=pats, start=byte_offset(start, "start"),
                                                       stop=byte_offset(stop, "stop")))

    def open_file(self, location: str | os.PathLike[str] | InMemory | ByteSource, *, tasks: TaskGroup | None = None,
                  newest: bool = False, truncated_warning: bool = True) -> BinlogFile:
        """One binlog opened as every read opens it (the reader, streams, splits, the index, the
        lake, the command line: this is the one way): ``location`` a path or URI (in this
        config's ``filesystem``), a binlog given as bytes (:class:`~.logset.InMemory`), or a
        byte source already open; with this config's ``strict``, ``verify_checksums`` and
        ``max_event_bytes``. ``newest``: the newest file of a growing archive, which its server
        may still write or cut back (read with ``pread``, never memory-mapped). ``tasks``: the
        group of the file's owner (:class:`~vecbinlog.pools.TaskGroup`); ``truncated_warning``:
        as :class:`~vecbinlog.binlog.file.BinlogFile`."""
        if isinstance(location, InMemory):
            location = MemorySource(location.data, location.name)
        elif newest and isinstance(location, (str, os.PathLike)):
            location = NewestPath(os.fspath(location))
        return BinlogFile(location, strict=self.strict, verify_checksums=self.verify_checksums,
                          filesystem=self.filesystem, max_event_bytes=self.max_event_bytes,
                          truncated_warning=truncated_warning, tasks=tasks)

    def with_filters(self, **filters: Any) -> ReadConfig:
        """This config with more row filters (:data:`ROW_FILTERS`, as :meth:`build` takes them):
        each bound the tighter of its own and the one given, change types and GTID sets
        intersected, so that a read of it keeps the rows both keep. Another option is a TypeError."""
        unknown = sorted(set(filters) - set(ROW_FILTERS))
        if unknown:
            raise TypeError(f"{', '.join(unknown)}: not a row filter; a read is narrowed by {', '.join(ROW_FILTERS)}")
        gtids = filters.pop("gtids", None)
        given, mine = RowsFilter.make(**filters), self.filter

        def tighter(a: int | None, b: int | None, pick: Callable[[int, int], int]) -> int | None:
            return b if a is None else a if b is None else pick(a, b)

        kinds = mine.kinds if given.kinds is None else given.kinds if mine.kinds is None else mine.kinds & given.kinds
        narrowed = dataclasses.replace(
            mine, start=tighter(mine.start, given.start, max), stop=tighter(mine.stop, given.stop, min),
            since=tighter(mine.since, given.since, max), until=tighter(mine.until, given.until, min), kinds=kinds)
        if gtids is not None:
            gtids = gtids if isinstance(gtids, GtidSet) else GtidSet(gtids)
            gtids = gtids if self.gtids is None else self.gtids.intersection(gtids)
        return self.replace(filter=narrowed, gtids=self.gtids if gtids is None else gtids)


#: the options of :func:`vecbinlog.open` that filter rows, which :meth:`ReadConfig.with_filters` narrows
ROW_FILTERS = ("start", "stop", "since", "until", "change_types", "gtids")


def _is_parsed_schema(schema: Any) -> TypeGuard[Mapping[str, TableDef]]:
    if not isinstance(schema, Mapping) or not schema:
        return False
    from ..tables.ddl import TableDef  # (imported by a schema given only)

    return all(isinstance(v, TableDef) for v in schema.values())


def _text_bool(text: str) -> bool:
    v = text.strip().lower()
    if v not in ("true", "false"):
        raise ValueError("'true' or 'false'")
    return v == "true"


def _text_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError("not an integer") from None


def text_bytes(text: str) -> int:
    """A byte count as text: ``"134217728"``, ``"128m"``, ``"64k"``, ``"1g"`` (binary units)."""
    v = text.strip().lower().removesuffix("b")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(v[-1:], 1)
    try:
        n = int(v[:-1] if scale > 1 else v) * scale
    except ValueError:
        raise ValueError("a byte count such as 134217728 or 128m") from None
    if n < 1:
        raise ValueError("must be at least 1 byte")
    return n


def _text_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc})") from None


def _text_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


#: how each option of :meth:`ReadConfig.build` given as text is parsed (the rest stay text:
#: ``since``/``until`` as ISO 8601, ``change_types`` comma-separated, ``gtids``, ``schema``...)
TEXT_OPTIONS: dict[str, Callable[[str], Any]] = {
    "strict": _text_bool, "verify_checksums": _text_bool, "queries": _text_bool, "ddl": _text_bool,
    "signedness": _text_json, "charsets": _text_json, "names": _text_json,
    "segment_bytes": text_bytes, "max_event_bytes": text_bytes, "threads": _text_int, "batch_rows": _text_int,
    "start": _text_int, "stop": _text_int,
    "tables": _text_list, "non_transactional": _text_list, "change_types": str, "columns": _text_list,
    "metadata": _text_bool,
    "since": str, "until": str, "invalid_dates": str, "rolled_back": str, "gtids": str, "schema": str,
}
