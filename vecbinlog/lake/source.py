"""The binlog side of a sync: one table's changes in a growing archive, from a position to
what is complete, in pieces of whole transactions that each fit in memory.

A piece is ``[lo, hi)`` between two positions outside any transaction
(:meth:`vecbinlog.streaming.Archive.end` with ``max_bytes``: it ends at the first transaction
start that many bytes on), read alone (:meth:`vecbinlog.Binlog.over_range`) given where the
DDL and the table's layouts stand at ``lo`` (:class:`vecbinlog.streaming.StreamHistory`). The
history is walked (headers, TABLE_MAPs and DDL; no row decoded) from the sync's start when
every layout of the table there is named by the binlog itself (``binlog_row_metadata=FULL``),
and from the archive's first file otherwise, so that the DDL before the start names the
columns and gives the primary key, as it does for the Spark stream.

A TRUNCATE, or a DROP and CREATE, of the table in a piece (a new lifetime of its name,
:attr:`vecbinlog.tables.ddl.Catalog.lifetimes`) logs no row deletes: the piece is then a
*restart*, and holds only the changes after the last one (:class:`Piece`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import scalar
from ..binlog.spec import MAGIC_LEN
from ..errors import TableNotFoundError, TruncatedWarning
from ..log.config import ReadConfig
from ..log.versions import SchemaHistory
from ..netchanges import primary_key
from ..reader import Binlog
from ..streaming import Archive, Position, StreamHistory

__all__ = ["Piece", "ChangeSource", "DEFAULT_MAX_BYTES", "RESERVED_OPTIONS"]

#: binlog bytes read, and merged in one commit, at a time (a larger transaction comes whole)
DEFAULT_MAX_BYTES = 64 << 20
#: options of :func:`vecbinlog.open` a sync sets itself: where a piece starts and stops, the table,
#: and that changes which did not take effect are left out
RESERVED_OPTIONS = ("tables", "start", "stop", "since", "until", "gtids", "change_types", "rolled_back", "progress")


@dataclass(frozen=True)
class Piece:
    """``[lo, hi)`` of the archive and the table's changes in it."""

    lo: Position
    hi: Position
    path: str  #: the binlog file ``lo`` is in (for messages)
    #: the table's change log in the piece (as ``read_table`` gives it: only changes that took
    #: effect), or None when the piece has none
    changes: pa.Table | None
    #: the table was truncated, or dropped (and created again), in the piece: what it holds at
    #: the piece's end is what came after the last such statement (:meth:`final`)
    restart: bool = False
    #: with ``restart``: the ``_incarnation`` of the rows written after it (None: none were)
    last: int | None = None

    @property
    def count(self) -> int:
        """Row changes in the piece (an update, two row images, counts once)."""
        if self.changes is None or self.changes.num_rows == 0:
            return 0
        kinds = self.changes.column("_change_type").cast(pa.string())
        return self.changes.num_rows - pc.sum(pc.equal(kinds, scalar("update_preimage", pa.string()))).as_py()

    def final(self) -> pa.Table | None:
        """The changes after the piece's last TRUNCATE/DROP of the table (all of them without one)."""
        if not self.restart or self.changes is None:
            return self.changes
        if self.last is None:
            return self.changes.slice(0, 0)
        return self.changes.filter(pc.equal(self.changes.column("_incarnation"), scalar(self.last, pa.int32())))


