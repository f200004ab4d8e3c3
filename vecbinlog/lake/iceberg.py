"""A binlog archive synced into an Apache Iceberg table with ``pyiceberg`` (any catalog it
supports: SQL on SQLite or PostgreSQL, REST, Hive, Glue...): ``pip install "vecbinlog[iceberg]"``.

Each commit is one catalog commit of one pyiceberg transaction, whose snapshots carry the
sync's position in their summary (``vecbinlog.position``, with ``vecbinlog.table``,
``vecbinlog.mode`` and ``vecbinlog.sequence``): the rows and the position land together or
not at all. Before each commit the table is loaded again: another sync's commit since ours
is an error (pyiceberg itself retries an append on top of a concurrent commit).

Net changes go in copy-on-write, in one transaction: the data files holding a changed or
deleted key (found by the key columns' ranges in the file metrics, then their key columns
read and joined with the changes' keys, in Arrow) are removed, and their other rows are
appended again with the upserts, a file at a time. The key columns are the table's
identifier fields (required). The schema evolves with ``update_schema().union_by_name`` (new
columns; int to long, float to double, a decimal's precision).
"""

from __future__ import annotations

import os
import warnings
from itertools import chain
from typing import Any, Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import AlwaysTrue, And, BooleanExpression, GreaterThanOrEqual, LessThanOrEqual
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.table import FileScanTask, Table, Transaction

from ..arrowbuild import scalar
from ..streaming import Archive, Position
from .errors import LakeError
from .source import DEFAULT_MAX_BYTES, ChangeSource
from .sync import POSITION, SEQUENCE, Commit, LakeState, SyncResult, SyncStep, as_position, run_sync

__all__ = ["IcebergTarget", "sync_iceberg", "iceberg_catalog"]

#: pyiceberg warns when a delete matched no row: a net delete of a key the table never had
_NO_MATCH = "Delete operation did not match any records"


def iceberg_catalog(uri: str, warehouse: str | None = None, **properties: str) -> Catalog:
    """A pyiceberg catalog from a URI: ``sqlite:///path/catalog.db`` or ``postgresql://...``
    (SQL catalog; the warehouse defaults to the SQLite file's folder), ``http(s)://...``
    (REST), ``thrift://...`` (Hive); anything else is a catalog named in ``~/.pyiceberg.yaml``
    (or ``PYICEBERG_CATALOG__<NAME>__...`` variables).

    Examples
    --------
    >>> from vecbinlog.lake import iceberg_catalog
    >>> catalog = iceberg_catalog("sqlite:///lake/catalog.db")      # doctest: +SKIP
    """
    props: dict[str, Any] = dict(properties)
    if "://" not in uri:
        return load_catalog(uri, **props)
    if warehouse is None and uri.startswith("sqlite:///"):
        warehouse = "file://" + os.path.dirname(os.path.abspath(uri[len("sqlite:///"):]))
    if warehouse is not None:
        props["warehouse"] = warehouse
    return load_catalog("vecbinlog", uri=uri, **props)


class IcebergTarget:
    """The Iceberg table ``identifier`` (``namespace.table``) of ``catalog``."""

    format = "iceberg"

    def __init__(self, catalog: Catalog, identifier: str) -> None:
        if "." not in identifier:
            raise ValueError(f"an Iceberg table is namespace.table, not {identifier!r}")
        self.catalog = catalog
        self.identifier = identifier
        self.name = identifier
        #: the table as its position was read, then as our last commit left it
        self._tbl: Table | None = None

    def _loaded(self) -> Table:
        if self._tbl is None:
            raise LakeError(f"the Iceberg table {self.name} is gone")
        return self._tbl

    def state(self) -> LakeState | None:
        try:
            table = self._tbl = self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            return None
        props = _last_sync(table)
        if props is None:
            raise LakeError(f"the Iceberg table {self.name} has no snapshot with a {POSITION} in its summary: it was "
                            "not written by vecbinlog sync, or its last sync's snapshot was expired; sync into a new "
                            "table")
        return LakeState(Commit.of(props, self.name), table.schema().as_arrow())

    def schema(self) -> pa.Schema:
        return self._loaded().schema().as_arrow()

    def _based(self, commit: Commit) -> Table:
        """The table a commit is made on: as it is now, unless another sync committed since ours
        (pyiceberg retries an append on a concurrent commit, so this is checked here)."""
        before = self._loaded()
        table = self.catalog.load_table(self.identifier)
        if table.metadata.current_snapshot_id != before.metadata.current_snapshot_id:
            props = _last_sync(table) or {}
            if int(props.get(SEQUENCE, 0)) >= commit.sequence:
                raise LakeError(f"another sync wrote {self.name} at the same time (its sync commits: "
                                f"{props.get(SEQUENCE)}, ours: {commit.sequence}); run one sync of a table at a time")
        self._tbl = table
        return table

    def create(self, rows: pa.Table, key: Sequence[str] | None, commit: Commit) -> None:
        namespace = self.identifier.rsplit(".", 1)[0]
        self.catalog.create_namespace_if_not_exists(namespace)
        with self.catalog.create_table_transaction(self.identifier, schema=rows.schema) as tx:
            if key:
                with tx.update_schema() as update:
                    update.set_identifier_fields(*key)
            tx.append(rows, snapshot_properties=commit.properties())
        self._tbl = self.catalog.load_table(self.identifier)

    def _evolved(self, tx: Transaction, rows: pa.Table, evolve: bool) -> None:
        if evolve:
            with tx.update_schema() as update:
                update.union_by_name(rows.schema)

    def merge(self, rows: pa.Table, kinds: pa.Array, key: Sequence[str], evolve: bool, commit: Commit) -> None:
        table = self._based(commit)
        keys = rows.select(list(key))
        touched = _touched(table, keys)
        upserts = rows.filter(pc.not_equal(kinds, scalar("delete", pa.string())))
        props = commit.properties()
        with table.transaction() as tx:
            self._evolved(tx, rows, evolve)
            if touched:  # copy-on-write: the files holding a changed key go, their other rows come back below
                with tx.update_snapshot(snapshot_properties=props).overwrite() as rewrite:
                    for task in touched:
                        rewrite.delete_data_file(task.file)
            schema = tx.table_metadata.schema().as_arrow()
            batches = chain(_kept(table, touched, keys, schema), _like(upserts, schema).to_batches())
            reader = pa.RecordBatchReader.from_batches(schema, batches)
            # a file at a time: a partitioned table (made so by hand) takes the rows whole
            tx.append(reader if table.spec().is_unpartitioned() else reader.read_all(), snapshot_properties=props)

    def append(self, rows: pa.Table, evolve: bool, commit: Commit) -> None:
        with self._based(commit).transaction() as tx:
            self._evolved(tx, rows, evolve)
            tx.append(rows, snapshot_properties=commit.properties())

    def replace(self, rows: pa.Table, evolve: bool, commit: Commit) -> None:
        with self._based(commit).transaction() as tx:
            self._evolved(tx, rows, evolve)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _NO_MATCH)
                tx.overwrite(rows, snapshot_properties=commit.properties())

    def mark(self, commit: Commit) -> None:
        with self._based(commit).transaction() as tx:  # an append of no rows: a snapshot with the summary
            tx.append(tx.table_metadata.schema().as_arrow().empty_table(), snapshot_properties=commit.properties())


