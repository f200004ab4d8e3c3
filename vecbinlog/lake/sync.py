"""One sync: what is new in an archive since the lake table's position, applied to it, each
change once; the same loop for every lake format (a :class:`Target` each).

Exactly once
------------
The position the changes of a commit end at is written *in the same commit* as the changes
(:meth:`Commit.properties`: Delta commit metadata, an Iceberg snapshot's summary), and a run
starts from the position of the table's last commit that has one. A run that stops before a
commit (killed, a failed write) leaves the table and its position as they were, and the next
run reads the same changes again; one that stops after it goes on from there. Positions are
always outside any transaction and the archive's files only grow, so the same positions give
the same changes.

A run: the table's position (or ``starting``, the first time); the end of what is complete
now (the newest file up to its last complete transaction); that stretch in pieces of about
``max_bytes`` (:mod:`vecbinlog.lake.source`), each applied in one commit with its end as the
position:

* with a key (the primary key, or ``key=``), the piece's net changes (one row per key,
  :func:`vecbinlog.netchanges.net_changes`) are MERGEd: matched and ``delete`` -> delete,
  matched -> update, not matched and not ``delete`` -> insert;
* without one the changes are appended as a change log (every row image, with
  ``_change_type``, ``_commit_timestamp``, ``_log_file``, ``_log_pos``, ``_event_row`` and
  ``_gtid``), and a :class:`~vecbinlog.lake.errors.LakeWarning` says so;
* a piece in which the table was truncated or dropped and created again replaces the lake
  table's rows with what came after.

A piece without changes of the table commits nothing; the run's end is committed alone (a
commit of no rows) when the last piece with changes ends before it, so that the next run
does not read that stretch again. The first commit creates the table from the changes' schema.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import scalar
from ..decode.tableplan import METADATA_NAMES
from ..errors import TableNotFoundError, UnsupportedError
from ..netchanges import checked_key, net_changes
from ..streaming import Position
from .errors import LakeError, LakeWarning
from .source import ChangeSource, Piece
from .types import fit_schema, lake_table

__all__ = ["POSITION", "TABLE", "MODE", "SEQUENCE", "CHANGE_LOG_COLUMNS", "Commit", "LakeState", "SyncResult",
           "SyncStep", "Target", "run_sync", "as_position"]

POSITION = "vecbinlog.position"  #: where the changes in the table end: ``{"file": ..., "pos": ...}``
TABLE = "vecbinlog.table"  #: the ``db.table`` whose changes the table holds
MODE = "vecbinlog.mode"  #: ``merge`` (one row per key) or ``append`` (a change log)
SEQUENCE = "vecbinlog.sequence"  #: commits made by syncs, this one included
#: the change-log columns kept by a table appended as a change log (no primary key)
CHANGE_LOG_COLUMNS = ("_change_type", "_commit_timestamp", "_log_file", "_log_pos", "_event_row", "_gtid")


@dataclass(frozen=True)
class Commit:
    """What a commit says besides its rows: the table, where its changes end, the mode."""

    table: str
    position: Position
    mode: str
    sequence: int

    def properties(self) -> dict[str, str]:
        """The commit's properties (Delta commit metadata, Iceberg snapshot summary)."""
        return {POSITION: json.dumps(self.position.to_offset()), TABLE: self.table, MODE: self.mode,
                SEQUENCE: str(self.sequence)}

    @classmethod
    def of(cls, props: dict[str, str], where: str) -> Commit:
        """The commit that ``props`` (a commit's properties) describe."""
        try:
            return cls(str(props[TABLE]), Position.from_offset(json.loads(props[POSITION])),
                       str(props.get(MODE, "merge")), int(props.get(SEQUENCE, 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise LakeError(f"{where}: its last sync's commit properties are not readable: {props!r}") from exc


@dataclass(frozen=True)
class LakeState:
    """A lake table as the last sync left it: its last commit with a position, and its schema."""

    commit: Commit
    schema: pa.Schema


class Target(Protocol):
    """A lake table a sync writes: each method writes one commit, with ``commit``'s
    properties in it, atomically (the rows and the position, or neither)."""

    format: str  #: ``delta`` or ``iceberg``
    name: str  #: the table as messages show it

    def state(self) -> LakeState | None:
        """The last sync's commit and the schema; None when there is no table."""

    def schema(self) -> pa.Schema:
        """The table's schema now (Arrow)."""

    def create(self, rows: pa.Table, key: Sequence[str] | None, commit: Commit) -> None:
        """Create the table with ``rows`` in it (key columns: Iceberg's identifier fields)."""

    def merge(self, rows: pa.Table, kinds: pa.Array, key: Sequence[str], evolve: bool, commit: Commit) -> None:
        """Net changes: ``kinds`` the ``_change_type`` of each row of ``rows``."""

    def append(self, rows: pa.Table, evolve: bool, commit: Commit) -> None:
        """Rows appended."""

    def replace(self, rows: pa.Table, evolve: bool, commit: Commit) -> None:
        """The table's rows replaced by ``rows``."""

    def mark(self, commit: Commit) -> None:
        """A commit of no rows: the position alone."""


@dataclass(frozen=True)
class SyncStep:
    """Where a sync is (for ``progress=``): after a piece is read (``read``), before its
    commit (``commit``) and after it (``committed``)."""

    stage: str
    at: Position  #: the end of the piece (the position its commit writes)
    done: int  #: binlog bytes of the run read
    total: int  #: binlog bytes of the run
    changes: int  #: row changes read so far
    commits: int  #: commits made so far


@dataclass(frozen=True)
class SyncResult:
    """What a sync did."""

    table: str  #: ``db.table``
    target: str  #: the lake table (path, URI or identifier)
    format: str  #: ``delta`` or ``iceberg``
    mode: str  #: ``merge`` (one row per key) or ``append`` (a change log: no primary key)
    start: Position  #: where the run started
    end: Position  #: the position the table is at now
    changes: int = 0  #: row changes read (an update counts once)
    upserted: int = 0  #: rows inserted or updated (merge)
    deleted: int = 0  #: keys deleted (merge; a key the table did not have is counted too)
    appended: int = 0  #: change-log rows appended (append)
    commits: int = 0  #: commits made (each with its position)
    created: bool = False  #: the run created the table
    restarts: int = 0  #: pieces in which the table was truncated or dropped: the lake table was emptied
    key: tuple[str, ...] | None = None  #: the key merged on

    def summary(self) -> str:
        """One line: what was done, and where the table is now."""
        head = f"{self.table} -> {self.target} ({self.format})"
        if self.commits == 0:
            return f"{head}: nothing new; at {self.end}"
        if self.mode == "append":
            did = f"{self.changes} changes, {self.appended} rows appended (no primary key: a change log)"
        else:
            did = f"{self.changes} changes, {self.upserted} upserted, {self.deleted} deleted"
        more = f", {self.restarts} truncated" if self.restarts else ""
        made = "created, " if self.created else ""
        return f"{head}: {did}{more}; {made}{self.commits} commit{'s' * (self.commits != 1)}; at {self.end}"


# -- the run ------------------------------------------------------------------------------------
@dataclass
class _Run:
    """What a run has done so far."""

    source: ChangeSource
    target: Target
    mode: str
    key: list[str] | None
    schema: pa.Schema | None
    sequence: int
    total: int
    done: int = 0
    changes: int = 0
    upserted: int = 0
    deleted: int = 0
    appended: int = 0
    commits: int = 0
    restarts: int = 0
    created: bool = False

    def commit(self, at: Position) -> Commit:
        self.sequence += 1
        return Commit(self.source.table, at, self.mode, self.sequence)

    def step(self, stage: str, at: Position) -> SyncStep:
        return SyncStep(stage, at, self.done, self.total, self.changes, self.commits)


def run_sync(source: ChangeSource, target: Target, *, key: Sequence[str] | None = None,
             starting: str | Position = "earliest", until: Position | None = None,
             progress: Callable[[SyncStep], None] | None = None) -> SyncResult:
    """Apply what is new in ``source`` to ``target`` (see the module docstring)."""
    table = source.table
    state = target.state()
    if state is not None and state.commit.table != table:
        raise LakeError(f"{target.name} holds the changes of {state.commit.table}, not {table}")
    start = state.commit.position if state is not None else source.resolve(starting)
    end = source.end(start, until)
    mode = state.commit.mode if state is not None else "merge"
    result = SyncResult(table, target.name, target.format, mode, start, start,
                        key=tuple(key) if key else None)
    if not start < end:
        return result
    source.walk(start, end)
    if state is None and not source.has_rows():
        tables = source.tables(start, end)
        raise TableNotFoundError(f"{table!r} has no rows events in {source.archive.shown} from {start} to {end}: the "
                                 f"lake table is made from its changes' schema; tables: {', '.join(tables) or 'none'}",
                                 table=table, tables=tables)
    if state is None and not key and not source.key():
        mode = "append"
        warnings.warn(f"{table} has no primary key (in the binlog: binlog_row_metadata=FULL, or its DDL) and none was "
                      f"given (key=): {target.name} is written as its change log, every row image appended with "
                      f"{', '.join(CHANGE_LOG_COLUMNS)}", LakeWarning, stacklevel=3)
    run = _Run(source, target, mode, list(key) if key else source.key(), None if state is None else state.schema,
               0 if state is None else state.commit.sequence, source.bytes_between(start, end))
    reached = start
    for piece in source.pieces(start, end):
        run.done += source.bytes_between(piece.lo, piece.hi)
        run.changes += piece.count
        if progress is not None:
            progress(run.step("read", piece.hi))
        if piece.changes is None and not (piece.restart and run.mode == "merge" and run.schema is not None):
            continue  # nothing of the table here
        _apply(run, piece, progress)
        reached = piece.hi
        if progress is not None:
            progress(run.step("committed", piece.hi))
    if reached < end and run.schema is not None:  # the run's end, in a commit of no rows: the next run starts there
        commit = run.commit(end)
        if progress is not None:
            progress(run.step("commit", end))
        target.mark(commit)
        run.commits += 1
    return SyncResult(table, target.name, target.format, run.mode, start, end, run.changes, run.upserted,
                      run.deleted, run.appended, run.commits, run.created, run.restarts,
                      tuple(run.key) if run.key and run.mode == "merge" else None)


def _apply(run: _Run, piece: Piece, progress: Callable[[SyncStep], None] | None) -> None:
    """One piece's changes in one commit (the table created by the first)."""
    target = run.target
    rows, kinds = _rows(run, piece)
    commit = run.commit(piece.hi)
    if progress is not None:
        progress(run.step("commit", piece.hi))
    if run.schema is None:  # the first commit creates the table, with the upserts (or the change log)
        if kinds is not None:
            rows = rows.filter(pc.not_equal(kinds, scalar("delete", pa.string())))
        target.create(rows, run.key if run.mode == "merge" else None, commit)
        run.created = True
    else:
        rows, evolve = fit_schema(run.schema, rows, target.format, piece.path, piece.lo.pos)
        restart = piece.restart and run.mode == "merge"
        if restart:
            target.replace(rows.filter(pc.not_equal(kinds, scalar("delete", pa.string()))), evolve, commit)
        elif rows.num_rows == 0:
            target.mark(commit)
        elif run.mode == "append":
            target.append(rows, evolve, commit)
        else:
            assert run.key is not None  # (_rows refuses a merge of rows without one)
            target.merge(rows, kinds, run.key, evolve, commit)
        run.restarts += restart
    run.commits += 1
    run.schema = target.schema()


def _rows(run: _Run, piece: Piece) -> tuple[pa.Table, pa.Array | None]:
    """The rows a piece writes, in lake types: its change log (append), or its net changes and
    their ``_change_type`` (merge; after its last TRUNCATE/DROP of the table, if any)."""
    fmt = run.target.format
    if run.mode == "append":  # a change log: a TRUNCATE is no row change, every row image is kept
        changes = piece.changes
        assert changes is not None  # (run_sync applies a piece without changes only to restart a merge)
        if changes.num_rows and pc.max(pc.list_value_length(changes.column("_absent"))).as_py():
            raise UnsupportedError(f"{run.source.table}: some row images from {piece.lo} on leave columns out "
                                   "(binlog_row_image MINIMAL or NOBLOB): a change log of them would hold nulls for "
                                   "values the binlog does not have; a sync needs FULL row images")
        own = [c for c in changes.column_names if c not in METADATA_NAMES]
        rows = lake_table(changes, [*own, *CHANGE_LOG_COLUMNS], fmt)
        run.appended += rows.num_rows
        return rows, None
    changes = piece.final()
    if changes is None:  # dropped or truncated, nothing after: the table's columns, no rows
        assert run.schema is not None  # (run_sync restarts a merged table it has)
        return run.schema.empty_table(), pa.array([], pa.string())
    own = [c for c in changes.column_names if c not in METADATA_NAMES]
    if changes.num_rows and not run.key:
        raise LakeError(f"{run.source.table} has no primary key in the binlog from {piece.lo} on, and "
                        f"{run.target.name} is merged by key: name the key columns (key=, --key)")
    key = checked_key(run.key, changes.column_names) if changes.num_rows else run.key or []
    net = net_changes(changes, key) if changes.num_rows else changes
    kinds = net.column("_change_type").cast(pa.string()).combine_chunks()
    deletes = pc.sum(pc.equal(kinds, scalar("delete", pa.string()))).as_py() or 0
    run.deleted += deletes
    run.upserted += net.num_rows - deletes
    return lake_table(net, own, fmt, required=key if fmt == "iceberg" else ()), kinds


def as_position(at: Position | str | None) -> Position | None:
    """``FILE:POS`` (``mysql-bin.000042:1234``; a folder in front is left out), or a Position."""
    if at is None or isinstance(at, Position):
        return at
    name, sep, pos = str(at).rpartition(":")
    if not sep or not name or not pos.isdigit():
        raise ValueError(f"until: a position FILE:POS (mysql-bin.000042:1234), not {at!r}")
    return Position(name.rsplit("/", 1)[-1], int(pos))
