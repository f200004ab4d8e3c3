"""vecbinlog against ``mariadb-binlog -v`` on binlogs of shapes nobody chose.

    python bench/random_shapes.py [--seed S] [--cases 30] [--scale 1] [--out DIR] [--json FILE]
                                  [--rounds 3] [--repeat 3] [--fresh-process] [--no-families]

Draws ``--cases`` cases from the seed (``--seed``, else the clock; the results name it), each
with its own tables, workload, row image, metadata and rotation (bench/shapegen.py), and has a
MariaDB server write each (tests/support/mariadb.py), 20-200 MB of binlog times ``--scale``.
Cases are kept under ``--out`` keyed by (generator version, seed, scale, case number): a second
run of the same seed generates nothing.

Each case is timed in a child process of its own, in ``--rounds`` interleaved rounds (the order
of the methods turned each round); in each round every method is the best of ``--repeat``, and
each result is freed before the next read, as a user's loop does (the time includes freeing it):

* ``read_all``: ``vecbinlog.open(files).read_all()``;
* ``iter_tables``: every batch of ``iter_tables()``, consumed;
* ``read_table``: ``for t in log.tables: log.read_table(t)`` from one open log;
* ``mariadb-binlog --no-defaults --base64-output=DECODE-ROWS -v FILES > /dev/null``;
* with ``--fresh-process``, each vecbinlog method also as the first read of a fresh process
  (its imports done; "first") and as the whole process (interpreter start, imports, read).

A case's ratio for a method is ``mariadb-binlog`` time / the method's time, the median of its
rounds. Before timing, each method's row images per table and change type are checked against
what the server said each statement did (rows affected): a decode that loses rows cannot look
fast. The report gives the distribution (min, p10, median, max) of each ratio per workload kind
and overall, each case's seed and description, and (unless ``--no-families``) the microseconds
per value of each type family: ``read_all(columns=[_change_type, the family's columns])`` minus
``read_all(columns=[_change_type])``, one thread, over the values present in the row images.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script, and in its children (--child)
    sys.path.insert(0, str(ROOT))

from bench import peers, shapegen  # noqa: E402

DEFAULT_CASES = 30
ROUNDS, REPEAT = 3, 3
#: bench/peers.py's server, its time zone UTC (TIMESTAMP values are written as UTC text)
SERVER_OPTIONS = {**peers.SERVER_OPTIONS, "default_time_zone": "+00:00"}
METHODS = ("read_all", "iter_tables", "read_table")
CHANGE_TYPES = ("insert", "update_preimage", "update_postimage", "delete")


def case_dir(out: Path, seed: int, scale: float, case: int) -> Path:
    return out / f"v{shapegen.GENERATOR_VERSION}" / f"seed{seed}-scale{scale:g}" / f"case{case:03d}"


def manifest_of(folder: Path) -> dict | None:
    path = folder / "case.json"
    return json.loads(path.read_text()) if path.exists() else None


def ensure_cases(out: Path, seed: int, scale: float, cases: list[int], log=print) -> dict[int, Path]:
    """Every case's folder (its binlog files, ``mysql-bin.index`` and ``case.json``), written by
    one server started only when a case is not there yet."""
    from tests.support.mariadb import MariaDBServer

    folders = {k: case_dir(out, seed, scale, k) for k in cases}
    missing = [k for k, f in folders.items() if manifest_of(f) is None]
    if not missing:
        return folders
    work = Path(tempfile.mkdtemp(prefix="vecbinlog-shapes-"))
    try:
        with MariaDBServer(workdir=work / "server", options=SERVER_OPTIONS) as server:
            for k in missing:
                spec = shapegen.draw_case(seed, k, scale)
                folder = folders[k]
                shutil.rmtree(folder, ignore_errors=True)  # a case cut short before its case.json
                t0 = time.perf_counter()
                manifest = shapegen.write_case(server, spec, folder, lambda s, k=k: log(f"  case {k}: {s}"))
                manifest["generate_seconds"] = round(time.perf_counter() - t0, 1)
                (folder / "case.json").write_text(json.dumps(manifest, indent=1))  # last: the case is whole
                log(f"case {k}: generated {manifest['bytes'] / 1e6:.1f} MB in {len(manifest['files'])} files "
                    f"({manifest['generate_seconds']:.0f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folders


# --------------------------------------------------------------------------
# Children (`python bench/random_shapes.py --child KIND ...`): one per case
# --------------------------------------------------------------------------


def _open(folder: str, threads: int | None, **options):
    import vecbinlog

    if threads is not None:
        options["threads"] = threads
    return vecbinlog.open([str(p) for p in peers.files_of(Path(folder))], **options)


def _change_counts(counts: dict[str, dict[str, int]], name: str, data) -> None:
    """Add the row images of ``data`` (a table or batch) by ``_change_type`` to ``counts[name]``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    got = counts.setdefault(name, dict.fromkeys(CHANGE_TYPES, 0))
    column = data.column("_change_type")
    for item in pc.value_counts(column.cast(pa.string())).to_pylist():
        got[item["values"]] += item["counts"]


