"""How fast a read could be if nothing but its compiled kernels took time: the random shapes'
ratio to ``mariadb-binlog -v`` against that bound.

    python bench/kernel_bound.py [--seed S] [--cases 30] [--scale 1] [--out DIR] [--rounds 3] [--json FILE]

The cases are those of ``bench/random_shapes.py`` (the same seed, scale and ``--out`` find the
same files; missing ones are written by a MariaDB server first). Per case, in this process,
``read_all`` with ``threads=1``, best of ``--rounds``; in that best read, the time spent inside
the kernels (every numba dispatcher of vecbinlog's modules, called from Python, timed: a kernel
inlined into another is counted in its caller), and ``mariadb-binlog -v`` (best of 2, output to
/dev/null, as random_shapes.py runs it). The bound is ``mariadb-binlog`` time / kernel time:
the ratio a read would reach with every line of Python free and the kernels as fast as now. A
goal above a case's bound takes faster kernels (or less work), not less Python.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import peers, random_shapes


class KernelClock:
    """Time spent in vecbinlog's kernels: every numba dispatcher a vecbinlog module holds (as a
    name, or a value of a module-level dict) replaced by a wrapper that adds its time up."""

    def __init__(self) -> None:
        from numba.core.dispatcher import Dispatcher

        import vecbinlog

        self.seconds = 0.0
        self.by_kernel: dict[str, float] = {}
        wrappers: dict[int, Any] = {}

        def wrapped(d: Any) -> Any:
            if id(d) not in wrappers:
                name = f"{d.py_func.__module__.rsplit('.', 1)[-1]}.{d.py_func.__name__}"

                def timed(*args: Any, **kwargs: Any) -> Any:
                    t = time.perf_counter()
                    try:
                        return d(*args, **kwargs)
                    finally:
                        spent = time.perf_counter() - t
                        self.seconds += spent
                        self.by_kernel[name] = self.by_kernel.get(name, 0.0) + spent

                wrappers[id(d)] = timed
            return wrappers[id(d)]

        for info in pkgutil.walk_packages(vecbinlog.__path__, "vecbinlog."):
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # an optional engine's module (Spark, Polars...) not installed
                continue
            for name, value in list(vars(module).items()):
                if isinstance(value, Dispatcher):
                    setattr(module, name, wrapped(value))
                elif isinstance(value, dict):
                    for key, item in list(value.items()):
                        if isinstance(item, Dispatcher):
                            value[key] = wrapped(item)
                        elif isinstance(item, tuple) and any(isinstance(x, Dispatcher) for x in item):
                            value[key] = tuple(wrapped(x) if isinstance(x, Dispatcher) else x for x in item)

    def reset(self) -> None:
        self.seconds = 0.0
        self.by_kernel = {}


def measure(folder: Path, clock: KernelClock, rounds: int) -> dict:
    """One case: the best ``read_all`` (threads=1) and its kernels' time, and mariadb-binlog's."""
    import vecbinlog

    files = [str(p) for p in peers.files_of(folder)]

    def read() -> None:
        with vecbinlog.open(files, threads=1) as log:
            tables = log.read_all()
        del tables

    read()  # (kernels loaded, caches warm)
    best: tuple[float, float, dict[str, float]] | None = None
    for _ in range(rounds):
        clock.reset()
        t = time.perf_counter()
        read()
        wall = time.perf_counter() - t
        if best is None or wall < best[0]:
            best = (wall, clock.seconds, dict(clock.by_kernel))
    assert best is not None
    peer = min(random_shapes._mariadb_binlog(str(folder)) for _ in range(2))
    top = sorted(best[2].items(), key=lambda kv: -kv[1])[:4]
    return {"read": best[0], "kernels": best[1], "mariadb_binlog": peer,
            "top_kernels": {k: round(v, 4) for k, v in top}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True, help="the seed of random_shapes.py's cases")
    ap.add_argument("--cases", type=int, default=random_shapes.DEFAULT_CASES)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "vecbinlog-random-shapes")
    ap.add_argument("--rounds", type=int, default=3, help="read_all best of this many (default 3)")
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    args = ap.parse_args()
    folders = random_shapes.ensure_cases(args.out, args.seed, args.scale, list(range(args.cases)))
    clock = KernelClock()
    results = {}
    print("| case | read_all | in kernels | mariadb-binlog | ratio | kernels-only bound | largest kernels |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for k, folder in sorted(folders.items()):
        r = measure(folder, clock, args.rounds)
        results[k] = r
        top = ", ".join(f"{name} {s * 1000:.1f}" for name, s in r["top_kernels"].items())
        print(f"| {k} | {r['read'] * 1000:.0f} ms | {r['kernels'] * 1000:.0f} ms ({r['kernels'] / r['read']:.0%}) "
              f"| {r['mariadb_binlog'] * 1000:.0f} ms | {r['mariadb_binlog'] / r['read']:.2f} "
              f"| {r['mariadb_binlog'] / r['kernels']:.2f} | {top} |", flush=True)
    print()
    for label, key in (("ratio", "read"), ("kernels-only bound", "kernels")):
        values = np.array([r["mariadb_binlog"] / r[key] for r in results.values()])  # (as random_shapes.py)
        print(f"{label}: min {values.min():.2f}, p10 {np.percentile(values, 10):.2f}, median {np.median(values):.2f}")
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "scale": args.scale, "cases": results}, indent=1))


if __name__ == "__main__":
    main()
