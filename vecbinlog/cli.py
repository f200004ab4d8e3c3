"""The ``vecbinlog`` command line: look into binlogs and export their change logs.

Commands: ``info``, ``tables``, ``cat``, ``snapshot``, ``to-parquet``, ``events``, ``verify``.
Run ``vecbinlog COMMAND --help``.

Exit codes: 0 success, 1 a file could not be read (a :class:`vecbinlog.BinlogError`, or an
OS error such as a missing file), 2 bad usage. Errors are one line on stderr,
``vecbinlog: error: <file>, offset N, EVENT: message``; ``--debug`` adds the traceback.

How values are printed (``cat``, ``to-parquet --format csv``, ``snapshot OUT.csv``): see
:mod:`vecbinlog.text` (whole columns at a time, then one compiled loop writes the lines).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import sys
import time
import traceback
import urllib.parse
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import __version__
from .errors import BinlogError, TableNotFoundError
from .layout import MAGIC_LEN

PROG = "vecbinlog"
ROW_GROUP_ROWS = 128 * 1024  #: rows per Parquet row group (bounded row groups)
CHANGE_TYPES = ("insert", "update", "delete")


class UsageError(Exception):
    """Bad usage found after parsing (a table the binlog does not have, an output that would be
    overwritten): one line on stderr, exit 2."""


# ---------------------------------------------------------------------------------------
# progress and warnings
# ---------------------------------------------------------------------------------------
class Progress:
    """A tqdm bar on stderr of binlog bytes done (and rows/s), per batch; a no-op unless
    stderr is a terminal and ``--quiet`` is not given."""

    def __init__(self, log, args: argparse.Namespace, desc: str = "") -> None:
        self.enabled = not args.quiet and _stderr_isatty()
        self.base: dict[str, int] = {}
        total = 0
        for f in log.files:
            self.base.setdefault(f.name, total)
            total += f.size
        self.total = total
        self.rows = 0
        self.t0 = time.monotonic()
        self.bar = None
        if self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, leave=False, dynamic_ncols=True,
            )

    def start(self, desc: str) -> None:
        """Start over (another pass over the files, for the next table)."""
        if self.bar is not None:
            self.bar.reset(total=self.total)
            self.bar.set_description(desc)

    def batch(self, batch: pa.RecordBatch) -> None:
        self.rows += batch.num_rows
        if self.bar is None or batch.num_rows == 0:
            return
        last_file = batch.column("_log_file")[-1].as_py()
        done = self.base.get(last_file, 0) + int(batch.column("_log_pos")[-1].as_py())
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)
        rate = self.rows / max(time.monotonic() - self.t0, 1e-9)
        self.bar.set_postfix_str(f"{self.rows:,} rows, {rate:,.0f} rows/s", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stderr_isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _warn_line(msg: str) -> None:
    line = f"{PROG}: warning: {' '.join(msg.split())}"
    try:
        from tqdm import tqdm

        tqdm.write(line, file=sys.stderr)
    except ImportError:  # pragma: no cover
        print(line, file=sys.stderr)


# ---------------------------------------------------------------------------------------
# argument types
# ---------------------------------------------------------------------------------------
def _iso_datetime(text: str) -> _dt.datetime:
    try:
        return _dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO date-time: {text!r} (e.g. 2024-05-01, 2024-05-01T12:00:00, 2024-05-01 12:00+02:00)"
        ) from None


def _position(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte offset: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"a byte offset cannot be negative: {text}")
    return v


def _change_types(text: str) -> list[str]:
    items = [s.strip().lower() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in CHANGE_TYPES]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"{', '.join(bad) or repr(text)}: change types are some of {', '.join(CHANGE_TYPES)} (comma-separated)"
        )
    return items


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return v


# ---------------------------------------------------------------------------------------
# the parser
# ---------------------------------------------------------------------------------------
EPILOG = """\
exit codes: 0 success, 1 a file could not be read (decoding error, checksum mismatch,
missing file), 2 bad usage (a bad option, a table the files do not have, an output that
would be overwritten). Errors are one line on stderr; --debug prints the traceback.
"""


def _common(debug_default: Any = False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument("-q", "--quiet", action="store_true", default=debug_default,
                   help="no progress bar and no warnings on stderr (errors are still printed)")
    g.add_argument("--debug", action="store_true", default=debug_default,
                   help="print the Python traceback of an error")
    return p


def _reading(snapshot: bool = False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("files", metavar="FILE", nargs="+",
                   help="binlog files, in log order (read as one change log)")
    f = p.add_argument_group(
        "filters (applied before decoding; passed to vecbinlog.open)"
    )
    f.add_argument("--tables", metavar="GLOB", action="append",
                   help="only tables matching these db.table glob patterns, e.g. 'shop.*'; "
                        "repeat the option or separate patterns with commas")
    _positions(f, "rows events")
    f.add_argument("--since", metavar="DATETIME", type=_iso_datetime,
                   help="only rows events at or after this ISO date-time (no time zone = UTC)")
    if snapshot:
        f.add_argument("--until", metavar="POS|FILE:POS|TIME|GTID", type=_until,
                       help="the snapshot's point: a byte offset in the last file, FILE:OFFSET, an ISO "
                            "date-time (UTC without a zone), or a GTID (that transaction included)")
    else:
        f.add_argument("--until", metavar="DATETIME", type=_iso_datetime,
                       help="only rows events before this ISO date-time (no time zone = UTC)")
    f.add_argument("--gtids", metavar="SET", type=_gtid_set,
                   help="only transactions in this GTID set: MySQL uuid:1-5:7 (tags uuid:tag:1-3), "
                        "MariaDB domain-server-seq or domain-server-first..last; comma-separated")
    f.add_argument("--change-types", metavar="TYPES", type=_change_types,
                   help="only these changes: some of insert,update,delete (comma-separated)")
    d = p.add_argument_group("decoding")
    _strict(d)
    d.add_argument("--no-verify-checksums", action="store_true",
                   help="do not check the CRC32 of the events")
    d.add_argument("--invalid-dates", choices=("null", "string"), default="null",
                   help="zero dates ('0000-00-00'): null (default), or every temporal column "
                        "as MySQL's text")
    d.add_argument("--rolled-back", choices=("exclude", "keep"), default="exclude",
                   help="changes that did not take effect (their transaction rolled back, or was cut "
                        "off): left out with a warning (default), or kept, marked by _outcome")
    d.add_argument("--queries", action="store_true",
                   help="add the _query column: the SQL statement of each change, when logged "
                        "(MySQL ROWS_QUERY / MariaDB ANNOTATE_ROWS events)")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Decode MySQL/MariaDB binary logs (row-based) into Apache Arrow: "
                    "inspect them, print a table's change log, export every table to Parquet.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_common(argparse.SUPPRESS)],
    )
    parser.add_argument("-V", "--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = [_common(argparse.SUPPRESS), _reading()]

    def add(name: str, help: str, description: str, parents: list[argparse.ArgumentParser] | None = None
            ) -> argparse.ArgumentParser:
        if parents is None:
            parents = [_common(argparse.SUPPRESS), _reading(snapshot=True)] if name == "snapshot" else common
        return sub.add_parser(name, help=help, description=description, parents=parents,
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)

    p = add("info", "versions, checksum, time range, events by type, tables and their row changes",
            "What the files hold: server and binlog version, checksum, time range (UTC), events "
            "by type, where reading stopped (a truncated file), and every table with its rows "
            "events (counted from the headers, unfiltered) and row changes (counted by decoding "
            "the table with the filters applied: inserts, updates as before+after pairs counted "
            "once, deletes, and the total of row images).")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document)")
    p.add_argument("--no-decode", action="store_true",
                   help="only walk the event headers: do not decode tables to count row changes")
    p.set_defaults(func=cmd_info, parser=p)

    p = add("tables", "every table with its columns, Arrow types and MySQL types",
            "Every table with rows events (filtered by --tables), with its columns as its first "
            "TABLE_MAP declares them: the Arrow type, and the MySQL type and charset from the "
            "field metadata. The change-log columns (_change_type, ...) are not listed.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_tables, parser=p)

    p = add("cat", "print a table's change log (aligned text, CSV or JSON lines)",
            "Print the change log of one table, in log order. Values are Arrow's to_pylist() "
            "values; binary as hex (0x... in the table format), temporal values in ISO 8601, "
            "TIME as [-]HH:MM:SS[.ffffff], DECIMAL exact, lists/structs as JSON.")
    p.add_argument("--table", "-t", required=True, metavar="DB.TABLE", help="the table to print")
    p.add_argument("--format", "-f", choices=("table", "csv", "jsonl"), default="table",
                   help="table: aligned text, long cells truncated (default); csv: with a "
                        "header, NULL as an empty field; jsonl: one JSON object per row")
    p.add_argument("--limit", "-n", type=_positive, metavar="N", help="print at most N rows")
    p.add_argument("--max-width", type=_positive, default=40, metavar="CHARS",
                   help="table format: cut cells longer than this (default 40; 0 = never)")
    p.set_defaults(func=cmd_cat, parser=p)

    p = add("to-parquet", "write every table's change log as a Parquet (or Arrow, CSV) dataset",
            "Write one dataset per table in hive-style folders, "
            "OUTDIR/table=db.table/part-00000.parquet, while decoding (one record batch at a "
            "time: a table is never held whole). Parquet is zstd-compressed with row groups of "
            f"at most {ROW_GROUP_ROWS} rows. When a table's layout changes (ALTER TABLE), a new "
            "part file starts with the new schema.")
    p.add_argument("outdir", metavar="OUTDIR", help="the output folder (created if missing)")
    p.add_argument("--format", "-f", choices=("parquet", "arrow", "csv"), default="parquet",
                   help="parquet (default); arrow: an Arrow IPC file per part (zstd); csv: a CSV "
                        "per part, values as `cat --format csv` prints them")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the part files of tables already in OUTDIR (otherwise an error)")
    p.set_defaults(func=cmd_to_parquet, parser=p)

    p = add("snapshot", "write a table's rows as of a point in the log (replayed by primary key)",
            "Replay the change log of one table by its primary key (or --key) up to --until: a "
            "byte offset in the last file, FILE:OFFSET, an ISO date-time (UTC without a zone), "
            "or a GTID (uuid:N, uuid:tag:N, domain-server-seq; that transaction included); the "
            "end of the files without it. Writes Parquet (zstd), or CSV when OUT ends in .csv. "
            "Needs FULL row images.")
    p.add_argument("out", metavar="OUT", help="the output file (.parquet, or .csv)")
    p.add_argument("--table", "-t", required=True, metavar="DB.TABLE", help="the table")
    p.add_argument("--key", metavar="COLUMNS", help="key columns, comma-separated (default: the primary key)")
    p.set_defaults(func=cmd_snapshot, parser=p)

    p = add("events", "every event, as SHOW BINLOG EVENTS lists them (file, pos, type, server_id, end_log_pos, info)",
            "List the events of the files as SHOW BINLOG EVENTS does: file, offset (pos), type (the "
            "server's enum name, as `info` counts them), server_id, end_log_pos and info (the text the "
            "server gives: the statement, GTID, xid, table map, rotate...). --json: one JSON object per "
            "event (with type_code, size, timestamp and flags too). No row is decoded.",
            parents=[_common(argparse.SUPPRESS), _files()])
    _positions(p, "events")
    p.add_argument("--limit", "-n", type=_positive, metavar="N", help="print at most N events")
    p.add_argument("--json", action="store_true", help="one JSON object per event (JSON lines)")
    p.set_defaults(func=cmd_events, parser=p)

    p = add("verify", "check the CRC32 of every event; exit 1 at the first mismatch",
            "Check the CRC32 checksum of every event of every file (files written with "
            "binlog_checksum=CRC32). Prints how many events each file has checked; the first event "
            "whose checksum does not match is an error (exit 1) naming the file, its offset and type.",
            parents=[_common(argparse.SUPPRESS), _files()])
    _strict(p)
    p.set_defaults(func=cmd_verify, parser=p)
    return parser


def _strict(group: Any) -> None:
    group.add_argument("--strict", action="store_true",
                       help="a truncated last event is an error (exit 1) instead of a warning")


def _positions(group: Any, what: str) -> None:
    """--start/--stop: byte offsets in the first and the last file."""
    group.add_argument("--start", metavar="POS", type=_position,
                       help=f"only {what} at or after this byte offset of the first file (as mysqlbinlog --start-position)")
    group.add_argument("--stop", metavar="POS", type=_position,
                       help=f"only {what} before this byte offset of the last file (as mysqlbinlog --stop-position)")


def _files() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("files", metavar="FILE", nargs="+",
                   help="binlog files (or a glob, or the server's .index file), in log order")
    return p


#: cat reads in smaller segments and batches than the API's defaults: lines are written while
#: the next batch is decoded, so smaller pieces overlap better, start sooner and hold less
#: (270 MB narrow / 182 MB strings file, csv: 2.7 / 2.9 s -> 2.6-2.8 / 2.5-2.8 s, peak RSS
#: 459 / 685 -> 385 / 480 MB)
CAT_SEGMENT_BYTES = 8 << 20
CAT_BATCH_ROWS = 128 * 1024


def _open(args: argparse.Namespace, **options: Any):
    import vecbinlog

    tables = None
    if args.tables:
        tables = [t.strip() for arg in args.tables for t in arg.split(",") if t.strip()]
    return vecbinlog.open(
        args.files, strict=args.strict, verify_checksums=not args.no_verify_checksums,
        invalid_dates=args.invalid_dates, tables=tables, start=args.start, stop=args.stop,
        since=args.since, until=None if args.command == "snapshot" else args.until, change_types=args.change_types,
        rolled_back=args.rolled_back, queries=args.queries, gtids=args.gtids, **options,
    )


def _utc(ts: int | None) -> str | None:
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# ---------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------
def _count_changes(log, table: str, progress: Progress) -> dict[str, int]:
    counts = {"insert": 0, "update": 0, "delete": 0, "row_images": 0}
    for batch in log.iter_batches(table):
        progress.batch(batch)
        counts["row_images"] += batch.num_rows
        vc = pc.value_counts(batch.column("_change_type").cast(pa.string()))
        for item in vc.to_pylist():
            kind, n = item["values"], item["counts"]
            if kind in ("insert", "delete"):
                counts[kind] += n
            elif kind == "update_postimage":
                counts["update"] += n
    return counts


def cmd_info(args: argparse.Namespace) -> int:
    errors: list[BaseException] = []
    with _open(args) as log:
        info = log.info()
        tables: dict[str, dict[str, Any]] = {}
        for f in info["files"]:
            f["first_time"] = _utc(f["first_timestamp"])
            f["last_time"] = _utc(f["last_timestamp"])
            for name, n in f["rows_events_by_table"].items():
                if log.filter.table(name):
                    tables.setdefault(name, {"rows_events": 0})["rows_events"] += n
        if not args.no_decode:
            with Progress(log, args) as progress:
                for name in log.tables:
                    progress.start(name)
                    try:
                        tables.setdefault(name, {"rows_events": 0}).update(_count_changes(log, name, progress))
                    except BinlogError as exc:
                        tables[name]["error"] = str(exc)
                        errors.append(exc)
    out = {
        "files": info["files"],
        "tables": tables,
        "row_counts": None if args.no_decode else
        "decoded: insert, update (pairs of images counted once), delete, row_images; filters applied",
    }
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print_info(out, args)
    if errors:
        raise errors[0]
    return 0


def _print_info(out: dict[str, Any], args: argparse.Namespace) -> None:
    w = sys.stdout.write
    for f in out["files"]:
        size = "size unknown" if f["size"] is None else f"{f['size']:,} bytes"
        w(f"{f['path']}  ({size})\n")
        rows = [
            ("server version", f["server_version"]),
            ("binlog version", str(f["binlog_version"])),
            ("checksum", f["checksum"]),
            ("time range", f"{f['first_time']} .. {f['last_time']}" if f["first_time"] else "-"),
        ]
        if f.get("compression"):
            rows.append(("compression", f"{f['compression']}: read from its start, one Spark split"))
        if f.get("format_descriptions", 1) != 1:
            rows.append(("format descriptions", str(f["format_descriptions"])))
        g = f.get("gtids") or {}
        if g.get("previous"):
            rows.append(("gtids before", g["previous"]))
        if g.get("count"):
            rows.append(("gtids", f"{g['set']}  ({g['count']:,} transactions, {g['first']} .. {g['last']})"))
        stop = f["stopped_at"]
        rows.append(("stopped at", "end of file (complete)" if stop is None
                     else f"offset {stop['offset']}: {stop['reason']}"))
        for k, v in rows:
            w(f"  {k:<16} {v}\n")
        ev = f["events"]
        w(f"  events           {sum(ev.values()):,}\n")
        width = max((len(k) for k in ev), default=0)
        for k, v in sorted(ev.items(), key=lambda kv: (-kv[1], kv[0])):
            w(f"    {k:<{width}}  {v:>8,}\n")
        inner = f.get("events_in_payloads") or {}
        if inner:
            w(f"  inside compressed transactions {sum(inner.values()):,}\n")
            for k, v in sorted(inner.items(), key=lambda kv: (-kv[1], kv[0])):
                w(f"    {k:<{width}}  {v:>8,}\n")
        nd = f.get("events_not_decoded", {})
        for what, label in (("skipped", "skipped (walked over, counted)"), ("unsupported", "not decoded yet (reading their tables raises)")):
            if nd.get(what):
                w(f"  {label}: " + ", ".join(f"{k} {v:,}" for k, v in nd[what].items()) + "\n")
    tables = out["tables"]
    w("\n")
    if not tables:
        w("tables: none with rows events\n")
        return
    decoded = out["row_counts"] is not None
    head = ["table", "rows events"] + (["inserts", "updates", "deletes", "row images"] if decoded else [])
    body = []
    for name, t in tables.items():
        row = [name, f"{t['rows_events']:,}"]
        if decoded:
            if "error" in t:
                row += ["error", "", "", ""]
            else:
                row += [f"{t.get(k, 0):,}" for k in ("insert", "update", "delete", "row_images")]
        body.append(row)
    _print_aligned(head, body, right=[False] + [True] * (len(head) - 1))
    if decoded:
        w("rows events: counted from the event headers (only --tables applies); inserts, updates, deletes:\n"
          "row changes counted by decoding each table, filters applied (an update = 2 row images)\n")


def _print_aligned(head: list[str], body: list[list[str]], right: list[bool]) -> None:
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(wd) if rj else c.ljust(wd) for c, wd, rj in zip(r, widths, right)).rstrip()

    print(line(head))
    print("  ".join("-" * wd for wd in widths))
    for r in body:
        print(line(r))


def cmd_tables(args: argparse.Namespace) -> int:
    out: dict[str, list[dict[str, Any]]] = {}
    with _open(args) as log:
        for name in log.tables:
            cols = []
            for field in log.schema(name):
                md = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
                if "mysql_type" not in md:
                    continue  # a change-log column (_change_type, ...)
                cols.append({"name": field.name, "arrow_type": str(field.type), "nullable": field.nullable,
                             "mysql_type": md.get("mysql_type"), "mysql_charset": md.get("mysql_charset")})
            out[name] = cols
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    first = True
    for name, cols in out.items():
        if not first:
            print()
        first = False
        print(f"{name}  ({len(cols)} columns)")
        body = [[c["name"], c["arrow_type"], c["mysql_type"] or "", c["mysql_charset"] or ""] for c in cols]
        _print_aligned(["column", "arrow type", "mysql type", "charset"], body, right=[False] * 4)
    if not out:
        print("no tables with rows events", file=sys.stderr)
    return 0


def _limited(batches: Iterable[pa.RecordBatch], limit: int | None) -> Iterator[pa.RecordBatch]:
    left = limit
    for b in batches:
        if left is not None:
            if left <= 0:
                return
            if b.num_rows > left:
                b = b.slice(0, left)
            left -= b.num_rows
        yield b
        if left is not None and left <= 0:
            return


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _gtid_set(text: str) -> str:
    """--gtids: checked here, so that a bad set is a usage error."""
    from .gtid import GtidSet

    try:
        GtidSet(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def _until(text: str | None):
    """--until: an offset, FILE:OFFSET, an ISO date-time, or a GTID."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    if re.fullmatch(r"\d+-\d+-\d+|" + _UUID + r"(:[A-Za-z_][A-Za-z0-9_]*)?:\d+", text):
        return text  # a GTID: MariaDB domain-server-seq, MySQL uuid[:tag]:gno
    name, sep, pos = text.rpartition(":")
    if sep and pos.isdigit() and not re.fullmatch(r"[\d\-T :.+]*", name):
        return (name, int(pos))  # mysql-bin.000002:1234
    return _iso_datetime(text)