def _read_all(folder: str, threads: int | None, counts: dict | None = None) -> int:
    with _open(folder, threads) as log:
        tables = log.read_all()
    if counts is not None:
        for name, t in tables.items():
            _change_counts(counts, name, t)
    return sum(t.num_rows for t in tables.values())  # `tables` is freed on return


def _iter_tables(folder: str, threads: int | None, counts: dict | None = None) -> int:
    n = 0
    with _open(folder, threads) as log:
        for name, batch in log.iter_tables():
            n += batch.num_rows
            if counts is not None:
                _change_counts(counts, name, batch)
    return n


def _read_table(folder: str, threads: int | None, counts: dict | None = None) -> int:
    n = 0
    with _open(folder, threads) as log:
        for name in log.tables:
            table = log.read_table(name)  # the last one freed as this one is made: a user's loop
            n += table.num_rows
            if counts is not None:
                _change_counts(counts, name, table)
    return n


READS = {"read_all": _read_all, "iter_tables": _iter_tables, "read_table": _read_table}


def _mariadb_binlog(folder: str) -> float:
    from tests.support.mariadb import find_tool

    argv = [find_tool("mariadb-binlog"), "--no-defaults", "--base64-output=DECODE-ROWS", "-v",
            *map(str, peers.files_of(Path(folder)))]
    return peers._run_child(argv, capture=False)[0]


def _fresh(folder: str, method: str, threads: int | None) -> tuple[float, float]:
    """(first read, whole process) of ``method`` in a new Python process."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", "first", folder, method, str(threads or 0)]
    wall, _, out, _ = peers._run_child(argv)
    return json.loads(out.decode().strip().splitlines()[-1])["seconds"], wall


def child_first(folder: str, method: str, threads: str) -> dict:
    """One read, the first of this process (its imports done before the clock starts)."""
    import pyarrow  # noqa: F401

    import vecbinlog  # noqa: F401

    t0 = time.perf_counter()
    READS[method](folder, int(threads) or None)
    return {"seconds": time.perf_counter() - t0}


def child_time(folder: str, rounds: str, repeat: str, fresh: str, threads: str) -> dict:
    """Each method once untimed (its row images counted, per table and change type), then
    ``rounds`` interleaved rounds of best-of-``repeat`` for each."""
    nthreads = int(threads) or None
    checked: dict[str, dict] = {}
    images: dict[str, int] = {}
    for method, read in READS.items():
        counts: dict[str, dict[str, int]] = {}
        images[method] = read(folder, nthreads, counts)
        checked[method] = counts
    with _open(folder, nthreads) as log:
        used = log.config.threads
    keys = ["mariadb_binlog", *READS] + (["fresh_" + m for m in READS] if fresh == "1" else [])
    out_rounds = []
    for r in range(int(rounds)):
        seen: dict[str, float] = {}
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            for _ in range(int(repeat)):
                if key == "mariadb_binlog":
                    times = {key: _mariadb_binlog(folder)}
                elif key.startswith("fresh_"):
                    method = key.removeprefix("fresh_")
                    first, whole = _fresh(folder, method, nthreads)
                    times = {f"{method}_first": first, f"{method}_process": whole}
                else:
                    t0 = time.perf_counter()
                    n = READS[key](folder, nthreads)
                    times = {key: time.perf_counter() - t0}
                    if n != images[key]:
                        raise RuntimeError(f"{key}: {n} row images in a timed read, {images[key]} in the first")
                for k, s in times.items():
                    seen[k] = min(seen.get(k, s), s)
        out_rounds.append(seen)
    return {"threads": used, "counts": checked, "rounds": out_rounds}


def child_families(folder: str, repeat: str) -> dict:
    """Seconds of ``read_all(columns=...)`` (one thread) for the ``_change_type`` column alone,
    for it and each family's columns, and for every column; the values present per family."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from vecbinlog.decode.tableplan import METADATA_NAMES

    with _open(folder, 1) as log:
        tables = log.read_all()
    present: dict[str, int] = {}  # family -> values in the row images (NULLs too; absent ones not)
    sizes: dict[str, int] = {}  # family -> bytes of its text and binary values, as decoded
    columns: dict[str, list[str]] = {}
    images = 0
    for t in tables.values():
        images += t.num_rows
        absent: dict[str, int] = {}
        if "_absent" in t.column_names:
            flat = pc.list_flatten(t.column("_absent"))
            if len(flat):
                absent = {d["values"]: d["counts"] for d in pc.value_counts(flat.cast(pa.string())).to_pylist()}
        for name in t.column_names:
            if name in METADATA_NAMES:
                continue
            family = name.rsplit("_", 1)[0] if name != "id" else "id"
            if name not in columns.setdefault(family, []):
                columns[family].append(name)
            present[family] = present.get(family, 0) + t.num_rows - absent.get(name, 0)
            kind = t.schema.field(name).type
            if pa.types.is_string(kind) or pa.types.is_binary(kind):  # text and bytes: their size too
                sizes[family] = sizes.get(family, 0) + (pc.sum(pc.binary_length(t.column(name))).as_py() or 0)
    del tables

    def read(cols: list[str] | None) -> float:
        with _open(folder, 1, columns=cols) as log:
            t0 = time.perf_counter()
            got = log.read_all()
            dt = time.perf_counter() - t0
        del got
        return dt

    best: dict[str, float] = {}
    for _ in range(int(repeat)):
        for key, cols in [("_base", ["_change_type"]), ("_all", None),
                          *((f, ["_change_type", *c]) for f, c in columns.items())]:
            s = read(cols)
            best[key] = min(best.get(key, s), s)
    return {"images": images, "seconds": best, "values": present, "bytes": sizes}


