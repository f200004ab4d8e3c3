"""The ``vecbinlog`` command line's arguments: the parser, its shared option groups, and the
argument types that turn a bad value into a usage error (exit 2: one line, and where ``--help``
tells more).

The parser names the command in ``args.command``; :data:`vecbinlog.cli.commands.COMMANDS` runs it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
from typing import Any, NoReturn

from .. import __version__
from ..errors import VecbinlogError
from .index import add_parser as add_index_parser
from .sync import add_parser as add_sync_parser


class UsageError(VecbinlogError):
    """Bad usage found after parsing (a table the binlog does not have, an output that would be
    overwritten or whose suffix is not its format): one line on stderr, exit 2."""


#: rows per Parquet row group that ``to-parquet`` writes (bounded row groups; its help says it)
ROW_GROUP_ROWS = 128 * 1024

PROG = "vecbinlog"
#: the values of --change-types (an update is both its images)
CHANGE_CHOICES = ("insert", "update", "delete")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, as the other errors of the command
    line, with the command's ``--help`` to turn to (instead of the usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


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
    bad = [s for s in items if s not in CHANGE_CHOICES]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"{', '.join(bad) or repr(text)}: change types are some of {', '.join(CHANGE_CHOICES)} (comma-separated)"
        )
    return items


def _charsets(text: str) -> dict[str, dict[str, str]]:
    """``--charsets``: JSON of ``{"db.table": {"column or @N": "charset"}}``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON ({exc}); e.g. '{{\"db.t\": {{\"c\": \"cp932\"}}}}'") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) and all(isinstance(c, str) for c in v.values())
                                              for v in value.values()):
        raise argparse.ArgumentTypeError(f"{text!r}: a JSON object of tables, each an object of column: charset")
    return value


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return v


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _gtid_set(text: str) -> str:
    """--gtids: checked here, so that a bad set is a usage error."""
    from ..binlog.gtid import GtidSet

    try:
        GtidSet(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def _until(text: str | None) -> int | str | tuple[str, int] | _dt.datetime | None:
    """snapshot --until: an offset, FILE:OFFSET, an ISO date-time, or a GTID."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    if re.fullmatch(r"\d+-\d+-\d+|" + _UUID + r"(:[A-Za-z_][A-Za-z0-9_]*)?:\d+", text):
        return text  # a GTID: MariaDB domain-server-seq, MySQL uuid[:tag]:gno
    name, sep, pos = text.rpartition(":")
    if sep and pos.isdigit() and not re.fullmatch(r"[\d\-T :.+]*", name):
        return (name, int(pos))  # mysql-bin.000002:1234
    try:
        return _dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is none of POS, FILE:POS, an ISO date-time or a GTID (e.g. 2494, mysql-bin.000002:2494, "
            "2024-05-01T12:00:00, 0-1-6, 3E11FA47-71CA-11E1-9E33-C80AA9429562:23)"
        ) from None


EPILOG = """\
exit codes: 0 success, 1 a file could not be read (decoding error, checksum mismatch,
missing file), 2 bad usage (a bad option, a table the files do not have, an output that
would be overwritten or whose suffix is not its format). Errors are one line on stderr;
--debug prints the traceback. What matches no row says so on stderr (exit 0; -q: not).
"""


def _common(debug_default: Any = False) -> Parser:
    p = Parser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument("-q", "--quiet", action="store_true", default=debug_default,
                   help="no progress bar and no warnings on stderr (errors are still printed)")
    g.add_argument("--debug", action="store_true", default=debug_default,
                   help="print the Python traceback of an error")
    return p


def _index_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--index", metavar="LOCATION",
                   help=f"an archive index of the files (`vecbinlog index`, a folder or URI): what the "
                        f"command shows of them comes from it; {what}")


def _reading(snapshot: bool = False) -> Parser:
    p = Parser(add_help=False)
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
    d.add_argument("--charsets", metavar="JSON", type=_charsets,
                   help="the charset of text columns, as vecbinlog.open(charsets=) takes it: "
                        "'{\"db.table\": {\"column\": \"cp932\"}}' (\"*\": every table); \"binary\" reads a "
                        "column as its bytes")
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
    parser = Parser(
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

    def add(name: str, help: str, description: str, parents: list[Parser] | None = None
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
    _index_option(p, "with --no-decode, no binlog is read: each table's row images by change type "
                     "come from the index (unfiltered)")

    p = add("tables", "every table with its columns, Arrow types and MySQL types",
            "Every table with rows events (filtered by --tables), with its columns as cat, "
            "to-parquet and read_table give them: one schema over every layout the table has in "
            "the files (ALTER TABLE, DROP and CREATE TABLE: columns matched by name, types widened), "
            "from the headers, TABLE_MAPs and DDL, no row decoded. Per column the Arrow type, and "
            "the MySQL type and charset from the field metadata. The change-log columns "
            "(_change_type, ...) are not listed.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _index_option(p, "no binlog is read")

    p = add("cat", "print a table's change log (aligned text, CSV or JSON lines)",
            "Print the change log of one table, in log order, in one schema over every layout "
            "the table has in the files (the columns of `vecbinlog tables`; NULL where a layout "
            "lacks a column): one header, the same keys in every JSON line. Values are Arrow's "
            "to_pylist() values; binary as hex (0x... in the table format), temporal values in "
            "ISO 8601, TIME as [-]HH:MM:SS[.ffffff], DECIMAL exact, lists/structs as JSON.")
    p.add_argument("--table", "-t", required=True, metavar="DB.TABLE", help="the table to print")
    p.add_argument("--format", "-f", choices=("table", "csv", "jsonl"), default="table",
                   help="table: aligned text, long cells truncated (default); csv: with a "
                        "header, NULL as an empty field; jsonl: one JSON object per row")
    p.add_argument("--limit", "-n", type=_positive, metavar="N", help="print at most N rows")
    p.add_argument("--columns", "-c", metavar="NAMES",
                   help="print only these columns, in this order (comma-separated: the table's own and "
                        "metadata columns, e.g. id,price,_change_type); the others are not decoded")
    p.add_argument("--no-metadata", action="store_true",
                   help="print the table's own columns only, none of the metadata columns (_change_type...)")
    p.add_argument("--max-width", type=_positive, default=40, metavar="CHARS",
                   help="table format: cut text cells wider than their column, which is at most "
                        "this wide (default 40; 0 = never cut)")

    p = add("to-parquet", "write every table's change log as a Parquet (or Arrow, CSV) dataset",
            "Write one dataset per table in hive-style folders, "
            "OUTDIR/table=db.table/part-00000.parquet, while decoding (one record batch at a "
            "time: a table is never held whole). Parquet is zstd-compressed with row groups of "
            f"at most {ROW_GROUP_ROWS} rows. Every batch is fitted to its table's one schema over "
            "all its layouts (ALTER TABLE...), so its part files share it. Written in a hidden "
            "folder of OUTDIR and moved into place at the end: a run that fails leaves OUTDIR "
            "as it was.")
    p.add_argument("outdir", metavar="OUTDIR", help="the output folder (created if missing)")
    p.add_argument("--format", "-f", choices=("parquet", "arrow", "csv"), default="parquet",
                   help="parquet (default); arrow: an Arrow IPC file per part (zstd); csv: a CSV "
                        "per part, values as `cat --format csv` prints them")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the part files of tables already in OUTDIR (otherwise an error)")

    p = add("snapshot", "write a table's rows as of a point in the log (replayed by primary key)",
            "Replay the change log of one table by its primary key (or --key) up to --until: a "
            "byte offset in the last file, FILE:OFFSET, an ISO date-time (UTC without a zone), "
            "or a GTID (uuid:N, uuid:tag:N, domain-server-seq; that transaction included); the "
            "end of the files without it. OUT's suffix is its format: .parquet (zstd) or .csv "
            "(any other is refused). Needs FULL row images.")
    p.add_argument("out", metavar="OUT", help="the output file: .parquet or .csv (not replaced without --overwrite)")
    p.add_argument("--table", "-t", required=True, metavar="DB.TABLE", help="the table")
    p.add_argument("--key", metavar="COLUMNS", help="key columns, comma-separated (default: the primary key)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT if it exists (otherwise an error)")

    p = add("events", "every event, as SHOW BINLOG EVENTS lists them (file, pos, type, server_id, end_log_pos, info)",
            "List the events of the files as SHOW BINLOG EVENTS does: file, offset (pos), type (the "
            "server's enum name, as `info` counts them), server_id, end_log_pos and info (the text the "
            "server gives: the statement, GTID, xid, table map, rotate...). --json: one JSON object per "
            "event (with type_code, size, timestamp and flags too). No row is decoded.",
            parents=[_common(argparse.SUPPRESS), _files()])
    _positions(p, "events")
    p.add_argument("--limit", "-n", type=_positive, metavar="N", help="print at most N events")
    p.add_argument("--json", action="store_true", help="one JSON object per event (JSON lines)")

    p = add("verify", "check the CRC32 of every event; exit 1 at the first mismatch",
            "Check the CRC32 checksum of every event of every file (files written with "
            "binlog_checksum=CRC32). Prints how many events each file has checked; the first event "
            "whose checksum does not match is an error (exit 1) naming the file, its offset and type.",
            parents=[_common(argparse.SUPPRESS), _files()])
    _strict(p)

    add_sync_parser(sub, [_common(argparse.SUPPRESS)], EPILOG)  # vecbinlog/cli/sync.py
    add_index_parser(sub, [_common(argparse.SUPPRESS)], EPILOG)  # vecbinlog/cli/index.py
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


def _files() -> Parser:
    p = Parser(add_help=False)
    p.add_argument("files", metavar="FILE", nargs="+",
                   help="binlog files (or a glob, or the server's .index file), in log order")
    return p
