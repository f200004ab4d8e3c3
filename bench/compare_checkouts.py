"""Does a change alter vecbinlog's output? Decode the same binlogs with two checkouts and compare.

    python bench/compare_checkouts.py OLD_CHECKOUT NEW_CHECKOUT PATH [PATH ...] [--variants default,small]

Each PATH is a binlog file or a folder (searched recursively for files that start with the
binlog magic). Each checkout decodes every file in a child process of its own (its folder
first on ``sys.path``) with ``read_all()`` under each variant of options, and writes what came
out: every table as an Arrow IPC stream, or the error (type, message, offset, event type), and
the warnings. The two outputs are then compared table by table, column by column: names,
types, field metadata and values must be equal (dictionary-encoded columns by their values:
how rows are cut into batches, each with its dictionaries, may change); the order of the
tables is not compared. Prints each difference and exits 1 when there is one.

The MariaDB workloads of the test suite can be kept for this: ``VECBINLOG_KEEP_BINLOGS=DIR
python -m pytest tests/`` copies every test server's binlogs under DIR.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: options of open() per variant: the defaults, batches small enough that every run of events
#: is cut (a batch boundary must never change the output), and every run and batch decoded in
#: threads (the size thresholds below set to 1)
VARIANTS: dict[str, dict] = {
    "default": {},
    "small": {"segment_bytes": 4096, "batch_rows": 7, "threads": 1},
    "keep": {"rolled_back": "keep", "invalid_dates": "string", "queries": True},
    "threads": {"segment_bytes": 65536, "batch_rows": 1000, "threads": 2},
}
#: module constants set per variant (a checkout that lacks one is unaffected)
THRESHOLDS: dict[str, dict[str, int]] = {
    "threads": {"THREADED_CELLS": 1, "BACKGROUND_BYTES": 1, "BACKGROUND_EVENT_BYTES": 0, "BACKGROUND_COLUMN_BYTES": 0},
}
#: the modules (under ``vecbinlog.``) that may hold those constants, newest layout first: the
#: first one a checkout has that defines a constant is where it is set
CONSTANT_MODULES = ("decode.batch", "log.scheduler", "log.batches", "arrow", "batches")
MAGIC = b"\xfebin"


def binlogs(paths: list[str]) -> list[Path]:
    """The binlog files named or found under the folders named, sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        for f in ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())):
            with open(f, "rb") as fh:
                if fh.read(4) == MAGIC:
                    out.append(f)
    return out