CHILDREN = {"time": child_time, "first": child_first, "families": child_families}


def _child(kind: str, *args: str) -> dict:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", kind, *args]
    _, _, out, _ = peers._run_child(argv)
    return json.loads(out.decode().strip().splitlines()[-1])


# --------------------------------------------------------------------------
# One case: time it, check it
# --------------------------------------------------------------------------


def check_counts(expected: dict[str, dict[str, int]], got: dict[str, dict[str, int]]) -> list[str]:
    """What differs between the server's rows affected and a read's row images, per table."""
    out = []
    for table in sorted(set(expected) | set(got)):
        want = expected.get(table, dict.fromkeys(CHANGE_TYPES, 0))
        have = got.get(table, dict.fromkeys(CHANGE_TYPES, 0))
        diff = {c: (want.get(c, 0), have.get(c, 0)) for c in CHANGE_TYPES if want.get(c, 0) != have.get(c, 0)}
        if diff:
            out.append(f"{table}: " + ", ".join(f"{c} server {w} decoded {h}" for c, (w, h) in diff.items()))
    return out


def ratios_of(rounds: list[dict]) -> dict[str, float]:
    """Per method, the median over rounds of mariadb-binlog's time / the method's."""
    keys = [k for k in rounds[0] if k != "mariadb_binlog"]
    return {k: statistics.median(r["mariadb_binlog"] / r[k] for r in rounds) for k in keys}


def describe(manifest: dict) -> str:
    s = manifest["spec"]
    rot = s["rotation_bytes"]
    rot_text = f"{rot / 2**20:.1f} MiB" if rot >= 2**20 else f"{rot >> 10} KiB"
    top = sorted(s["families"].items(), key=lambda x: -x[1])
    types = ", ".join(f"{f} {n}" for f, n in top[:4]) + (", ..." if len(top) > 4 else "")
    return (f"{s['tables']} tables, {s['columns']} columns ({types}), {s['workload']}, {s['image']} images, "
            f"{s['metadata']} metadata, annotate {'on' if s['annotate'] else 'off'}, rotation {rot_text}: "
            f"{len(manifest['files'])} files, {manifest['bytes'] / 1e6:.1f} MB")


