"""The command line's commands, one function each (``args`` from :mod:`vecbinlog.cli.parser`;
each returns the exit code). They use the public API only: :func:`vecbinlog.open` with the
options the parser gathered, then :class:`vecbinlog.Binlog`'s methods.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import secrets
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import vecbinlog

from ..arrowbuild import numbers, to_numpy
from ..binlog.spec import MAGIC_LEN
from ..decode.tableplan import METADATA_NAMES, TablePlan
from ..errors import BinlogError, UnsupportedError
from ..log.config import default_threads
from ..log.logset import binlog_files
from . import progress
from .parser import UsageError
from .index import cmd_index
from .sync import cmd_sync

# The writers of cat, events, snapshot and to-parquet (lines, writers: their compiled kernels)
# are imported by those commands, not by info, tables or verify.


#: cat reads in smaller segments and batches than the API's defaults: lines are formatted while
#: the next batch is decoded, so smaller pieces overlap better, start sooner and hold less
#: (not smaller than 16 MiB: more batches, each with fixed costs; bench/TUNING.md)
CAT_SEGMENT_BYTES = 16 << 20
CAT_BATCH_ROWS = 128 * 1024


def open_log(args: argparse.Namespace, **options: Any) -> vecbinlog.Binlog:
    """:func:`vecbinlog.open` of the files with the filter and decoding options of ``args``,
    drawing the library's progress bar on stderr when it is a terminal and ``--quiet`` is not
    given (binlog bytes done, rows and rows/s, per read)."""
    tables = None
    if args.tables:
        tables = [t.strip() for arg in args.tables for t in arg.split(",") if t.strip()]
    if not getattr(args, "quiet", False) and progress.stderr_isatty():
        options.setdefault("progress", {"file": sys.stderr, "dynamic_ncols": True})
    return vecbinlog.open(
        args.files, strict=args.strict, verify_checksums=not args.no_verify_checksums,
        invalid_dates=args.invalid_dates, charsets=args.charsets, tables=tables, start=args.start, stop=args.stop,
        since=args.since, until=None if args.command == "snapshot" else args.until, change_types=args.change_types,
        rolled_back=args.rolled_back, queries=args.queries, gtids=args.gtids, **options,
    )


def _tables_given(args: argparse.Namespace) -> str:
    """The --tables patterns given, comma-separated (as one would type them again)."""
    return ",".join(t.strip() for arg in args.tables or () for t in arg.split(",") if t.strip())


def _filters_given(args: argparse.Namespace) -> str:
    """The row filters given, as the flags that set them (``--start 100 --stop 10``), or ``""``."""
    given = [("--start", args.start), ("--stop", args.stop),
             ("--since", args.since.isoformat() if args.since else None),
             ("--until", args.until.isoformat() if isinstance(args.until, _dt.datetime) and args.command != "snapshot"
              else None),
             ("--gtids", args.gtids), ("--change-types", ",".join(args.change_types or ()) or None)]
    return " ".join(f"{flag} {value}" for flag, value in given if value is not None)


def _say(message: str) -> None:
    """A notice on stderr, as the warnings are (``-q`` leaves it out): what matched nothing."""
    warnings.warn(message, UserWarning, stacklevel=2)


def _no_rows(args: argparse.Namespace, what: str) -> str:
    """``what`` has no row changes: which filters left none (or that its rows events hold none)."""
    filters = _filters_given(args)
    if filters:
        return f"{what}: no row changes match {filters}"
    if args.rolled_back == "keep":
        return f"{what}: no row changes (its rows events hold no row image)"
    return f"{what}: no row changes (its rows events hold none that took effect; --rolled-back keep shows the others)"


def _no_tables(args: argparse.Namespace) -> str:
    """What to say when the files have no table with rows events that --tables keeps."""
    if not args.tables:
        return "the files have no rows events: no table to read"
    with vecbinlog.open(args.files, strict=args.strict, verify_checksums=not args.no_verify_checksums) as every:
        there = every.tables
    return f"--tables {_tables_given(args)} matches none of the tables with rows events: {', '.join(there) or 'none'}"


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


def _count_changes(log: vecbinlog.Binlog, table: str) -> dict[str, int]:
    """Inserts, updates (an update's two images counted once), deletes and row images of ``table``."""
    counts = {"insert": 0, "update": 0, "delete": 0, "row_images": 0}
    for batch in log.iter_batches(table):
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
    indexed = args.index is not None and args.no_decode  # row images from the index: no binlog read
    # (the counts need each row's change type only: the data columns are walked over, not decoded)
    with open_log(args, index=args.index, columns=("_change_type",)) as log:
        info = log.info(rows=indexed)
        tables: dict[str, dict[str, Any]] = {}
        for f in info["files"]:
            f["first_time"] = _utc(f["first_timestamp"])
            f["last_time"] = _utc(f["last_timestamp"])
            for name, n in f["rows_events_by_table"].items():
                if log.config.filter.table(name):
                    tables.setdefault(name, {"rows_events": 0})["rows_events"] += n
            for name, images in f.pop("row_images_by_table", {}).items():
                if log.config.filter.table(name):
                    _add_images(tables[name], images)
        if not args.no_decode:
            for name in log.tables:
                try:
                    tables.setdefault(name, {"rows_events": 0}).update(_count_changes(log, name))
                except BinlogError as exc:
                    tables[name]["error"] = str(exc)
                    errors.append(exc)
    out = {
        "files": info["files"],
        "tables": tables,
        "row_counts": _INDEXED_COUNTS if indexed else None if args.no_decode else
        "decoded: insert, update (pairs of images counted once), delete, row_images; filters applied",
    }
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print_info(out, args)
    if errors:
        raise errors[0]
    return 0


#: what ``info --index LOCATION --no-decode`` says of its row counts
_INDEXED_COUNTS = "from the archive index: insert, update (pairs of images counted once), delete, row_images; unfiltered"


def _add_images(table: dict[str, Any], images: dict[str, int]) -> None:
    """Row images by change type (``info(rows=True)``'s) added to a table's counts as decoding counts them."""
    for key, n in (("insert", images.get("insert", 0)), ("update", images.get("update_postimage", 0)),
                   ("delete", images.get("delete", 0)), ("row_images", sum(images.values()))):
        table[key] = table.get(key, 0) + n


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
    if out["row_counts"] == _INDEXED_COUNTS:
        w("rows events: counted from the event headers; inserts, updates, deletes: row images the archive\n"
          "index counted (no filter but --tables applied; an update = 2 row images)\n")
    elif decoded:
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
    with open_log(args, index=args.index) as log:
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
        _say(_no_tables(args))
    return 0


def _cat_threads(fmt: Any) -> int:
    """Threads that decode for ``cat``: the cores the line writer's threads leave (at least 1,
    the reading thread itself: on 2 cores that measured faster, with less CPU and memory, than
    two decoding threads beside the two formatting ones; bench/TUNING.md)."""
    return max(1, default_threads() - fmt.THREADS)


def _plan(log: vecbinlog.Binlog, table: str) -> TablePlan:
    """``table``'s plan: its one schema over every layout in the files (from the headers, no row
    decoded). A table the files do not have: TableNotFoundError, naming those they have."""
    plans = log.plans()
    if table not in plans:
        log.schema(table)  # raises TableNotFoundError
    return plans[table]


def _fitted(plan: TablePlan, batch: pa.RecordBatch, paths: dict[str, str]) -> pa.RecordBatch:
    """``batch`` in its table's one schema: its columns matched by name, widened, and null
    where its layout lacks one (as ``read_table`` gives them)."""
    names = plan.schema.names
    plan.widen(batch, paths.get(batch.column("_log_file")[0].as_py()))  # text whose bytes fell back to binary
    fitted = plan.conform(batch)
    if fitted.schema.names != names:  # a layout the plan did not have: never silently dropped
        raise UnsupportedError(
            f"{plan.table}: rows of _schema_version {batch.column('_schema_version')[0].as_py()} have the "
            f"columns {fitted.schema.names}, not those planned from the headers {names}; "
            "to-parquet writes them in a part file of their own",
            path=paths.get(batch.column("_log_file")[0].as_py()),
            offset=batch.column("_log_pos")[0].as_py(), event_type="rows event")
    return fitted


def _unsampled(plan: TablePlan, batch: pa.RecordBatch) -> frozenset[str]:
    """The columns of which ``batch`` (the first printed) tells nothing: those that its layouts
    lack, or hold in a narrower type than the table's schema (later layouts add or widen them)."""
    schema = plan.schema
    sampled: set[str] = set()
    for version in pc.unique(batch.column("_schema_version")).to_pylist():
        declared = [f.type for f in plan.layout_schema(version) if f.name not in METADATA_NAMES]
        sampled.update(name for name, t in zip(plan.layout_names(version), declared) if t == schema.field(name).type)
    return frozenset(f.name for f in schema if f.name not in METADATA_NAMES and f.name not in sampled)


#: The table format's widths come from the first rows (``TableText.SAMPLE``): first batches
#: smaller than that (a table whose layout changes, or with little in each segment) are merged
#: into one, up to this many.
SAMPLE_BATCHES = 64


def _first_merged(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """``batches`` (of one schema), the first ones merged into one batch of ``rows`` rows (or of
    every row of the first :data:`SAMPLE_BATCHES`), the rest as they come."""
    held: list[pa.RecordBatch] = []
    n = 0
    for b in batches:
        held.append(b)
        n += b.num_rows
        if n >= rows or len(held) >= SAMPLE_BATCHES:
            break
    if len(held) > 1:
        last = held.pop()
        need = max(rows - (n - last.num_rows), 0)
        yield from pa.Table.from_batches([*held, last.slice(0, need)]).combine_chunks().to_batches()
        if need < last.num_rows:
            yield last.slice(need)
    elif held:
        yield held[0]
    yield from batches


def cmd_cat(args: argparse.Namespace) -> int:
    """``cat``: a table's change log, in its one schema over every layout (one header), a batch
    at a time, formatted while the next is decoded."""
    from .lines import CsvText, JsonLinesText, TableText

    out = sys.stdout.buffer
    sys.stdout.flush()
    writer = {"jsonl": JsonLinesText, "csv": CsvText}.get(args.format)
    fmt = writer() if writer is not None else TableText(args.max_width)

    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    with open_log(args, segment_bytes=CAT_SEGMENT_BYTES, batch_rows=CAT_BATCH_ROWS, threads=_cat_threads(fmt),
                  columns=columns, metadata=not args.no_metadata) as log:
        plan = _plan(log, args.table)
        try:
            names = log.returned_columns(plan.schema, args.table)  # --columns, --no-metadata
        except ValueError as exc:
            raise UsageError(f"--columns{str(exc).removeprefix('columns')}") from None
        paths = {f.name: f.path for f in log.files}
        rows = 0
        gen = log.iter_batches(args.table, layout_columns=True)  # fitted to the plan, then the columns shown

        def fitted() -> Iterator[pa.RecordBatch]:
            for b in _limited(gen, args.limit):
                if b.num_rows:
                    yield _fitted(plan, b, paths)

        def items() -> Iterator[pa.RecordBatch | bytes]:
            nonlocal rows
            if isinstance(fmt, CsvText):  # the header, even when no row matches
                yield fmt.header(names)
            for b in _first_merged(fitted(), fmt.SAMPLE) if isinstance(fmt, TableText) else fitted():
                if rows == 0 and isinstance(fmt, TableText):
                    fmt.unsampled = _unsampled(plan, b)
                rows += b.num_rows
                yield b if names == b.schema.names else b.select(names)

        try:
            fmt.write_all(items(), out)
        finally:
            gen.close()
        if rows == 0 and args.limit != 0:
            if isinstance(fmt, TableText):  # its header and rule
                shown = pa.schema([plan.schema.field(n) for n in names])
                out.write(fmt.begin(pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in shown], schema=shown)))
                out.flush()
            _say(_no_rows(args, args.table))
    return 0