def cmd_events(args: argparse.Namespace) -> int:
    import vecbinlog

    from .text import JsonLinesText, TableText

    with vecbinlog.open(args.files) as log:
        events = log.events()
    pos = events.column("pos").to_numpy()
    file_no = np.cumsum(pos == MAGIC_LEN) - 1  # every file starts with its FORMAT_DESCRIPTION_EVENT at 4
    keep = np.ones(len(pos), bool)
    if args.start is not None:
        keep &= (file_no > 0) | (pos >= args.start)
    if args.stop is not None:
        keep &= (file_no < file_no[-1] if len(pos) else True) | (pos < args.stop)
    events = events.filter(pa.array(keep))
    if args.limit is not None:
        events = events.slice(0, args.limit)
    out = sys.stdout.buffer
    sys.stdout.flush()
    if args.json:
        names = ["file", "pos", "type", "type_code", "server_id", "end_log_pos", "size", "timestamp", "flags", "info"]
        writer: Any = JsonLinesText()
    else:
        names = ["file", "pos", "type", "server_id", "end_log_pos", "info"]
        writer = TableText(max_width=0, cut=False)
    for batch in events.select(names).to_batches(max_chunksize=TableText.CHUNK):
        writer.write(batch, out)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    import vecbinlog
    from .logset import binlog_files

    paths = binlog_files(args.files)
    total = 0
    for path in paths:
        with vecbinlog.open(path, strict=args.strict) as log:
            checked = log.verify()
            alg = log.files[0].formats[0].checksum_name
        total += checked
        if checked:
            print(f"{path}: {checked:,} events, every CRC32 matches")
        else:
            print(f"{path}: no checksums to verify (binlog_checksum {alg})")
    if len(paths) > 1:
        print(f"{len(paths)} files: {total:,} events checked, every CRC32 matches")
    return 0