def _last_sync(table: Table) -> dict[str, str] | None:
    """The summary of the table's newest snapshot written by a sync (walked back from the
    current one: compactions and other writers' snapshots have no position)."""
    snapshot = table.current_snapshot()
    while snapshot is not None:
        props = snapshot.summary.additional_properties if snapshot.summary is not None else {}
        if POSITION in props:
            return dict(props)
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    return None


def _touched(table: Table, keys: pa.Table) -> list[FileScanTask]:
    """The data files of ``table`` holding one of ``keys`` (a row each): those the key columns'
    ranges do not rule out (file metrics), their key columns read and matched (Arrow joins: no
    Python value per key, unlike a pyiceberg ``In`` filter of every key)."""
    names = list(keys.column_names)
    ranges: list[BooleanExpression] = []
    for name in names:
        low, high = pc.min_max(keys.column(name)).values()
        try:
            # (pyiceberg's predicates are pydantic models: mypy takes their fields for __init__'s, not (term, literal))
            ranges += [GreaterThanOrEqual(name, low.as_py()), LessThanOrEqual(name, high.as_py())]  # type: ignore[call-arg]
        except (TypeError, ValueError):  # a type pyiceberg has no literal of: no pruning by this column
            pass
    scan = table.scan(row_filter=And(*ranges) if len(ranges) > 1 else (ranges[0] if ranges else AlwaysTrue()))
    out = []
    for task in scan.plan_files():
        found = ArrowScan(table.metadata, table.io, table.schema().select(*names), AlwaysTrue()).to_table([task])
        if found.num_rows and found.join(keys, names, join_type="left semi").num_rows:
            out.append(task)
    return out


def _kept(table: Table, touched: list[FileScanTask], keys: pa.Table, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The rows of the ``touched`` files whose key is not among ``keys``, a file at a time, as
    ``schema`` (the table's after this commit's evolution) has them."""
    for task in touched:
        rows = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue()).to_table([task])
        yield from _like(rows.join(keys, list(keys.column_names), join_type="left anti"), schema).to_batches()


def _like(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """``rows`` as ``schema`` has them: its columns cast, the others null (a column the rows predate)."""
    arrays = [rows.column(f.name).cast(f.type) if f.name in rows.column_names else pa.nulls(rows.num_rows, f.type)
              for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def sync_iceberg(archive: str | Sequence[str] | Archive, table: str, identifier: str, *, catalog: Catalog | str,
                 key: Sequence[str] | None = None, warehouse: str | None = None,
                 starting: str | Position = "earliest", until: Position | str | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES, progress: Callable[[SyncStep], None] | None = None,
                 **options: Any) -> SyncResult:
    """Apply what is new in ``archive`` since the last sync to the Iceberg table
    ``identifier``, each change once; the first sync creates it (and its namespace).

    Parameters
    ----------
    archive : a folder, glob, ``mysql-bin.index``, file or list of them; local paths or URIs.
    table : ``db.table``.
    identifier : the Iceberg table, ``namespace.table``.
    catalog : a pyiceberg ``Catalog``, or a URI or name for :func:`iceberg_catalog`.
    warehouse : with a catalog URI: where the catalog puts new tables.
    key, starting, until, max_bytes, progress, options : as :func:`vecbinlog.lake.sync_delta`.

    Returns
    -------
    SyncResult

    Examples
    --------
    >>> from vecbinlog.lake import sync_iceberg
    >>> sync_iceberg("data/sample", "shop.orders", "shop.orders",
    ...              catalog="sqlite:///lake/catalog.db").commits            # doctest: +SKIP
    1
    """
    if isinstance(catalog, str):
        catalog = iceberg_catalog(catalog, warehouse)
    source = ChangeSource(archive, table, max_bytes=max_bytes, **options)
    return run_sync(source, IcebergTarget(catalog, identifier), key=key, starting=starting,
                    until=as_position(until), progress=progress)
