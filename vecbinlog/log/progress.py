"""The progress bar of a read: binlog bytes walked, over every file of the read."""

from __future__ import annotations

from typing import Any, Mapping

from ..binlog.file import BinlogFile

__all__ = ["ProgressBar"]


class ProgressBar:
    """A progress bar of the binlog bytes walked (``open(..., progress=...)``): tqdm.auto, or
    tqdm with the options given."""

    def __init__(self, files: list[BinlogFile], desc: str, options: bool | Mapping[str, Any]) -> None:
        self.base: dict[int, int] = {}
        total = 0
        for f in files:
            self.base[id(f)] = total
            total += f.size
        kwargs: dict[str, Any] = {"total": total, "desc": desc, "unit": "B", "unit_scale": True, "unit_divisor": 1024,
                                  "leave": False}
        if isinstance(options, Mapping):
            kwargs.update(options)
            from tqdm import tqdm
        else:
            from tqdm.auto import tqdm
        self.bar = tqdm(**kwargs)

    def at(self, f: BinlogFile, offset: int) -> None:
        """The walk has reached ``offset`` of file ``f``."""
        done = self.base.get(id(f), 0) + offset
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)

    def done(self) -> None:
        if self.bar.total and self.bar.total > self.bar.n:
            self.bar.update(self.bar.total - self.bar.n)

    def close(self) -> None:
        self.bar.close()
