"""Whole processes: a script that reads one large binlog once, ``vecbinlog info`` and ``cat`` of
the sample, against ``mariadb-binlog -v`` of the same large file and the import floor; and a
process's first ``read_all()`` against its next ones.

    python bench/process_runs.py FILE [--rounds 7] [--attribute]

FILE may also be a folder of binlog files (an archive): then the whole processes compared are
``vecbinlog to-parquet`` of it (zstd Parquet, the documented settings), the script that runs
``read_all()`` of it, and ``mariadb-binlog -v`` of its files (issue 52, item 4), e.g. the
OLTP workload rotated into 2 MB files, ~400 MB::

    python bench/peers.py --rows 5120000 --no-peer --rounds 1 --shapes archive --archive-file-bytes 2097152 --keep /tmp/arch --out /tmp/peers.md

FILE is a binlog of some tens of MB, e.g. the OLTP one of the peers benchmark::

    python bench/peers.py --rows 800000 --no-peer --rounds 1 --shapes oltp --keep /tmp/peersfiles --out /tmp/peers.md

(it starts its own MariaDB server; the file is ``/tmp/peersfiles/oltp.*``, ~64 MB). Each
command runs in a fresh process, in interleaved rounds after a warm-up of each (page cache,
bytecode, numba's cache); output to /dev/null; best and median of the rounds. The floor is
``python -c "import numpy, pyarrow, numba"``: what a process pays before vecbinlog does
anything. ``--attribute`` adds, for the first read of a process against its second (imports
done), where the difference goes: modules imported during the read, numba's dispatchers
loading kernels from its cache, the DDL replay, page faults (cProfile's cumulative times,
which it inflates; and ``getrusage``'s minor faults).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers import CHILD_ENV  # noqa: E402
from bench.test_bench_startup import measure  # noqa: E402

SAMPLE = ROOT / "data" / "sample" / "mariadb-bin.000001"

#: a child that reads FILE (argv[1]) ``READS`` times with its imports done, and prints, per read,
#: its seconds and minor page faults (JSON)
READS = 3
_READS = """
import json, resource, sys, time
import numpy, pyarrow, numba
import vecbinlog, vecbinlog.reader
out = []
for _ in range({reads}):
    f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
    with vecbinlog.open(sys.argv[1]) as log:
        log.read_all()
    out.append((time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
print(json.dumps({{"reads": out, "sqlglot": "sqlglot" in sys.modules}}))
"""

#: a child that profiles its first and second read (imports done) and prints the cumulative
#: seconds of what the first pays more (JSON)
_ATTRIBUTE = """
import cProfile, json, pstats, sys, time
import numpy, pyarrow, numba
import vecbinlog, vecbinlog.reader
WHAT = {
    "imports during the read": ("<frozen importlib._bootstrap>", "_find_and_load"),
    "numba: kernels loaded from its cache": ("dispatcher.py", "_compile_for_args"),
    "DDL replayed whole (sqlglot)": ("tracker.py", "_replay"),
    "DDL met (names only)": ("tracker.py", "_meet"),
}
out = {}
for k in range(2):
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    with vecbinlog.open(sys.argv[1]) as log:
        log.read_all()
    prof.disable()
    row = {"read (under cProfile)": time.perf_counter() - t0}
    stats = pstats.Stats(prof).stats  # (file, line, function) -> (..., cumulative seconds, callers)
    for name, (file, func) in WHAT.items():
        row[name] = sum(v[3] for (f, _, fn), v in stats.items() if f.endswith(file) and fn == func)
    out["first" if k == 0 else "second"] = row
print(json.dumps(out))
"""


def commands(path: Path) -> dict[str, list[str]]:
    """The whole-process commands compared, by name."""
    py = sys.executable
    tool = shutil.which("mariadb-binlog") or "/usr/bin/mariadb-binlog"
    return {
        "python -c 'import numpy, pyarrow, numba' (the floor)": [py, "-c", "import numpy, pyarrow, numba"],
        "vecbinlog info (sample)": [py, "-m", "vecbinlog", "info", str(SAMPLE)],
        "vecbinlog cat (sample)": [py, "-m", "vecbinlog", "cat", str(SAMPLE), "-t", "shop.orders", "-q"],
        f"read_all() of {path.name}": [py, "-c", f"import vecbinlog; vecbinlog.open({str(path)!r}).read_all()"],
        f"mariadb-binlog -v {path.name}": [tool, "--no-defaults", "-v", str(path)],
    }


def export_commands(folder: Path, out: Path) -> dict[str, list[str]]:
    """The whole-process commands compared on an archive (a folder of binlog files), by name."""
    py = sys.executable
    tool = shutil.which("mariadb-binlog") or "/usr/bin/mariadb-binlog"
    files = sorted(str(f) for f in folder.iterdir() if f.name[-6:].isdigit())
    return {
        "python -c 'import numpy, pyarrow, numba' (the floor)": [py, "-c", "import numpy, pyarrow, numba"],
        f"read_all() of {folder.name}/ ({len(files)} files)":
            [py, "-c", f"import vecbinlog; vecbinlog.open({str(folder)!r}).read_all()"],
        f"vecbinlog to-parquet {folder.name}/ OUT -q": [py, "-m", "vecbinlog", "to-parquet", str(folder), str(out), "-q",
                                                      "--overwrite"],
        "mariadb-binlog -v of its files": [tool, "--no-defaults", "-v", *files],
    }


def _child(code: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                         env=CHILD_ENV).stdout
    return json.loads(out.splitlines()[-1])


def first_reads(path: Path, rounds: int) -> tuple[list[list[tuple[float, int]]], bool]:
    """Per fresh process (``rounds`` of them), its reads of ``path`` (seconds, minor faults);
    and whether the reads imported sqlglot."""
    runs = [_child(_READS.format(reads=READS), path) for _ in range(rounds)]
    return [r["reads"] for r in runs], any(r["sqlglot"] for r in runs)


def _row(name: str, walls: list[float], ref: float, floor: float) -> str:
    best, med = min(walls), statistics.median(walls)
    return (f"| {name} | {best:.3f} s | {med:.3f} s | {best - floor:+.3f} s | {best / ref:.2f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path, help="a binlog of some tens of MB")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--attribute", action="store_true", help="where a first read's extra time goes (cProfile)")
    args = ap.parse_args(argv)
    path = args.file.resolve()
    load = os.getloadavg()
    out = Path(tempfile.mkdtemp(prefix="vecbinlog-export-"))
    try:
        seen = measure(args.rounds, export_commands(path, out) if path.is_dir() else commands(path))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    names = list(seen)
    floor, ref = min(seen[names[0]]), min(seen[names[-1]])
    size = sum(f.stat().st_size for f in path.iterdir()) if path.is_dir() else path.stat().st_size
    print(f"{path.name} ({size / 1e6:.1f} MB), {args.rounds} interleaved rounds of whole processes, "
          f"output to /dev/null; {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")
    print("| command | best | median | best - floor | best ÷ mariadb-binlog -v |")
    print("| --- | --- | --- | --- | --- |")
    for name in names:
        print(_row(name, seen[name], ref, floor))
    reads, sqlglot = first_reads(path, args.rounds)
    print(f"\nreads of {path.name} in one process, imports done ({len(reads)} processes; "
          f"sqlglot {'imported' if sqlglot else 'not imported'}):\n")
    print("| read | best | median | minor page faults (median) |")
    print("| --- | --- | --- | --- |")
    for k in range(READS):
        walls = [r[k][0] for r in reads]
        faults = statistics.median(r[k][1] for r in reads)
        print(f"| {'first' if k == 0 else f'#{k + 1}'} | {min(walls):.3f} s | {statistics.median(walls):.3f} s "
              f"| {faults:,.0f} |")
    if args.attribute:
        rows = [_child(_ATTRIBUTE, path) for _ in range(3)]
        print("\nthe first read against the second (cProfile's cumulative seconds, best of 3 processes):\n")
        print("| | first | second |")
        print("| --- | --- | --- |")
        for what in rows[0]["first"]:
            first, second = (min(r[k][what] for r in rows) for k in ("first", "second"))
            print(f"| {what} | {first:.3f} | {second:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