def cmd_snapshot(args: argparse.Namespace) -> int:
    key = [k.strip() for k in args.key.split(",")] if args.key else None
    with _open(args) as log:
        try:
            table = log.snapshot(args.table, until=args.until, key=key)
        except ValueError as exc:
            if isinstance(exc, BinlogError):
                raise
            raise UsageError(str(exc)) from exc
    if args.out.endswith(".csv"):
        with CsvFile(args.out, table.schema) as out:
            for b in table.to_batches():
                out.write_batch(b)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, args.out, compression="zstd")
    if not args.quiet:
        print(f"{args.table}: {table.num_rows:,} rows -> {args.out}", file=sys.stderr)
    return 0


def cmd_cat(args: argparse.Namespace) -> int:
    from .text import CsvText, JsonLinesText, TableText

    out = sys.stdout.buffer
    sys.stdout.flush()
    writer = {"jsonl": JsonLinesText, "csv": CsvText}.get(args.format)
    fmt = writer() if writer is not None else TableText(args.max_width)
    def write(b: pa.RecordBatch, header: bytes) -> None:
        out.write(header)
        fmt.write(b, out)
        out.flush()

    from concurrent.futures import ThreadPoolExecutor

    with _open(args, segment_bytes=CAT_SEGMENT_BYTES, batch_rows=CAT_BATCH_ROWS) as log, \
            ThreadPoolExecutor(1, thread_name_prefix="vecbinlog-cat") as writer_thread:
        with Progress(log, args, args.table) as progress:
            gen = log.iter_batches(args.table)  # a table the files do not have: TableNotFoundError at its end
            pending = None  # the batch being formatted and written while the next is read
            try:
                names = None
                for b in _limited(gen, args.limit):
                    progress.batch(b)
                    header = b""
                    if isinstance(fmt, CsvText) and b.schema.names != names:  # first batch, or a new layout
                        header, names = fmt.header(b.schema.names), b.schema.names
                    if pending is not None:
                        pending.result()  # in order, and one batch at a time
                    pending = writer_thread.submit(write, b, header)
                    del b
                if pending is not None:
                    pending.result()
            finally:
                gen.close()
    return 0