def _hidden_name(folder: Path, name: str) -> Path:
    """A new hidden name in ``folder`` to write to before renaming (a leading dot: dataset
    readers pass over it; the process id and random digits: two runs never share it). Made
    without mkstemp/mkdtemp, whose files and folders only their owner may read."""
    return folder / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"


#: the formats of ``snapshot``'s output, by its suffix
SNAPSHOT_FORMATS = {".parquet": "parquet", ".csv": "csv"}


def _snapshot_output(args: argparse.Namespace) -> tuple[Path, str]:
    """``snapshot``'s OUT and its format (its suffix's), refused before any reading when the
    suffix is not a format's or OUT exists (without --overwrite)."""
    out = Path(args.out)
    fmt = SNAPSHOT_FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise UsageError(f"{out}: the suffix of OUT is its format: {' or '.join(SNAPSHOT_FORMATS)}, "
                         f"not {out.suffix or 'none'}")
    if out.is_dir():
        raise UsageError(f"{out} is a folder")
    if not out.parent.is_dir():
        raise UsageError(f"{out}: no folder {out.parent} to write it in")
    if out.exists() and not args.overwrite:
        raise UsageError(f"{out} exists; use --overwrite to replace it")
    return out, fmt


def cmd_snapshot(args: argparse.Namespace) -> int:
    """``snapshot``: a table's rows as of a point, to Parquet or CSV (by OUT's suffix), written
    beside OUT and renamed to it at the end (a failure leaves no OUT)."""
    from .writers import CsvFile

    out, fmt = _snapshot_output(args)
    key = [k.strip() for k in args.key.split(",")] if args.key else None
    with open_log(args) as log:
        try:
            table = log.snapshot(args.table, until=args.until, key=key)
        except ValueError as exc:
            if isinstance(exc, BinlogError):
                raise
            raise UsageError(str(exc)) from exc
    name = _hidden_name(out.parent, out.name)
    try:
        if fmt == "csv":
            with CsvFile(name, table.schema) as f:
                for b in table.to_batches():
                    f.write_batch(b)
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, name, compression="zstd")
        os.replace(name, out)
    finally:
        if os.path.exists(name):
            os.unlink(name)
    if not args.quiet:
        print(f"{args.table}: {table.num_rows:,} rows -> {args.out}", file=sys.stderr)
    return 0