def dump(out_dir: Path, files: list[str], variants: list[str]) -> None:
    """(child) Decode every file with the vecbinlog importable here; write the outcomes."""
    import warnings

    import pyarrow as pa

    import vecbinlog

    defaults = {}  # (module, name) -> the checkout's value
    for name in {n for consts in THRESHOLDS.values() for n in consts}:
        for m in CONSTANT_MODULES:
            try:
                module = importlib.import_module(f"vecbinlog.{m}")
            except ImportError:
                continue
            if hasattr(module, name):
                defaults[(module, name)] = getattr(module, name)
                break
    for k, path in enumerate(files):
        for variant in variants:
            for (module, name), value in defaults.items():
                setattr(module, name, THRESHOLDS.get(variant, {}).get(name, value))
            here = out_dir / f"{k}-{variant}"
            here.mkdir()
            outcome: dict = {"tables": [], "warnings": []}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with vecbinlog.open(path, **VARIANTS[variant]) as log:
                        tables = log.read_all()
                    for i, (name, table) in enumerate(tables.items()):
                        with pa.OSFile(str(here / f"{i}.arrow"), "wb") as sink, \
                                pa.ipc.new_stream(sink, table.schema) as writer:  # a dictionary per batch
                            writer.write_table(table)
                        outcome["tables"].append(name)
                except Exception as exc:  # noqa: BLE001 - the outcome being compared
                    outcome["error"] = [type(exc).__name__, str(exc), getattr(exc, "offset", None),
                                        getattr(exc, "event_type", None)]
            outcome["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
            (here / "outcome.json").write_text(json.dumps(outcome))


def run_checkout(checkout: Path, out_dir: Path, files: list[Path], variants: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    listing = out_dir / "files.json"
    listing.write_text(json.dumps([str(f) for f in files]))
    subprocess.run([sys.executable, __file__, "--dump", str(out_dir), "--variants", ",".join(variants)],
                   env=env, check=True, cwd=str(checkout))


def compare(a: Path, b: Path, files: list[Path], variants: list[str]) -> list[str]:
    """The differences between two dumps, one line each."""
    import pyarrow as pa

    diffs: list[str] = []
    for k, f in enumerate(files):
        for variant in variants:
            da, db = a / f"{k}-{variant}", b / f"{k}-{variant}"
            oa, ob = (json.loads((d / "outcome.json").read_text()) for d in (da, db))
            where = f"{f} [{variant}]"
            if oa.get("error") != ob.get("error"):
                diffs.append(f"{where}: error {oa.get('error')} -> {ob.get('error')}")
            if oa["warnings"] != ob["warnings"]:
                diffs.append(f"{where}: warnings {oa['warnings']} -> {ob['warnings']}")
            if sorted(oa["tables"]) != sorted(ob["tables"]):  # the order of read_all's tables is not promised
                diffs.append(f"{where}: tables {oa['tables']} -> {ob['tables']}")
                continue
            for name in oa["tables"]:
                ta, tb = (pa.ipc.open_stream(str(d / f"{o['tables'].index(name)}.arrow")).read_all()
                          for d, o in ((da, oa), (db, ob)))
                diffs.extend(f"{where} {name}: {d}" for d in _table_diffs(ta, tb))
    return diffs


def _same_values(a, b) -> bool:
    """Whether two columns hold the same values; dictionary-encoded ones (``_gtid``, ``_absent``...)
    by their values, whatever each batch's dictionary."""
    if "dictionary" in str(a.type):
        return a.to_pylist() == b.to_pylist()
    return a.equals(b)


def _table_diffs(ta, tb) -> list[str]:
    out = []
    if ta.num_rows != tb.num_rows:
        out.append(f"{ta.num_rows} rows -> {tb.num_rows}")
    if ta.schema.metadata != tb.schema.metadata:
        out.append(f"schema metadata {ta.schema.metadata} -> {tb.schema.metadata}")
    if ta.column_names != tb.column_names:
        out.append(f"columns {ta.column_names} -> {tb.column_names}")
        return out
    for name in ta.column_names:
        fa, fb = ta.schema.field(name), tb.schema.field(name)
        if not fa.equals(fb, check_metadata=True):
            out.append(f"column {name!r}: field {fa} {fa.metadata} -> {fb} {fb.metadata}")
        elif not _same_values(ta.column(name), tb.column(name)):
            ca, cb = ta.column(name).to_pylist(), tb.column(name).to_pylist()
            row = next((r for r, (x, y) in enumerate(zip(ca, cb)) if x != y), None)
            out.append(f"column {name!r}: values differ (first at row {row}: "
                       f"{ca[row] if row is not None else ''!r} -> {cb[row] if row is not None else ''!r})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", nargs="?")
    ap.add_argument("new", nargs="?")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--variants", default="default,small,keep")
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    variants = args.variants.split(",")
    if args.dump:
        out_dir = Path(args.dump)
        dump(out_dir, json.loads((out_dir / "files.json").read_text()), variants)
        return 0
    files = binlogs(args.paths)
    with tempfile.TemporaryDirectory(prefix="vecbinlog-compare-") as tmp:
        outs = []
        for name, checkout in (("old", args.old), ("new", args.new)):
            out_dir = Path(tmp) / name
            out_dir.mkdir()
            run_checkout(Path(checkout).resolve(), out_dir, files, variants)
            outs.append(out_dir)
        diffs = compare(outs[0], outs[1], files, variants)
    for d in diffs:
        print(d)
    print(f"{len(files)} files x {len(variants)} variants: {len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
