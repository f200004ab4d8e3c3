"""``vecbinlog cat`` (every format) against ``mariadb-binlog -vv`` printing the same file.

    pytest bench/test_bench_cli.py --benchmark-enable --benchmark-columns=min,mean,rounds
    python bench/test_bench_cli.py FILE DB.TABLE [--rounds 5]     # interleaved rounds

Both print every row of the file's one table to /dev/null, as whole processes (imports and
start-up included: that is what a user waits for). The pytest benchmarks use the MariaDB-made
files of bench/conftest.py (VECBINLOG_BENCH_ROWS scales them: 1 000 000 makes an 89 MB narrow
file); peak RSS and the time to the first line are in each benchmark's extra_info. The script
runs the commands in interleaved rounds (this shared VM's speed drifts from one minute to the
next, so each method's best over the rounds is compared) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers import CHILD_ENV, _run_child  # noqa: E402

FORMATS = ("table", "csv", "jsonl")
TABLES = {"narrow": "b.narrow", "strings": "b.strings"}


def commands(path: Path, table: str) -> dict[str, list[str]]:
    """The commands compared, by name: mariadb-binlog -vv, then cat in each format."""
    tool = shutil.which("mariadb-binlog") or "/usr/bin/mariadb-binlog"
    out = {"mariadb-binlog -vv": [tool, "--no-defaults", "-vv", "--base64-output=DECODE-ROWS", str(path)]}
    for fmt in FORMATS:
        out[f"vecbinlog cat -f {fmt}"] = [sys.executable, "-m", "vecbinlog", "cat", str(path), "-t", table, "-f", fmt, "-q"]
    return out


def first_line(argv: list[str]) -> float:
    """Seconds until the command's first line of output (the rest is read and dropped)."""
    t0 = time.perf_counter()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=CHILD_ENV) as proc:
        proc.stdout.readline()
        first = time.perf_counter() - t0
        while proc.stdout.read(1 << 20):
            pass
    return first


@pytest.mark.parametrize("shape", ["narrow", "strings"])
@pytest.mark.parametrize("name", ["mariadb-binlog -vv", *(f"vecbinlog cat -f {f}" for f in FORMATS)])
def test_print_every_row(benchmark, bench_binlogs, shape, name):
    argv = commands(bench_binlogs[shape], TABLES[shape])[name]
    peaks = []

    def run():
        _, rss, _, _ = _run_child(argv, capture=False, timed=True)
        peaks.append(rss)

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(peak_rss_mb=max(peaks) / 1e6, first_line_s=first_line(argv),
                                file_mb=bench_binlogs[shape].stat().st_size / 1e6)


def measure(path: Path, table: str, rounds: int) -> dict[str, dict[str, float]]:
    """Each command's best wall time over ``rounds`` interleaved rounds, its peak RSS and the
    time to its first line."""
    cmds = commands(path, table)
    seen: dict[str, list[tuple[float, int]]] = {name: [] for name in cmds}
    for name, argv in cmds.items():  # warm-up: page cache, compiled-code caches
        _run_child(argv, capture=False)
    for _ in range(rounds):
        for name, argv in cmds.items():
            wall, rss, _, _ = _run_child(argv, capture=False, timed=True)
            seen[name].append((wall, rss))
    return {name: {"seconds": min(w for w, _ in runs), "rounds": [w for w, _ in runs],
                   "rss_mb": max(r for _, r in runs) / 1e6, "first_line": first_line(cmds[name])}
            for name, runs in seen.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("table")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    res = measure(args.file, args.table, args.rounds)
    ref = res["mariadb-binlog -vv"]["seconds"]
    print(f"{args.file} ({args.file.stat().st_size / 1e6:.0f} MB), table {args.table}, best of {args.rounds} "
          f"interleaved rounds, output to /dev/null ({os.cpu_count()} CPUs)\n")
    print("| command | wall time | vs `mariadb-binlog -vv` | peak RSS | first line after |")
    print("| --- | --- | --- | --- | --- |")
    for name, m in res.items():
        print(f"| `{name}` | {m['seconds']:.2f} s (rounds: {', '.join(f'{x:.2f}' for x in m['rounds'])}) | "
              f"{ref / m['seconds']:.2f}x | {m['rss_mb']:.0f} MB | {m['first_line']:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