def cmd_to_parquet(args: argparse.Namespace) -> int:
    """``to-parquet``: every table's change log as a dataset, in one pass over the files,
    written in a hidden folder of OUTDIR and moved into place once every table is done."""
    from .writers import TableWriters, publish_tables, table_folder

    outdir = Path(args.outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"{outdir} exists and is not a folder")
    ext = {"parquet": ".parquet", "arrow": ".arrow", "csv": ".csv"}[args.format]
    with open_log(args) as log:
        tables = log.tables
        if not tables:
            _say(_no_tables(args) + ": nothing written")
            return 0
        for name in tables:
            if any(p.is_file() for p in table_folder(outdir, name).glob("part-*")) and not args.overwrite:
                raise UsageError(f"{table_folder(outdir, name)} already has part files; "
                                 "use --overwrite to replace them")
        made = not outdir.exists()
        outdir.mkdir(parents=True, exist_ok=True)
        staging = _hidden_name(outdir, "vecbinlog")  # hidden from dataset readers (pyarrow, Spark)
        staging.mkdir()
        writers = TableWriters(staging, args.format)
        plans = log.plans()  # each table's one schema over its layouts (no row decoded)
        paths = {f.name: f.path for f in log.files}
        try:
            try:
                for name, batch in log.iter_tables():  # one pass over the files for every table
                    where = paths.get(batch.column("_log_file")[0].as_py()) if "_log_file" in batch.schema.names \
                        and batch.num_rows else None
                    plans[name].widen(batch, where)  # a text column whose bytes fell back to binary
                    writers.write(name, plans[name].conform(batch))
            finally:
                writers.close()
            publish_tables(staging, outdir, tables, args.overwrite)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if made and not any(outdir.iterdir()):
                outdir.rmdir()
        summary = [(name, *writers.done(name)) for name in tables]
    if not args.quiet:
        for name, rows, files in summary:
            if files:
                print(f"{name}: {rows:,} rows, {len(files)} {ext[1:]} file(s) in {table_folder(outdir, name)}",
                      file=sys.stderr)
    if not any(files for _, _, files in summary):
        _say(_no_rows(args, ", ".join(tables)) + ": nothing written")
    else:
        for name, _, files in summary:
            if not files:
                _say(_no_rows(args, name))
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    """``events``: the listing ``SHOW BINLOG EVENTS`` gives, for files."""
    from .lines import JsonLinesText, TableText

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
    "sync": cmd_sync, "index": cmd_index,
}
