"""Pages of memory-mapped files let go of once no run not yet decoded reads them."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runs import CarriedRun

__all__ = ["PageRelease"]


class PageRelease:
    """Lets go of the pages of memory-mapped files that decoded runs read (the walk let go of
    those of the segments it left, or kept them for the runs: :meth:`~.batches.BatchReader._hold_for_spans`),
    but not of those that runs not decoded yet (carried, or handed out) will read, while these
    span at most ``held`` bytes: those wait until no such run needs them. (A run decoded before
    the others that began with the file took from under them the pages they read again: the
    mixed bench file, 3 000 page faults a read.) Used on the reading thread only, where
    ``spans`` (the carried runs, by table) change and runs are handed out and read."""

    def __init__(self, spans: dict[str, CarriedRun], held: int) -> None:
        self.spans, self.held = spans, held
        self.groups: dict[int, dict[Any, tuple[int, int]]] = {}  # handed out, not decoded yet: source -> range
        self.waiting: dict[Any, tuple[int, int]] = {}  # source -> the range not let go of yet
        self._keys = itertools.count()

    def handed(self, read: dict[Any, tuple[int, int]]) -> int:
        """A group of runs handed out, that read ``read`` (source -> file range); its key."""
        key = next(self._keys)
        self.groups[key] = read
        return key

    def release(self, key: int) -> None:
        """The group of runs ``key`` is decoded: let go of what it read and nothing else needs."""
        for source, (lo, hi) in self.groups.pop(key).items():
            w = self.waiting.get(source)
            self.waiting[source] = (lo, hi) if w is None else (min(lo, w[0]), max(hi, w[1]))
        for source in list(self.waiting):
            lo, hi = self.waiting.pop(source)
            needed = [sp.ranges[source] for sp in self.spans.values() if source in sp.ranges]
            needed += [read[source] for read in self.groups.values() if source in read]
            keep_lo = min((a for a, _ in needed), default=0)
            keep_hi = max((b for _, b in needed), default=0)
            if keep_hi - keep_lo > self.held:  # too much to keep: let go (the runs read it in again)
                keep_lo = keep_hi = 0
            if lo < keep_lo:
                source.release(lo, min(hi, keep_lo))
            if hi > keep_hi:
                source.release(max(lo, keep_hi), hi)
            if lo < keep_hi and hi > keep_lo:
                self.waiting[source] = (max(lo, keep_lo), min(hi, keep_hi))
