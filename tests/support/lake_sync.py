"""One sync into a lake table in a process of its own, for the tests that kill it.

    python -m tests.support.lake_sync delta ARCHIVE TABLE PATH [--max-bytes N] [--hang-at K MARKER]
    python -m tests.support.lake_sync iceberg ARCHIVE TABLE NS.TABLE --catalog URI [...]

With ``--hang-at K MARKER``, once K commits are made and the next one is about to be
(``progress`` is called with the stage ``commit``: its rows are read, nothing of it written),
the process creates MARKER and sleeps: the test kills it there (SIGKILL). Without it the sync
runs to its end and prints its summary.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("format", choices=("delta", "iceberg"))
    parser.add_argument("archive")
    parser.add_argument("table")
    parser.add_argument("target")
    parser.add_argument("--catalog")
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--hang-at", nargs=2, metavar=("K", "MARKER"))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from vecbinlog.lake import SyncStep, sync_delta, sync_iceberg

    def progress(step: SyncStep) -> None:
        if args.hang_at and step.stage == "commit" and step.commits == int(args.hang_at[0]):
            Path(args.hang_at[1]).write_text(f"{step.at}\n")
            time.sleep(600)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rolled-back changes left out, a table without a key
        if args.format == "delta":
            done = sync_delta(args.archive, args.table, args.target, max_bytes=args.max_bytes, progress=progress)
        else:
            done = sync_iceberg(args.archive, args.table, args.target, catalog=args.catalog,
                                max_bytes=args.max_bytes, progress=progress)
    print(done.summary())


if __name__ == "__main__":
    main()
