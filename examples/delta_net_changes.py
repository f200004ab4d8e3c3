"""A binlog archive landed in a Delta table, run after run, without Spark.

    pip install -e . deltalake
    python examples/delta_net_changes.py ARCHIVE shop.orders lake/orders

Each run takes what is new in the archive since the last run (a folder, a glob, a
``mysql-bin.index``, local or ``s3://...``; the newest file only up to its last complete
transaction: ``vecbinlog.streaming.Archive``), reduces it to one row per primary key
(``vecbinlog.netchanges.net_changes``) and MERGEs that into the Delta table with the
``deltalake`` package: upserts for ``insert``/``update_postimage``, deletes for ``delete``. The
position reached is written in the same Delta commit (its ``vecbinlog.position`` commit
metadata), so a run that fails before its commit leaves the table and the position as they
were, and the next run takes the same changes again: each change lands once. The first run
creates the table (``write_deltalake``) from the changes up to then.

Delta has no unsigned integers, durations or dictionaries: :func:`lake_types` maps the Arrow
types (as the Spark source does): UNSIGNED to the next wider signed type, ``BIGINT UNSIGNED`` to
``decimal(20,0)``, TIME to microseconds (int64), ENUM labels to strings, DECIMAL above 38
digits to its text.
"""

from __future__ import annotations

import argparse
import json
from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

import vecbinlog
from vecbinlog.netchanges import net_changes, table_key
from vecbinlog.streaming import Archive, Position
from vecbinlog.decode.tableplan import METADATA_NAMES

POSITION = "vecbinlog.position"  #: the commit metadata holding where the table's changes end
_UNSIGNED = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(), pa.uint64(): pa.decimal128(20, 0)}


def lake_type(t: pa.DataType) -> pa.DataType:
    """An Arrow type Delta Lake holds every value of ``t`` in (see the module docstring)."""
    if t in _UNSIGNED:
        return _UNSIGNED[t]
    if pa.types.is_dictionary(t):
        return lake_type(t.value_type)
    if pa.types.is_duration(t):
        return pa.int64()
    if pa.types.is_decimal(t) and t.precision > 38:
        return pa.string()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(lake_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(lake_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def lake_types(table: pa.Table) -> pa.Table:
    """``table`` cast to :func:`lake_type` column by column (field metadata dropped)."""
    arrays, fields = [], []
    for f, col in zip(table.schema, table.columns):
        want = lake_type(f.type)
        if pa.types.is_duration(f.type):
            col = col.cast(pa.duration("us")).cast(pa.int64())
        else:
            col = col.cast(want)
        arrays.append(col)
        fields.append(pa.field(f.name, want, nullable=True))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def merge_net_changes(path: str, net: pa.Table, key: Sequence[str], commit: CommitProperties | None = None) -> None:
    """MERGE net changes (``_change_type`` insert/update_postimage/delete, the table's columns)
    into the Delta table at ``path``; creates it from the upserts when there is none. Applying
    the same net changes twice leaves the table as once (upserts and deletes by key)."""
    own = [c for c in net.column_names if c not in METADATA_NAMES]
    rows = lake_types(net.select([*own, "_change_type"]))
    if not DeltaTable.is_deltatable(path):
        upserts = rows.filter(pc.not_equal(rows.column("_change_type"), "delete")).drop_columns(["_change_type"])
        write_deltalake(path, upserts, commit_properties=commit)
        return
    on = " AND ".join(f"t.`{k}` = s.`{k}`" for k in key)
    columns = {f"`{c}`": f"s.`{c}`" for c in own}
    (DeltaTable(path).merge(rows, on, source_alias="s", target_alias="t", merge_schema=True, commit_properties=commit)
     .when_matched_delete("s._change_type = 'delete'")
     .when_matched_update(columns, "s._change_type != 'delete'")
     .when_not_matched_insert(columns, "s._change_type != 'delete'")
     .execute())


def last_position(path: str) -> Position | None:
    """Where the changes landed in the Delta table at ``path`` end (its last commit that says)."""
    if not DeltaTable.is_deltatable(path):
        return None
    for commit in DeltaTable(path).history():
        if POSITION in commit:
            return Position.from_offset(json.loads(commit[POSITION]))
    return None


def run(archive: str, table: str, lake: str, *, starting: str = "earliest", key: Sequence[str] | None = None,
        until: Position | None = None) -> tuple[Position, Position] | None:
    """One run: the changes after the table's position (``starting`` the first time), up to
    what is complete (at most ``until``), merged in one Delta commit with the new position.
    Returns (start, end), or None when nothing was new."""
    source = Archive(archive)
    start = last_position(lake) or source.resolve_start(starting)
    end = source.end(start, target=until)
    if end == start:
        return None
    files = source.files()
    names = [n for n, _ in files]
    paths = [p for _, p in files[names.index(start.file): names.index(end.file) + 1]]
    commit = CommitProperties(custom_metadata={POSITION: json.dumps(end.to_offset())})
    with vecbinlog.open(paths, start=start.pos, stop=end.pos) as log:  # start in the first file, stop in the last
        try:
            changes = log.read_table(table)
        except KeyError:  # no change of the table in the stretch
            changes = None
        key = list(key) if key else table_key(log.history(), table)
    if changes is None or changes.num_rows == 0:
        if DeltaTable.is_deltatable(lake):  # the position moves on, in a commit of no rows
            schema = DeltaTable(lake).schema().to_arrow()
            write_deltalake(lake, pa.schema(schema).empty_table(), mode="append", commit_properties=commit)
        return start, end
    if not key:
        raise ValueError(f"{table}: the binlog gives no primary key (binlog_row_metadata=FULL): name it with --key")
    merge_net_changes(lake, net_changes(changes, key), key, commit)
    return start, end


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", help="a folder, a glob, a mysql-bin.index (local or s3://...)")
    parser.add_argument("table", help="db.table")
    parser.add_argument("lake", help="the Delta table's folder (or URI)")
    parser.add_argument("--starting", default="earliest", help="the first run's start: earliest, latest, FILE:POS, "
                        "a GTID (the last one already in the table) or a time")
    parser.add_argument("--key", default=None, help="key columns, comma-separated (default: the primary key)")
    args = parser.parse_args(argv)
    done = run(args.archive, args.table, args.lake, starting=args.starting,
               key=args.key.split(",") if args.key else None)
    print(f"{args.table}: nothing new" if done is None else f"{args.table}: {done[0]} .. {done[1]} -> {args.lake}")


if __name__ == "__main__":
    main()
