"""The progress bar of a read: binlog bytes done over every file of the read, and rows/s."""

from __future__ import annotations

import time
from typing import Any, Mapping

import pyarrow as pa

from ..binlog.file import BinlogFile

__all__ = ["ProgressBar"]


class ProgressBar:
    """A progress bar of the binlog bytes done (``open(..., progress=...)``, the command line's
    bar on stderr): tqdm.auto, or tqdm with the options given. It moves as the walk goes on and
    as batches are handed out (their last row's place), and counts their rows."""

    def __init__(self, files: list[BinlogFile], desc: str, options: bool | Mapping[str, Any]) -> None:
        self.base: dict[int, int] = {}
        self.by_name: dict[str, int] = {}
        total = 0
        for f in files:
            self.base[id(f)] = total
            self.by_name.setdefault(f.name, total)
            total += f.size or 0
        kwargs: dict[str, Any] = {"total": total, "desc": desc, "unit": "B", "unit_scale": True, "unit_divisor": 1024,
                                  "leave": False}
        if isinstance(options, Mapping):
            kwargs.update(options)
            from tqdm import tqdm
        else:
            from tqdm.auto import tqdm
        self.bar = tqdm(**kwargs)
        self.rows = 0
        self.t0 = self.drawn = time.monotonic()

    def at(self, f: BinlogFile, offset: int) -> None:
        """The walk has reached ``offset`` of file ``f``."""
        self._to(self.base.get(id(f), 0) + offset)

    def batch(self, batch: pa.RecordBatch) -> None:
        """A batch handed out: its rows counted, the bar at its last row's place."""
        n = batch.num_rows
        if not n:
            return
        self.rows += n
        last_file = batch.column("_log_file")[n - 1].as_py()
        self._to(self.by_name.get(last_file, 0) + int(batch.column("_log_pos")[n - 1].as_py()))
        now = time.monotonic()
        rate = self.rows / max(now - self.t0, 1e-9)
        redraw = now - self.drawn >= self.bar.mininterval  # as often as tqdm redraws itself
        self.bar.set_postfix_str(f"{self.rows:,} rows, {rate:,.0f} rows/s", refresh=redraw)
        if redraw:
            self.drawn = now

    def _to(self, done: int) -> None:
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)

    def done(self) -> None:
        if self.bar.total and self.bar.total > self.bar.n:
            self.bar.update(self.bar.total - self.bar.n)

    def close(self) -> None:
        self.bar.close()