def run_case(k: int, folder: Path, args) -> dict:
    manifest = manifest_of(folder)
    spec = manifest["spec"]
    res = {"case": k, "seed": spec["seed"], "workload": spec["workload"], "description": describe(manifest),
           "mb": round(manifest["bytes"] / 1e6, 2), "files": len(manifest["files"]), "folder": str(folder),
           "images": sum(sum(c.values()) for c in manifest["images"].values()),
           "spec": {key: v for key, v in spec.items() if key != "table_defs"}}
    threads = str(args.threads or 0)
    try:
        timed = _child("time", str(folder), str(args.rounds), str(args.repeat), "1" if args.fresh_process else "0",
                       threads)
    except RuntimeError as exc:
        res["error"] = str(exc)
        return res
    res["threads"] = timed["threads"]
    res["rounds"] = timed["rounds"]
    res["ratios"] = ratios_of(timed["rounds"])
    res["problems"] = [f"{m}: {p}" for m, counts in timed["counts"].items()
                       for p in check_counts(manifest["images"], counts)]
    if not args.no_families:
        try:
            res["families"] = _child("families", str(folder), str(args.repeat))
        except RuntimeError as exc:
            res["families_error"] = str(exc)
    return res


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def spread(values: list[float]) -> dict[str, float]:
    import numpy as np

    a = np.asarray(values, dtype=float)
    return {"n": len(a), "min": float(a.min()), "p10": float(np.percentile(a, 10)), "median": float(np.median(a)),
            "max": float(a.max())}


def summarize(results: list[dict]) -> dict:
    """Per workload kind and overall, per method: the spread of the cases' ratios."""
    ok = [r for r in results if "ratios" in r and not r["problems"]]
    out: dict[str, dict] = {}
    for kind in [*shapegen.WORKLOADS, "overall"]:
        cases = [r for r in ok if kind in ("overall", r["workload"])]
        if not cases:
            continue
        out[kind] = {m: spread([r["ratios"][m] for r in cases]) for m in cases[0]["ratios"]}
    return out


def family_table(results: list[dict]) -> dict[str, dict]:
    """Per type family: microseconds per value, pooled over the cases (sum of the time its
    columns add / sum of their values) and the median of the cases' own; the walk and the
    metadata column as ``(base)``, per row image."""
    per: dict[str, list[tuple[float, int, int]]] = {}
    for r in results:
        fam = r.get("families")
        if not fam:
            continue
        sec = fam["seconds"]
        per.setdefault("(base)", []).append((sec["_base"], fam["images"], 0))
        for family, values in fam["values"].items():
            if values and family in sec:
                per.setdefault(family, []).append((sec[family] - sec["_base"], values, fam["bytes"].get(family, 0)))
    out = {}
    for family, items in sorted(per.items()):
        total_s = sum(s for s, _, _ in items)
        total_v = sum(v for _, v, _ in items)
        total_b = sum(b for _, _, b in items)
        out[family] = {"cases": len(items), "values": total_v, "bytes": total_b, "seconds": total_s,
                       "us_per_value": 1e6 * total_s / total_v,
                       "median_case_us_per_value": statistics.median(1e6 * s / v for s, v, _ in items)}
    return out


