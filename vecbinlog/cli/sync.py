"""``vecbinlog sync``: what is new in an archive MERGEd into a Delta or an Iceberg table, each
change once (:mod:`vecbinlog.lake`). Its arguments (:func:`add_parser`, called by
:func:`vecbinlog.cli.parser.build_parser`) and the command (:func:`cmd_sync`, in
:data:`vecbinlog.cli.commands.COMMANDS`).

Prints one line, :meth:`vecbinlog.lake.SyncResult.summary`; a progress bar of the binlog bytes
read and the commits made is drawn on stderr when it is a terminal (not with ``--quiet``).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BinlogError
from .progress import stderr_isatty

if TYPE_CHECKING:  # vecbinlog.lake is imported by the command only: not by every start of the CLI
    from ..lake import SyncStep

__all__ = ["add_parser", "cmd_sync"]

DESCRIPTION = """\
Take what is new in a binlog archive since the last sync and apply it to a lake table that
looks like the MySQL table: one row per primary key (a MERGE of each stretch's net changes:
upserts and deletes), or, for a table without a primary key, its change log appended. The
position reached is written in the same commit as the rows, so a sync that is stopped leaves
the table as it was and the next one applies the same changes once. The first sync creates the
table. The newest file of the archive is read up to its last complete transaction. Run it
again (cron, a loop) to keep the table up to date. Types, schema changes and limits:
docs/lake.md.
"""


def _size(text: str) -> int:
    from ..log.config import text_bytes  # at parse time: --help loads no library (tests/test_startup.py)

    try:
        return text_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"KEY=VALUE, not {text!r}")
    return key, value


def add_parser(sub: Any, parents: list[argparse.ArgumentParser], epilog: str) -> argparse.ArgumentParser:
    """The ``sync`` command's parser, added to the subparsers ``sub``."""
    p = sub.add_parser("sync", help="apply what is new in an archive to a Delta or Iceberg table, each change once",
                       description=DESCRIPTION, parents=parents, epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("archive", metavar="ARCHIVE", nargs="+",
                   help="a folder, a glob, a mysql-bin.index or binlog files; local or URIs (s3://...)")
    p.add_argument("--table", "-t", required=True, metavar="DB.TABLE", help="the MySQL table")
    where = p.add_argument_group("the lake table (one of)")
    one = where.add_mutually_exclusive_group(required=True)
    one.add_argument("--delta", metavar="PATH", help="a Delta table: a folder or a URI (s3://bucket/lake/orders)")
    one.add_argument("--iceberg-table", metavar="NS.TABLE", help="an Iceberg table of --iceberg-catalog")
    where.add_argument("--iceberg-catalog", metavar="URI",
                       help="sqlite:///catalog.db, postgresql://..., http(s)://... (REST), or a catalog "
                            "named in ~/.pyiceberg.yaml")
    where.add_argument("--iceberg-warehouse", metavar="URI",
                       help="where new Iceberg tables go (default for SQLite: the catalog file's folder)")
    where.add_argument("--storage-option", metavar="KEY=VALUE", type=_pair, action="append", default=[],
                       help="a Delta storage option (AWS_ENDPOINT_URL=..., AWS_REGION=...); repeatable")
    s = p.add_argument_group("what to sync")
    s.add_argument("--key", metavar="COLUMNS", help="key columns, comma-separated (default: the primary key)")
    s.add_argument("--starting", metavar="POS", default="earliest",
                   help="where the first sync starts: earliest (default), latest, FILE:POS, a GTID (the last "
                        "transaction already in the table) or an ISO date-time")
    s.add_argument("--until", metavar="FILE:POS", help="go no further than this position")
    s.add_argument("--max-bytes", metavar="SIZE", type=_size,
                   help="binlog bytes read and applied per commit (default 64m, vecbinlog.lake.DEFAULT_MAX_BYTES; "
                        "64k, 1g...)")
    s.add_argument("--schema", metavar="FILE",
                   help="CREATE TABLE statements (mysqldump --no-data) for binlogs without FULL metadata")
    s.add_argument("--no-verify-checksums", action="store_true", help="do not check the CRC32 of the events")
    return p


class _Bar:
    """A tqdm bar of the binlog bytes of the run (only on a terminal, without --quiet)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.bar: Any = None  #: the tqdm bar, once shown
        self.enabled = not args.quiet and stderr_isatty()

    def __call__(self, step: SyncStep) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=step.total, desc="sync", unit="B", unit_scale=True, unit_divisor=1024,
                            file=sys.stderr, leave=False, dynamic_ncols=True)
        self.bar.update(step.done - self.bar.n)
        self.bar.set_postfix_str(f"{step.changes:,} changes, {step.commits} commits, at {step.at}", refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_sync(args: argparse.Namespace) -> int:
    """``sync``: one run of :func:`vecbinlog.lake.sync_delta` or :func:`~vecbinlog.lake.sync_iceberg`."""
    from ..lake import LakeError

    archive = args.archive[0] if len(args.archive) == 1 else list(args.archive)
    options: dict[str, Any] = {"key": [k.strip() for k in args.key.split(",") if k.strip()] if args.key else None,
                               "starting": args.starting, "until": args.until,
                               "verify_checksums": not args.no_verify_checksums}
    if args.max_bytes is not None:
        options["max_bytes"] = args.max_bytes
    if args.schema:
        options["schema"] = Path(args.schema).read_text(encoding="utf-8")
    bar = _Bar(args)
    try:
        if args.delta is not None:
            if args.iceberg_catalog or args.iceberg_warehouse:
                return _usage(args, "--iceberg-catalog and --iceberg-warehouse go with --iceberg-table, not --delta")
            from ..lake import sync_delta

            done = sync_delta(archive, args.table, args.delta, storage_options=dict(args.storage_option) or None,
                              progress=bar, **options)
        else:
            if not args.iceberg_catalog:
                return _usage(args, "--iceberg-table needs --iceberg-catalog URI")
            if args.storage_option:
                return _usage(args, "--storage-option is for --delta tables (an Iceberg catalog has its own)")
            from ..lake import sync_iceberg

            done = sync_iceberg(archive, args.table, args.iceberg_table, catalog=args.iceberg_catalog,
                                warehouse=args.iceberg_warehouse, progress=bar, **options)
    except (LakeError, ImportError) as exc:
        return _usage(args, str(exc))
    except ValueError as exc:
        if isinstance(exc, BinlogError):
            raise
        return _usage(args, str(exc))  # a bad --starting, --until, --key...
    finally:
        bar.close()
    print(done.summary())
    return 0


def _usage(args: argparse.Namespace, message: str) -> int:
    """A usage error found after parsing, as the other commands print theirs: one line, exit 2."""
    if args.debug and sys.exc_info()[0] is not None:
        traceback.print_exc()
    print(f"vecbinlog: error: {' '.join(message.split())}", file=sys.stderr)
    return 2

