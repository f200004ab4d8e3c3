"""The command line's progress bar: binlog bytes done and rows/s on stderr, drawn only when
stderr is a terminal and ``--quiet`` is not given."""

from __future__ import annotations

import argparse
import sys
import time

import pyarrow as pa

import vecbinlog


class Progress:
    """A tqdm bar on stderr of binlog bytes done (and rows/s), per batch; a no-op unless
    stderr is a terminal and ``--quiet`` is not given."""

    def __init__(self, log: vecbinlog.Binlog, args: argparse.Namespace, desc: str = "") -> None:
        self.enabled = not args.quiet and stderr_isatty()
        self.base: dict[str, int] = {}
        total = 0
        for f in log.files:
            self.base.setdefault(f.name, total)
            total += f.size
        self.total = total
        self.rows = 0
        self.t0 = time.monotonic()
        self.bar = None
        if self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, leave=False, dynamic_ncols=True,
            )

    def start(self, desc: str) -> None:
        """Start over (another pass over the files, for the next table)."""
        if self.bar is not None:
            self.bar.reset(total=self.total)
            self.bar.set_description(desc)

    def batch(self, batch: pa.RecordBatch) -> None:
        """Count a batch's rows; move the bar to its last row's file offset."""
        self.rows += batch.num_rows
        if self.bar is None or batch.num_rows == 0:
            return
        last_file = batch.column("_log_file")[-1].as_py()
        done = self.base.get(last_file, 0) + int(batch.column("_log_pos")[-1].as_py())
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)
        rate = self.rows / max(time.monotonic() - self.t0, 1e-9)
        self.bar.set_postfix_str(f"{self.rows:,} rows, {rate:,.0f} rows/s", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stderr_isatty() -> bool:
    """Whether stderr is a terminal (False when it is closed or replaced)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
