"""The command line's commands, one function each (``args`` from :mod:`vecbinlog.cli.parser`;
each returns the exit code). They use the public API only: :func:`vecbinlog.open` with the
options the parser gathered, then :class:`vecbinlog.Binlog`'s methods.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import vecbinlog

from ..arrowbuild import numbers, to_numpy
from ..binlog.spec import MAGIC_LEN
from ..errors import BinlogError
from ..log.config import default_threads
from ..log.logset import binlog_files
from .lines import CsvText, JsonLinesText, TableText
from .progress import Progress
from .sync import cmd_sync
from .writers import CsvFile, TableWriters, table_folder


class UsageError(Exception):
    """Bad usage found after parsing (a table the binlog does not have, an output that would be
    overwritten): one line on stderr, exit 2."""


#: cat reads in smaller segments and batches than the API's defaults: lines are formatted while
#: the next batch is decoded, so smaller pieces overlap better, start sooner and hold less.
#: 16 MiB since lines are formatted ahead across batches (8 MiB before: more batches, each
#: with fixed costs): 61 MB strings file 0.74 -> 0.70 s (median of 10, table), 215 MB orders
#: file 2.49 -> 2.09 s, 89 MB narrow unchanged; peak RSS 377-459 -> 373-459 MB, orders 487 ->
#: 564 MB.
CAT_SEGMENT_BYTES = 16 << 20
CAT_BATCH_ROWS = 128 * 1024


def open_log(args: argparse.Namespace, **options: Any) -> vecbinlog.Binlog:
    """:func:`vecbinlog.open` of the files with the filter and decoding options of ``args``."""
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
    """A header timestamp (seconds) as ``YYYY-MM-DD HH:MM:SS UTC``."""
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _limited(batches: Iterable[pa.RecordBatch], limit: int | None) -> Iterator[pa.RecordBatch]:
    """The batches, cut after ``limit`` rows (None: all of them)."""
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


def _count_changes(log: vecbinlog.Binlog, table: str, progress: Progress) -> dict[str, int]:
    """Inserts, updates (an update's two images counted once), deletes and row images of ``table``."""
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
    """``info``: versions, checksum, time range, events by type, and each table's changes."""
    errors: list[BaseException] = []
    with open_log(args) as log:
        info = log.info()
        tables: dict[str, dict[str, Any]] = {}
        for f in info["files"]:
            f["first_time"] = _utc(f["first_timestamp"])
            f["last_time"] = _utc(f["last_timestamp"])
            for name, n in f["rows_events_by_table"].items():
                if log.config.filter.table(name):
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
    """``info``'s text: a block per file, then the tables."""
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
    """A small table of text: a header, a rule, the rows; columns right-aligned where ``right``."""
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]

    def line(r: list[str]) -> str:
        return "  ".join(c.rjust(wd) if rj else c.ljust(wd) for c, wd, rj in zip(r, widths, right)).rstrip()

    print(line(head))
    print("  ".join("-" * wd for wd in widths))
    for r in body:
        print(line(r))


def cmd_tables(args: argparse.Namespace) -> int:
    """``tables``: each table's columns, Arrow type, MySQL type and charset."""
    out: dict[str, list[dict[str, Any]]] = {}
    with open_log(args) as log:
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


def _cat_threads(fmt: Any) -> int:
    """Threads that decode for ``cat``: the cores the line writer's threads leave (at least 1,
    the reading thread itself). On 2 cores, decoding on the reading thread alone beats two
    decoding threads beside the two formatting ones: 61 MB strings file 0.755 -> 0.726 s (median
    of 8, jsonl), 270 MB narrow 1.16 -> 1.13 s, 182 MB strings 1.22 -> 1.15 s, 5-10% less CPU
    and 30-40 MB less memory."""
    return max(1, default_threads() - fmt.THREADS)


def cmd_cat(args: argparse.Namespace) -> int:
    """``cat``: a table's change log, a batch at a time, formatted while the next is decoded."""
    out = sys.stdout.buffer
    sys.stdout.flush()
    writer = {"jsonl": JsonLinesText, "csv": CsvText}.get(args.format)
    fmt = writer() if writer is not None else TableText(args.max_width)

    with open_log(args, segment_bytes=CAT_SEGMENT_BYTES, batch_rows=CAT_BATCH_ROWS, threads=_cat_threads(fmt)) as log:
        with Progress(log, args, args.table) as progress:
            gen = log.iter_batches(args.table)  # a table the files do not have: TableNotFoundError at its end

            def items() -> Iterator[pa.RecordBatch | bytes]:
                names = None
                for b in _limited(gen, args.limit):
                    progress.batch(b)
                    if isinstance(fmt, CsvText) and b.schema.names != names:  # first batch, or a new layout
                        names = b.schema.names
                        yield fmt.header(names)
                    yield b

            try:
                fmt.write_all(items(), out)
            finally:
                gen.close()
    return 0


def cmd_snapshot(args: argparse.Namespace) -> int:
    """``snapshot``: a table's rows as of a point, to Parquet or CSV."""
    key = [k.strip() for k in args.key.split(",")] if args.key else None
    with open_log(args) as log:
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


def cmd_to_parquet(args: argparse.Namespace) -> int:
    """``to-parquet``: every table's change log as a dataset, in one pass over the files."""
    outdir = Path(args.outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"{outdir} exists and is not a folder")
    ext = {"parquet": ".parquet", "arrow": ".arrow", "csv": ".csv"}[args.format]
    with open_log(args) as log:
        tables = log.tables
        for name in tables:
            old = [p for p in table_folder(outdir, name).glob("part-*") if p.is_file()]
            if old and not args.overwrite:
                raise UsageError(f"{table_folder(outdir, name)} already has part files; "
                                 "use --overwrite to replace them")
            for p in old:
                p.unlink()
        writers = TableWriters(outdir, args.format)
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


def cmd_events(args: argparse.Namespace) -> int:
    """``events``: the listing ``SHOW BINLOG EVENTS`` gives, for files."""
    with vecbinlog.open(args.files) as log:
        events = log.events()
    pos = to_numpy(events.column("pos").combine_chunks())
    file_no = np.cumsum(pos == MAGIC_LEN) - 1  # every file starts with its FORMAT_DESCRIPTION_EVENT at 4
    keep = np.ones(len(pos), bool)
    if args.start is not None:
        keep &= (file_no > 0) | (pos >= args.start)
    if args.stop is not None:
        keep &= (file_no < file_no[-1] if len(pos) else True) | (pos < args.stop)
    events = events.filter(numbers(keep))
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
    """``verify``: the CRC32 of every event of every file."""
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


#: what runs each command of the parser (``args.command``)
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "info": cmd_info, "tables": cmd_tables, "cat": cmd_cat, "snapshot": cmd_snapshot,
    "to-parquet": cmd_to_parquet, "events": cmd_events, "verify": cmd_verify,
    "sync": cmd_sync,
}