def _fmt_s(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s >= 0.01 else f"{s * 1000:.1f} ms"


def _fmt_x(x: float) -> str:
    return f"{x:.1f}x" if x >= 1 else f"{x:.2f}x"


def render(results: list[dict], meta: dict) -> str:
    lines = [f"random shapes: seed {meta['seed']}, {len(results)} cases, scale {meta['scale']:g}, generator "
             f"v{meta['generator_version']}, {meta['rounds']} rounds x best of {meta['repeat']}, "
             f"threads {meta['threads'] or 'default'}"
             + "".join(sorted({f" ({r['threads']} used)" for r in results if "threads" in r})), ""]
    rows = []
    for r in results:
        if "error" in r:
            state = "ERROR (below)"
        else:
            state = "ok" if not r["problems"] else f"COUNTS DIFFER ({len(r['problems'])})"
        cells = [str(r["case"]), r["workload"], f"{r['mb']:.1f}", str(r["files"]), f"{r['images']:,}"]
        if "ratios" in r:
            best = {k: min(x[k] for x in r["rounds"]) for k in r["rounds"][0]}
            cells += [_fmt_s(best["mariadb_binlog"])]
            cells += [f"{_fmt_s(best[m])} {_fmt_x(r['ratios'][m])}" for m in METHODS]
            cells += [" / ".join(_fmt_x(r["ratios"][f"{m}_{w}"]) for w in ("first", "process"))
                      if f"{m}_first" in r["ratios"] else "" for m in METHODS]
        else:
            cells += [""] * 7
        rows.append(cells + [state, r["description"]])
    header = ["case", "workload", "MB", "files", "row images", "mariadb-binlog", "read_all", "iter_tables",
              "read_table loop", "first read", "", "", "check", "description"]
    if not any("read_all_first" in r.get("ratios", {}) for r in results):
        header = header[:9] + header[12:]
        rows = [row[:9] + row[12:] for row in rows]
    else:
        header[9:12] = [f"fresh {m}: first / process" for m in METHODS]
    lines += _table(header, rows)
    lines += ["", "ratio = mariadb-binlog time / vecbinlog time (per case: the median of its rounds):", ""]
    rows = []
    for kind, methods in summarize(results).items():
        for m, s in methods.items():
            rows.append([kind, str(s["n"]), m, *(f"{s[k]:.2f}" for k in ("min", "p10", "median", "max"))])
    lines += _table(["workload", "cases", "method", "min", "p10", "median", "max"], rows)
    fams = family_table(results)
    if fams:
        lines += ["", "per type family (threads=1): read_all(columns=[_change_type, its columns]) - "
                  "read_all(columns=[_change_type]), per value present; (base): that read, per row image:", ""]
        rows = [[f, str(d["cases"]), f"{d['values']:,}", f"{d['bytes'] / 1e6:.1f}" if d["bytes"] else "",
                 f"{d['seconds'] * 1000:.1f}", f"{d['us_per_value']:.3f}", f"{d['median_case_us_per_value']:.3f}",
                 f"{d['bytes'] / d['seconds'] / 1e6:.0f}" if d["bytes"] and d["seconds"] > 0 else ""]
                for f, d in sorted(fams.items(), key=lambda x: -x[1]["us_per_value"])]
        lines += _table(["family", "cases", "values", "MB (text, bytes)", "ms (all cases)", "us/value (pooled)",
                         "us/value (median case)", "MB/s"], rows)
    bad = [r for r in results if "error" in r or r.get("problems") or "families_error" in r]
    for r in bad:
        lines += ["", f"case {r['case']} (seed {r['seed']}, {r['folder']}):"]
        lines += [f"  {p}" for p in r.get("problems", [])]
        for key in ("error", "families_error"):
            if key in r:
                lines += ["  " + line for line in r[key].splitlines()]
    return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, ["-" * w for w in widths],
                                                                                    *rows]]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(CHILDREN[argv[1]](*argv[2:])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, help="the seed of the cases (default: the clock)")
    ap.add_argument("--cases", type=int, default=DEFAULT_CASES, help=f"cases 0..N-1 (default {DEFAULT_CASES})")
    ap.add_argument("--only", help="comma-separated case numbers, instead of 0..N-1")
    ap.add_argument("--scale", type=float, default=1.0, help="times the binlog size of each case (20-200 MB)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "vecbinlog-random-shapes",
                    help="where cases are kept (default: $TMPDIR/vecbinlog-random-shapes)")
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help=f"interleaved rounds (default {ROUNDS})")
    ap.add_argument("--repeat", type=int, default=REPEAT, help=f"best of this many in each round (default {REPEAT})")
    ap.add_argument("--threads", type=int, help="vecbinlog's threads= (default: its own default)")
    ap.add_argument("--fresh-process", action="store_true",
                    help="also time each read as the first of a fresh process, and the whole process")
    ap.add_argument("--no-families", action="store_true", help="skip the per-type-family breakdown")
    ap.add_argument("--generate-only", action="store_true", help="write the cases, time nothing")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    cases = [int(x) for x in args.only.split(",")] if args.only else list(range(args.cases))

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    log(f"seed {seed}: cases {cases[0]}..{cases[-1]} under {args.out}")
    t0 = time.perf_counter()
    folders = ensure_cases(args.out, seed, args.scale, cases, log)
    gen_seconds = time.perf_counter() - t0
    if args.generate_only:
        return 0
    results = []
    for k in cases:
        results.append(run_case(k, folders[k], args))
        r = results[-1]
        log(f"case {k}: {r['description']}: " + (
            ", ".join(f"{m} {x:.1f}x" for m, x in r["ratios"].items()) if "ratios" in r else "ERROR"))
    from tests.support.mariadb import find_tool

    meta = {"seed": seed, "cases": cases, "scale": args.scale, "generator_version": shapegen.GENERATOR_VERSION,
            "rounds": args.rounds, "repeat": args.repeat, "threads": args.threads, "fresh_process": args.fresh_process,
            "command": "python bench/random_shapes.py " + " ".join(argv), "generate_seconds": round(gen_seconds, 1),
            "total_seconds": round(time.perf_counter() - t0, 1),
            "machine": f"{os.cpu_count()} CPUs (affinity {len(os.sched_getaffinity(0))}), {peers._cpu()}, "
                       f"{platform.system()} {platform.release()}",
            "versions": peers._versions(find_tool("mariadb-binlog"))}
    print(render(results, meta))
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "summary": summarize(results),
                                         "families": family_table(results), "cases": results}, indent=1))
        log(f"wrote {args.json}")
    return 1 if any("error" in r or r.get("problems") or "families_error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