#: Dictionary columns whose dictionary is made per batch (one entry per transaction or
#: statement of the batch): an Arrow IPC file cannot change a dictionary, so there they are
#: written as plain strings instead of starting a new part file at every batch.
PER_BATCH_DICTIONARIES = ("_gtid", "_query")


def plain_per_batch_dictionaries(batch: pa.RecordBatch) -> pa.RecordBatch:
    names = [n for n in PER_BATCH_DICTIONARIES if n in batch.schema.names]
    if not names:
        return batch
    schema = batch.schema
    for n in names:
        i = schema.get_field_index(n)
        schema = schema.set(i, schema.field(i).with_type(schema.field(i).type.value_type))
    return batch.cast(schema)


class _PartWriter:
    """The part files of one table: a new part whenever the schema (or, for Arrow IPC files,
    a dictionary) changes."""

    def __init__(self, folder: Path, fmt: str) -> None:
        self.folder = folder
        self.fmt = fmt
        self.parts = 0
        self.rows = 0
        self.writer = None
        self.schema: pa.Schema | None = None
        self.dicts: dict[int, pa.Array] = {}
        self.files: list[Path] = []

    def _fits(self, batch: pa.RecordBatch) -> bool:
        if self.writer is None or not batch.schema.equals(self.schema, check_metadata=True):
            return False
        if self.fmt == "arrow":  # the IPC file format cannot replace a dictionary
            for i, d in self.dicts.items():
                if not batch.column(i).dictionary.equals(d):
                    return False
        return True

    def write(self, batch: pa.RecordBatch) -> None:
        if self.fmt == "arrow":
            batch = plain_per_batch_dictionaries(batch)
        if not self._fits(batch):
            self.close()
            self._open(batch)
        if self.fmt == "parquet":
            self.writer.write_batch(batch, row_group_size=ROW_GROUP_ROWS)
        else:
            self.writer.write_batch(batch)
        self.rows += batch.num_rows

    def _open(self, batch: pa.RecordBatch) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        ext = {"parquet": "parquet", "arrow": "arrow", "csv": "csv"}[self.fmt]
        path = self.folder / f"part-{self.parts:05d}.{ext}"
        self.parts += 1
        self.files.append(path)
        self.schema = batch.schema
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            self.writer = pq.ParquetWriter(path, batch.schema, compression="zstd", use_compliant_nested_type=False)
        elif self.fmt == "arrow":
            self.dicts = {i: batch.column(i).dictionary for i, f in enumerate(batch.schema)
                          if pa.types.is_dictionary(f.type)}
            self.writer = pa.ipc.new_file(path, batch.schema, options=pa.ipc.IpcWriteOptions(compression="zstd"))
        else:
            self.writer = CsvFile(path, batch.schema)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class CsvFile:
    """A CSV file as ``cat --format csv`` prints it: a header, then each batch's lines."""

    def __init__(self, path: str | Path, schema: pa.Schema) -> None:
        from .text import CsvText

        self.text = CsvText()
        self.fh = open(path, "wb")
        self.fh.write(self.text.header(schema.names))

    def write_batch(self, batch: pa.RecordBatch) -> None:
        self.text.write(batch, self.fh)

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> CsvFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Writers:
    """The part writers of every table of a one-pass export. At most ``MAX_OPEN`` are open at
    a time (a binlog may hold thousands of tables): the least recently written is closed, and
    its table's next batch starts a new part file."""

    MAX_OPEN = 64

    def __init__(self, outdir: Path, fmt: str) -> None:
        self.outdir, self.fmt = outdir, fmt
        self.writers: dict[str, _PartWriter] = {}
        self.open: OrderedDict[str, None] = OrderedDict()

    def write(self, table: str, batch: pa.RecordBatch) -> None:
        pw = self.writers.get(table)
        if pw is None:
            pw = self.writers[table] = _PartWriter(table_folder(self.outdir, table), self.fmt)
        self.open[table] = None
        self.open.move_to_end(table)
        if len(self.open) > self.MAX_OPEN:
            oldest, _ = self.open.popitem(last=False)
            self.writers[oldest].close()
        pw.write(batch)

    def done(self, table: str) -> tuple[int, list[Path]]:
        """Rows written and part files of ``table``."""
        pw = self.writers.get(table)
        return (pw.rows, pw.files) if pw is not None else (0, [])

    def close(self) -> None:
        for pw in self.writers.values():
            pw.close()


