"""A binlog archive synced into a Delta Lake table with the ``deltalake`` package (delta-rs: no
Spark, no JVM): ``pip install "vecbinlog[delta]"``.

Each commit carries the sync's position in its commit metadata (``vecbinlog.position``, with
``vecbinlog.table``, ``vecbinlog.mode`` and ``vecbinlog.sequence``) and an application
transaction (``txn``: app id ``vecbinlog.sync:<db.table>``, version the sequence), so that the
position lands with the rows or not at all, and two syncs of one table at once conflict
instead of both applying the same changes. Net changes go in with delta-rs's MERGE; the schema
evolves with ``schema_mode="merge"`` (new columns; Delta has no type widening).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError

from ..streaming import Archive, Position
from .errors import LakeError
from .source import DEFAULT_MAX_BYTES, ChangeSource
from .sync import POSITION, Commit, LakeState, SyncResult, SyncStep, as_position, run_sync

__all__ = ["DeltaTarget", "sync_delta"]

#: commits looked at for the last sync's position before the whole history is read
_RECENT = 32
#: the application transaction of a sync's commits: this and the ``db.table`` (the Spark example,
#: examples/spark_stream_to_delta.py, keys its micro-batches ``vecbinlog:<db.table>``)
APP_ID = "vecbinlog.sync:"


class DeltaTarget:
    """The Delta table at ``path`` (a folder, or a URI: ``s3://``, ``gs://``, ``az://``...,
    with ``storage_options`` as ``deltalake`` takes them)."""

    format = "delta"

    def __init__(self, path: str, storage_options: Mapping[str, str] | None = None) -> None:
        self.path = str(path)
        self.name = self.path
        self.storage_options = dict(storage_options) if storage_options else None
        #: the snapshot the next commit is based on: the one whose position was read, then ours
        self._dt: DeltaTable | None = None

    def _load(self) -> DeltaTable | None:
        if not DeltaTable.is_deltatable(self.path, storage_options=self.storage_options):
            return None
        return DeltaTable(self.path, storage_options=self.storage_options)

    def _table(self) -> DeltaTable:
        if self._dt is None:
            raise LakeError(f"the Delta table at {self.name} is gone")
        return self._dt

    def state(self) -> LakeState | None:
        dt = self._dt = self._load()
        if dt is None:
            return None
        for history in (dt.history(_RECENT), dt.history()):
            for commit in history:  # newest first; OPTIMIZE, VACUUM... commits have no position
                if POSITION in commit:
                    props = {k: str(v) for k, v in commit.items() if k.startswith("vecbinlog.")}
                    return LakeState(Commit.of(props, self.name), _arrow_schema(dt))
            if len(history) < _RECENT:
                break
        raise LakeError(f"the Delta table at {self.name} has no commit with a {POSITION}: it was not written by "
                        "vecbinlog sync, or Delta's log cleanup removed its last sync's commit; sync into a new table")

    def schema(self) -> pa.Schema:
        return _arrow_schema(self._table())

    def _props(self, commit: Commit) -> CommitProperties:
        return CommitProperties(custom_metadata=commit.properties(),
                                app_transactions=[Transaction(APP_ID + commit.table, commit.sequence)])

    @contextmanager
    def _conflicts(self, commit: Commit) -> Iterator[None]:
        """delta-rs refuses a commit when a commit since the snapshot it is based on conflicts
        (another sync's application transaction, data it read): said as a LakeError."""
        try:
            yield
        except CommitFailedError as exc:
            raise LakeError(f"another sync (or writer) committed to {self.name} at the same time, since this one read "
                            f"its position: nothing of this commit was written; run one sync of a table at a time "
                            f"({exc})") from exc

    def _committed(self, commit: Commit) -> None:
        """Take the table as our commit left it; another sync's commit since is an error (the
        commits are based on the snapshot read, so delta-rs refuses a second one on top)."""
        self._dt = self._load()
        done = None if self._dt is None else self._dt.transaction_version(APP_ID + commit.table)
        if done != commit.sequence:
            raise LakeError(f"another sync wrote {self.name} at the same time (its sync commits: {done}, ours: "
                            f"{commit.sequence}); run one sync of a table at a time")

    def create(self, rows: pa.Table, key: Sequence[str] | None, commit: Commit) -> None:
        # mode "error": a table made meanwhile by another sync is an error, not a second history
        write_deltalake(self.path, rows, mode="error", storage_options=self.storage_options,
                        commit_properties=self._props(commit))
        self._committed(commit)

    def merge(self, rows: pa.Table, kinds: pa.Array, key: Sequence[str], evolve: bool, commit: Commit) -> None:
        source = rows.append_column("_change_type", kinds)
        on = " AND ".join(f"t.{_quoted(k)} = s.{_quoted(k)}" for k in key)
        columns = {_quoted(c): f"s.{_quoted(c)}" for c in rows.column_names}
        merging = (self._table().merge(source, on, source_alias="s", target_alias="t", merge_schema=evolve,
                                       commit_properties=self._props(commit))
                   .when_matched_delete("s._change_type = 'delete'")
                   .when_matched_update(columns, "s._change_type != 'delete'")
                   .when_not_matched_insert(columns, "s._change_type != 'delete'"))
        with self._conflicts(commit):
            merging.execute()
        self._committed(commit)

    def _write(self, rows: pa.Table, mode: str, evolve: bool, commit: Commit) -> None:
        with self._conflicts(commit):
            # (deltalake types "append" and "overwrite" in two overloads: a mode either one matches neither)
            write_deltalake(self._table(), rows, mode=mode, schema_mode="merge" if evolve else None,  # type: ignore[call-overload]
                            commit_properties=self._props(commit))
        self._committed(commit)

    def append(self, rows: pa.Table, evolve: bool, commit: Commit) -> None:
        self._write(rows, "append", evolve, commit)

    def replace(self, rows: pa.Table, evolve: bool, commit: Commit) -> None:
        self._write(rows, "overwrite", evolve, commit)

    def mark(self, commit: Commit) -> None:
        self._write(self.schema().empty_table(), "append", False, commit)


def _arrow_schema(dt: DeltaTable) -> pa.Schema:
    return pa.schema(dt.schema().to_arrow())


def _quoted(name: str) -> str:
    """A column name in a delta-rs SQL expression."""
    return "`" + name.replace("`", "``") + "`"


def sync_delta(archive: str | Sequence[str] | Archive, table: str, path: str, *, key: Sequence[str] | None = None,
               storage_options: Mapping[str, str] | None = None, starting: str | Position = "earliest",
               until: Position | str | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
               progress: Callable[[SyncStep], None] | None = None, **options: Any) -> SyncResult:
    """Apply what is new in ``archive`` since the last sync to the Delta table at ``path``,
    each change once; the first sync creates the table.

    Parameters
    ----------
    archive : a folder, glob, ``mysql-bin.index``, file or list of them; local paths or URIs
        (``s3://...``; see :func:`vecbinlog.streaming.archive_files`); its newest file is read up
        to its last complete transaction.
    table : ``db.table``.
    path : the Delta table: a folder, or a URI (``s3://bucket/lake/orders``).
    key : the key columns; by default the primary key the binlog gives (FULL metadata, or the
        DDL in the archive). A table without one is appended as a change log (a
        :class:`~vecbinlog.lake.errors.LakeWarning` says so).
    storage_options : ``deltalake``'s (``AWS_ENDPOINT_URL``, ``AWS_REGION``...).
    starting : where the first sync starts: ``earliest`` (the archive's first file),
        ``latest``, ``FILE:POS``, a GTID (the last transaction already in the table), a time.
    until : go no further than this position (``FILE:POS`` or a
        :class:`~vecbinlog.streaming.Position`).
    max_bytes : binlog bytes read and merged in one commit (each commit has its position).
    progress : called with a :class:`~vecbinlog.lake.sync.SyncStep` as pieces are read and committed.
    options : the decoding options of :func:`vecbinlog.open` (``schema=``, ``signedness=``,
        ``filesystem=`` for the archive...).

    Returns
    -------
    SyncResult : changes read, rows upserted and deleted (or appended), commits made, the
        position reached.

    Examples
    --------
    >>> from vecbinlog.lake import sync_delta
    >>> done = sync_delta("data/sample", "shop.orders", "lake/orders")     # doctest: +SKIP
    >>> done.summary()                                                     # doctest: +SKIP
    'shop.orders -> lake/orders (delta): 6 changes, 3 upserted, 0 deleted; created, 1 commit; at mariadb-bin.000001:3284'
    """
    source = ChangeSource(archive, table, max_bytes=max_bytes, **options)
    return run_sync(source, DeltaTarget(path, storage_options), key=key, starting=starting,
                    until=as_position(until), progress=progress)

