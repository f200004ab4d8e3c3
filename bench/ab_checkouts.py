"""Interleaved A/B timing of ``read_all`` between two checkouts of vecbinlog on the same files.

    python bench/ab_checkouts.py BASE_TREE NEW_TREE FILE [FILE ...] [--rounds 4] [--threads 1]

Each round runs, for every file, one child process per checkout (the order alternating from
round to round), each importing vecbinlog from its tree, reading the file once to warm up and
then ``read_all()`` five times; a child reports its best. The table gives each checkout's best
over the rounds and every round's best, so that a difference can be told from this shared VM's
drift (compare within a round). ``bench/compare_checkouts.py`` checks that the output is the same.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1])
import vecbinlog
f, threads = sys.argv[2], int(sys.argv[3])
with vecbinlog.open(f, threads=threads) as log:
    log.read_all()
best = float("inf")
for _ in range(5):
    t = time.perf_counter()
    with vecbinlog.open(f, threads=threads) as log:
        out = log.read_all()
    best = min(best, time.perf_counter() - t)
    del out
print(json.dumps({"best": best, "module": vecbinlog.__file__}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    trees = [str(args.base.resolve()), str(args.new.resolve())]
    times: dict[tuple[str, str], list[float]] = {}
    for rnd in range(args.rounds):
        for f in args.files:
            for tree in trees if rnd % 2 == 0 else trees[::-1]:
                out = subprocess.run([sys.executable, "-c", CHILD, tree, f, str(args.threads)],
                                     capture_output=True, text=True, check=True).stdout
                got = json.loads(out.splitlines()[-1])
                if not got["module"].startswith(tree):
                    raise RuntimeError(f"{tree}: vecbinlog was imported from {got['module']}")
                times.setdefault((f, tree), []).append(got["best"])
    for f in args.files:
        for tree in trees:
            v = times[(f, tree)]
            print(f"{Path(f).name:40s} {tree:30s} best {min(v) * 1e3:8.1f} ms   rounds "
                  + " ".join(f"{x * 1e3:.0f}" for x in v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
