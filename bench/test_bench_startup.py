"""Start-up: ``vecbinlog info`` and ``vecbinlog cat`` of the 3 KB sample, as whole processes,
against ``mariadb-binlog -vv`` printing the same file, and what the time goes to.

    pytest bench/test_bench_startup.py --benchmark-enable --benchmark-columns=min,mean,rounds
    python bench/test_bench_startup.py [--rounds 5] [--profile]   # interleaved rounds, markdown

On a 3 KB file a command is nearly all start-up: the interpreter, the imports (NumPy, pyarrow,
numba; sqlglot when the log has DDL, as the sample has) and loading the compiled kernels from
numba's cache. The rows ``python -c 'import ...'`` are the floors under it: what importing the
libraries alone costs in a fresh process. Children run with bytecode written (``CHILD_ENV``:
without ``PYTHONDONTWRITEBYTECODE``), as an installed package has it; ``--profile`` adds each
top-level package's share of ``python -X importtime -m vecbinlog info`` (self times, best of
the rounds) and the time ``info`` spends after its imports.
"""

from __future__ import annotations

import argparse
import os
import re
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

SAMPLE = ROOT / "data" / "sample" / "mariadb-bin.000001"
#: the goal of issue 37 for ``info`` and ``cat`` of the sample (best of 5, whole process, warm)
GOAL_SECONDS = 0.3


def commands(path: Path = SAMPLE) -> dict[str, list[str]]:
    """The commands compared, by name: the floors, mariadb-binlog -vv, then vecbinlog's."""
    py = sys.executable
    tool = shutil.which("mariadb-binlog") or "/usr/bin/mariadb-binlog"
    return {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy, pyarrow'": [py, "-c", "import numpy, pyarrow"],
        "python -c 'import numpy, pyarrow, numba'": [py, "-c", "import numpy, pyarrow, numba"],
        "mariadb-binlog -vv": [tool, "--no-defaults", "-vv", "--base64-output=DECODE-ROWS", str(path)],
        "vecbinlog info": [py, "-m", "vecbinlog", "info", str(path)],
        "vecbinlog cat": [py, "-m", "vecbinlog", "cat", str(path), "-t", "shop.orders", "-q"],
        "vecbinlog cat -f csv": [py, "-m", "vecbinlog", "cat", str(path), "-t", "shop.orders", "-f", "csv", "-q"],
    }


@pytest.mark.parametrize("name", list(commands()))
def test_start_up(benchmark, name):
    argv = commands()[name]

    def run():
        _run_child(argv, capture=False)

    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)


def measure(rounds: int, cmds: dict[str, list[str]] | None = None) -> dict[str, list[float]]:
    """Each command's wall times (of ``cmds``, by name; :func:`commands` by default) over
    ``rounds`` interleaved rounds (after a warm-up of each: page cache, bytecode, numba's cache)."""
    cmds = commands() if cmds is None else cmds
    for argv in cmds.values():
        _run_child(argv, capture=False)
    seen: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, argv in cmds.items():
            seen[name].append(_run_child(argv, capture=False)[0])
    return seen


def import_profile(rounds: int) -> tuple[dict[str, float], float]:
    """Seconds of each top-level package in ``-X importtime`` of ``vecbinlog info`` (self times
    summed, best of ``rounds``), and the best wall time of the same command."""
    argv = [sys.executable, "-X", "importtime", "-m", "vecbinlog", "info", str(SAMPLE)]
    best: dict[str, float] = {}
    for _ in range(rounds):
        t0 = time.perf_counter()
        err = subprocess.run(argv, capture_output=True, text=True, env=CHILD_ENV, check=True).stderr
        best["(whole process, wall)"] = min(best.get("(whole process, wall)", 1e9), time.perf_counter() - t0)
        per: dict[str, float] = {}
        for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", err):
            top = m.group(2).split(".")[0]
            per[top] = per.get(top, 0.0) + int(m.group(1)) / 1e6
        for k, v in per.items():
            best[k] = min(best.get(k, 1e9), v)
    wall = best.pop("(whole process, wall)")
    return best, wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="also the import-time profile of `info`")
    args = ap.parse_args(argv)
    seen = measure(args.rounds)
    ref = min(seen["mariadb-binlog -vv"])
    print(f"{SAMPLE.name} ({SAMPLE.stat().st_size:,} bytes), best of {args.rounds} interleaved rounds, whole "
          f"processes, output to /dev/null ({os.cpu_count()} CPUs)\n")
    print("| command | best | rounds | vs `mariadb-binlog -vv` |")
    print("| --- | --- | --- | --- |")
    for name, walls in seen.items():
        print(f"| `{name}` | {min(walls):.3f} s | {', '.join(f'{w:.2f}' for w in walls)} | {min(walls) / ref:.0f}x |")
    if args.profile:
        per, wall = import_profile(args.rounds)
        total = sum(per.values())
        print(f"\n`python -X importtime -m vecbinlog info`: {wall:.3f} s in all, {total:.3f} s of imports "
              "(self times by top-level package, best of the rounds; -X importtime adds its own overhead)\n")
        print("| package | seconds |")
        print("| --- | --- |")
        for name, sec in sorted(per.items(), key=lambda kv: -kv[1])[:12]:
            print(f"| {name} | {sec:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