def table_folder(outdir: Path, table: str) -> Path:
    """``OUTDIR/table=db.table``, the name percent-encoded as hive partitioning expects."""
    return outdir / f"table={urllib.parse.quote(table, safe='')}"


def cmd_to_parquet(args: argparse.Namespace) -> int:
    outdir = Path(args.outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"{outdir} exists and is not a folder")
    ext = {"parquet": ".parquet", "arrow": ".arrow", "csv": ".csv"}[args.format]
    with _open(args) as log:
        tables = log.tables
        for name in tables:
            old = [p for p in table_folder(outdir, name).glob("part-*") if p.is_file()]
            if old and not args.overwrite:
                raise UsageError(f"{table_folder(outdir, name)} already has part files; "
                                 "use --overwrite to replace them")
            for p in old:
                p.unlink()
        writers = _Writers(outdir, args.format)
        plans = log.plans()  # each table's one schema over its layouts (no row decoded)
        with Progress(log, args) as progress:
            progress.start(f"{len(tables)} table(s)")
            try:
                for name, batch in log.iter_tables():  # one pass over the files for every table
                    progress.batch(batch)
                    plans[name].widen(batch)  # a text column whose bytes fell back to binary
                    writers.write(name, plans[name].conform(batch))
            finally:
                writers.close()
        summary = [(name, *writers.done(name)) for name in tables]
    if not args.quiet:
        for name, rows, files in summary:
            where = files[0].parent if files else table_folder(outdir, name)
            print(f"{name}: {rows:,} rows, {len(files)} {ext[1:]} file(s) in {where}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (``sys.exit(main())``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.debug = getattr(args, "debug", False)
    args.quiet = getattr(args, "quiet", False)
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if args.quiet or text in seen:
            return
        seen.add(text)
        _warn_line(text)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            return int(args.func(args) or 0)
    except (UsageError, TableNotFoundError) as exc:  # found after parsing: one line, as the errors of the files
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BinlogError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return 0
        if args.debug:
            traceback.print_exc()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{PROG}: error: {where}{_one_line(exc.strerror or exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so, in one line unless --debug
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: internal error: {type(exc).__name__}: {_one_line(exc)}"
              + ("" if args.debug else " (run with --debug for the traceback)"), file=sys.stderr)
        return 1
    return 0  # pragma: no cover


def _silence_stdout() -> None:
    """After a closed pipe (``vecbinlog cat ... | head``): no second error at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run() -> None:  # pragma: no cover
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