class ChangeSource:
    """One table's changes in an archive, from a position on.

    Parameters
    ----------
    archive : a folder, glob, ``mysql-bin.index``, file or list of them, local or URIs (see
        :func:`vecbinlog.streaming.archive_files`), or an :class:`~vecbinlog.streaming.Archive`.
    table : ``db.table``.
    max_bytes : binlog bytes per piece.
    options : the options of :func:`vecbinlog.open` (``schema=``, ``signedness=``, ``names=``,
        ``filesystem=``, ``verify_checksums=``, ``threads=``...), but not those of
        :data:`RESERVED_OPTIONS`.
    """

    def __init__(self, archive: str | Sequence[str] | Archive, table: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 **options: Any) -> None:
        reserved = sorted(set(options) & set(RESERVED_OPTIONS))
        if reserved:
            raise ValueError(f"a sync sets {reserved} itself (it reads the table's changes that took effect, from the "
                             "lake table's position on); use starting= and until= for where it starts and stops")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive integer, not {max_bytes!r}")
        self.config = ReadConfig.build(tables=[table], **options)
        self.archive = archive if isinstance(archive, Archive) else Archive(archive, self.config)
        self.table = table
        self.max_bytes = max_bytes
        self.history: StreamHistory | None = None
        self.found: SchemaHistory | None = None  #: the layouts walked, for the key

    # -- where --------------------------------------------------------------------------
    def resolve(self, starting: str | Position) -> Position:
        """A first run's start: ``earliest``, ``latest``, ``FILE:POS``, a GTID (the last one
        already in the table) or a time (:meth:`vecbinlog.streaming.Archive.resolve_start`)."""
        return starting if isinstance(starting, Position) else self.archive.resolve_start(starting)

    def end(self, start: Position, until: Position | None = None) -> Position:
        """Where what is complete from ``start`` ends now (at most ``until``)."""
        return self.archive.end(start, target=until)

    # -- the layouts ---------------------------------------------------------------------
    def walk(self, start: Position, end: Position) -> None:
        """Walk the layouts and DDL of ``[start, end)`` (no row decoded); from the archive's
        first file when the binlog does not name every column of the table there."""
        history = StreamHistory(self.config)
        chunk = history.walk(self.archive, end, first=start)
        if not _named(chunk.found, self.table):
            first = self.archive.first()
            if first < start:
                history = StreamHistory(self.config)
                chunk = history.walk(self.archive, end, first=first)
        history.take(chunk)
        self.history, self.found = history, chunk.found

    def has_rows(self) -> bool:
        """Whether the walk met rows events of the table."""
        return self.found is not None and bool(self.found.history.get(self.table))

    def key(self) -> list[str] | None:
        """The table's primary key at the end of the walk (None: none, or no rows)."""
        return None if self.found is None else primary_key(self.found, self.table)

    # -- the changes -----------------------------------------------------------------------
    def pieces(self, start: Position, end: Position) -> Iterator[Piece]:
        """``[start, end)`` in pieces of about ``max_bytes``, each read when asked for."""
        lo = start
        while lo < end:
            hi = self.archive.end(lo, max_bytes=self.max_bytes, target=end)
            if not lo < hi:
                break
            yield self.read(lo, hi)
            lo = hi

    def _paths(self, lo: Position, hi: Position) -> list[str]:
        files = self.archive.files()
        names = [n for n, _ in files]
        return [p for _, p in files[names.index(lo.file): names.index(hi.file) + 1]]

    def read(self, lo: Position, hi: Position) -> Piece:
        """The table's changes in ``[lo, hi)`` (both within the walk, :meth:`walk`)."""
        if self.history is None:
            raise RuntimeError("ChangeSource.read before walk()")
        paths = self._paths(lo, hi)
        ddl, versions = self.history.state_at(lo)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)  # the newest file's tail past `hi`
            with Binlog.over_range(paths, lo.pos, hi.pos, ddl=ddl, versions=versions,
                                   config=self.config.over_range(lo.pos, hi.pos)) as log:
                try:
                    changes: pa.Table | None = log.read_table(self.table)
                except TableNotFoundError:
                    changes = None
        end_ddl, end_versions = self.history.state_at(hi)
        before = 0 if ddl is None else ddl.lifetimes.get(self.table, 0)
        after = 0 if end_ddl is None else end_ddl.lifetimes.get(self.table, 0)
        if before == after:
            return Piece(lo, hi, paths[0], changes)
        last = end_versions.get(self.table)  # the rows written under the name's last lifetime, if any
        incarnation = last.incarnation if last is not None and last.lifetime == after else None
        return Piece(lo, hi, paths[0], changes, restart=True, last=incarnation)

    def tables(self, start: Position, end: Position) -> list[str]:
        """Every table with rows events in ``[start, end)`` (for the error that names them)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)
            with Binlog.over_range(self._paths(start, end), start.pos, end.pos,
                                   config=self.config.over_range(start.pos, end.pos, "*")) as log:
                return log.tables

    def bytes_between(self, a: Position, b: Position) -> int:
        """Binlog bytes from ``a`` to ``b`` (for progress)."""
        if not a < b:
            return 0
        files = self.archive.files()
        names = [n for n, _ in files]
        total = 0
        for name, path in files[names.index(a.file): names.index(b.file) + 1]:
            lo = a.pos if name == a.file else MAGIC_LEN
            if name == b.file:
                hi = b.pos
            else:  # a file before b's is final: its walk is kept by the archive
                scan = self.archive.scan(name, path, lo, newest=False)
                hi = lo if scan is None else scan.walked
            total += max(hi - lo, 0)
        return total


def _named(found: SchemaHistory, table: str) -> bool:
    """Whether every layout of ``table`` walked names all its columns (FULL metadata, or the DDL
    walked): then the DDL before the walk is not needed."""
    return all(c.name is not None for _, state in found.history.get(table, []) for c in state.table_map.columns)
