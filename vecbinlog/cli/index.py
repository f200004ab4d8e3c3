"""``vecbinlog index``: the archive index (:func:`vecbinlog.build_index`) of an archive built or
brought up to date. Its arguments (:func:`add_parser`, called by
:func:`vecbinlog.cli.parser.build_parser`) and the command (:func:`cmd_index`, in
:data:`vecbinlog.cli.commands.COMMANDS`).

Prints one line, :meth:`vecbinlog.index.IndexResult.summary`; a progress bar of the files
indexed is drawn on stderr when it is a terminal (not with ``--quiet``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .progress import stderr_isatty

__all__ = ["add_parser", "cmd_index"]

DESCRIPTION = """\
Index the binlog files of an archive at LOCATION: one small Parquet file per binlog (its
transaction starts, tables, TABLE_MAPs, DDL statements and the ranges of each table's rows
events), from one walk of its event headers, files in parallel. Planning a read from the
index (vecbinlog.splits.plan_splits(..., index=LOCATION)) reads no binlog. Run it again to
bring the index up to date: files already indexed and unchanged are skipped, files that grew
are extended (walked from where their index ended), files that changed otherwise are indexed
again with a warning. A file larger than twice --range-bytes is indexed in ranges, a task
each, their summaries joined (the index one walk of it gives).
See docs/spark.md, "Where the work is".
"""


def add_parser(sub: Any, parents: list[argparse.ArgumentParser], epilog: str) -> argparse.ArgumentParser:
    """The ``index`` command's parser, added to the subparsers ``sub``."""
    p = sub.add_parser("index", help="build or update the archive index planning reads from (no binlog read then)",
                       description=DESCRIPTION, parents=parents, epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("archive", metavar="ARCHIVE", nargs="+",
                   help="binlog files, a glob, a folder or a mysql-bin.index; local or URIs (s3://...)")
    p.add_argument("location", metavar="LOCATION", help="the index: a folder (created) or a URI (s3://bucket/index)")
    p.add_argument("--processes", "-j", type=int, metavar="N",
                   help="files indexed at once, a process each (default: one per GiB to index, at most "
                        "the CPUs this process may use)")
    p.add_argument("--range-bytes", metavar="BYTES", default="256m",
                   help="a file larger than twice this is indexed in ranges of about this size, a task "
                        "each (default 256m; 0: every file one task)")
    p.add_argument("--no-verify-checksums", action="store_true",
                   help="do not check the CRC32 of each file's FORMAT_DESCRIPTION_EVENT")
    return p


class _Bar:
    """A tqdm bar of the files indexed (only on a terminal, without --quiet)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.bar: Any = None  #: the tqdm bar, once shown
        self.enabled = not args.quiet and stderr_isatty()

    def __call__(self, done: int, total: int, name: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None and (total != self.bar.total or done < self.bar.n):  # a second round (files
            self.bar.close()  # whose ranges did not join, indexed whole)
            self.bar = None
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="index", unit="task", file=sys.stderr, leave=False, dynamic_ncols=True)
        self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(name, refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_index(args: argparse.Namespace) -> int:
    """``index``: :func:`vecbinlog.build_index`."""
    from ..errors import ArchiveIndexError
    from ..index import build_index

    from ..log.config import text_bytes

    if args.processes is not None and args.processes < 1:
        print(f"vecbinlog: error: --processes must be at least 1, not {args.processes}", file=sys.stderr)
        return 2
    try:
        range_bytes = None if args.range_bytes.strip() == "0" else text_bytes(args.range_bytes)
        if range_bytes is not None and range_bytes < 1 << 16:
            raise ValueError("at least 64k (or 0)")
    except ValueError as exc:
        print(f"vecbinlog: error: --range-bytes {args.range_bytes!r}: {exc}", file=sys.stderr)
        return 2
    archive = args.archive[0] if len(args.archive) == 1 else list(args.archive)
    bar = _Bar(args)
    try:
        done = build_index(archive, args.location, processes=args.processes, range_bytes=range_bytes,
                           verify_checksums=not args.no_verify_checksums, progress=bar)
    except ArchiveIndexError as exc:  # an index file of another format version: one line, exit 1
        print(f"vecbinlog: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    print(done.summary())
    return 0
