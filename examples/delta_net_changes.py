"""A binlog archive landed in a Delta table, run after run, without Spark: ``vecbinlog.lake.sync_delta``.

    pip install -e ".[delta]"
    python examples/delta_net_changes.py ARCHIVE shop.orders lake/orders

(``vecbinlog sync ARCHIVE --table shop.orders --delta lake/orders`` is the same, as a command.)
Each run takes what is new in the archive since the last run (a folder, a glob, a
``mysql-bin.index``, local or ``s3://...``; the newest file up to its last complete
transaction), reduces it to one row per primary key and MERGEs that into the Delta table; the
position reached is written in the same Delta commit, so each change lands once. The first run
creates the table. Types, schema changes, limits: docs/lake.md.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from vecbinlog.lake import sync_delta
from vecbinlog.lake.delta import DeltaTarget
from vecbinlog.streaming import Position


def run(archive: str, table: str, lake: str, *, starting: str = "earliest", key: Sequence[str] | None = None,
        until: Position | None = None) -> tuple[Position, Position] | None:
    """One run: (start, end) of what it applied, or None when nothing was new."""
    done = sync_delta(archive, table, lake, key=key, starting=starting, until=until)
    return (done.start, done.end) if done.commits else None


def last_position(lake: str) -> Position | None:
    """Where the changes in the Delta table at ``lake`` end (None: no table yet)."""
    state = DeltaTarget(lake).state()
    return None if state is None else state.commit.position


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", help="a folder, a glob, a mysql-bin.index (local or s3://...)")
    parser.add_argument("table", help="db.table")
    parser.add_argument("lake", help="the Delta table's folder (or URI)")
    parser.add_argument("--starting", default="earliest", help="the first run's start: earliest, latest, FILE:POS, "
                        "a GTID (the last one already in the table) or a time")
    parser.add_argument("--key", default=None, help="key columns, comma-separated (default: the primary key)")
    args = parser.parse_args(argv)
    done = sync_delta(args.archive, args.table, args.lake, starting=args.starting,
                      key=args.key.split(",") if args.key else None)
    print(done.summary())


if __name__ == "__main__":
    main()
