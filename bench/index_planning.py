"""What the archive index saves the driver (issue 36): bytes of binlog read and time to plan splits
with and without the index, the index's size, and what a read of one table plans with it.

    python bench/index_planning.py ARCHIVE... [--split-bytes 64m] [--table db.t]

ARCHIVE: files, globs, a folder or a mysql-bin.index, as ``vecbinlog.open`` takes them. The
index is built in a temporary folder (``build_index``, a process per CPU), then
``plan_splits`` is run through a pyarrow filesystem that counts the bytes it reads (as an object
store is read): without the index, and with it; each best of three. ``open().tables`` the same.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _best(fn, repeat: int = 3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    from tests.support.countingfs import counting_filesystem

    import vecbinlog
    from vecbinlog.index import archive_paths
    from vecbinlog.splits import plan_splits

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("archive", nargs="+")
    p.add_argument("--split-bytes", default="64m")
    p.add_argument("--table", help="also plan a read of this table only (pruned with the index)")
    args = p.parse_args()
    from vecbinlog.log.config import text_bytes as to_bytes

    split_bytes = to_bytes(args.split_bytes)
    warnings.simplefilter("ignore")
    files = archive_paths(args.archive if len(args.archive) > 1 else args.archive[0])
    total = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} files, {total:,} bytes; splits of {split_bytes:,} bytes")
    with tempfile.TemporaryDirectory() as location:
        t = time.perf_counter()
        built = vecbinlog.build_index(files, location)
        took = time.perf_counter() - t
        size = sum(f.stat().st_size for f in Path(location).iterdir())
        print(f"build_index: {took:.2f} s ({total / took / 1e6:.0f} MB/s); index {size:,} bytes "
              f"({100 * size / total:.3f}% of the archive); {built.summary()}")
        again, _ = _best(lambda: vecbinlog.build_index(files, location), 1)
        print(f"build_index again (every file up to date): {again:.3f} s")
        fs, counted = counting_filesystem()
        for label, extra in (("without the index", {}), ("with the index", {"index": location})):
            counted.read = 0
            took, splits = _best(lambda: plan_splits(files, split_bytes, filesystem=fs, **extra))
            print(f"plan_splits {label}: {took:.3f} s, {counted.read / 3:,.0f} binlog bytes read, {len(splits)} splits")
            counted.read = 0

            def tables(extra=extra):
                with vecbinlog.open(files, filesystem=fs, **extra) as log:
                    return log.tables

            took, found = _best(tables)
            print(f"open().tables {label}: {took:.3f} s, {counted.read / 3:,.0f} binlog bytes read, {len(found)} tables")
        if args.table:
            for label, extra in (("without the index", {}), ("with the index", {"index": location})):
                splits = plan_splits(files, split_bytes, tables=args.table, **extra)
                print(f"plan_splits(tables={args.table!r}) {label}: {len(splits)} splits, "
                      f"{sum(s.size or 0 for s in splits):,} bytes to read")


if __name__ == "__main__":
    main()
