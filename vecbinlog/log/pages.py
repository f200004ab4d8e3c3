"""The pages of memory-mapped files a read walks: kept while runs not yet decoded will read
them, let go of once none will."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from ..binlog.file import Segment
from ..binlog.sources import MappedSource

if TYPE_CHECKING:
    from .logwalk import Step
    from .runs import Carrier

__all__ = ["PageRelease"]


class PageRelease:
    """The one owner of a read's pages of memory-mapped files (used on the reading thread).

    The walk lets go of a segment's pages as it leaves it, unless it is *held*: asked
    (:meth:`keeps`) as it leaves, this says whether runs decoded later read the segment (runs
    in the background, :meth:`hold`; runs carried on, :meth:`hold_for_carried`): those let go
    of what they read once decoded (:meth:`handed`, then :meth:`release`), but not what runs
    not decoded yet (the ``carrier``'s carried runs, or runs handed out) will read, while these
    span at most ``held`` bytes: those wait until no such run needs them. (A run decoded before
    the others that began with the file took from under them the pages they read again: the
    mixed bench file, 3 000 page faults a read.)"""

    def __init__(self, carrier: Carrier, held: int) -> None:
        self._carrier, self._held = carrier, held
        self._segments: set[int] = set()  # held segments (by id): the walk does not let go of their pages
        self._groups: dict[int, dict[Any, tuple[int, int]]] = {}  # handed out, not decoded yet: source -> range
        self._waiting: dict[Any, tuple[int, int]] = {}  # source -> the range not let go of yet
        self._keys = itertools.count()

    def keeps(self, segment: Segment) -> bool:
        """Asked by the walk as it leaves ``segment``: whether its pages stay mapped (the runs
        that read them let go of them)."""
        if id(segment) in self._segments:
            self._segments.discard(id(segment))
            return True
        return False

    def hold(self, segment: Segment) -> None:
        """Runs decoded in the background read ``segment``: its pages are theirs to let go of."""
        self._segments.add(id(segment))

    def hold_for_carried(self, step: Step, segment_bytes: int, held_segments: int) -> None:
        """Keep the pages of ``step``'s segment of a memory-mapped file mapped when a carried run
        has events in it (the last run of its group lets go of them once decoded), as long as
        the carried runs span at most ``held_segments`` segments."""
        source = step.file.source
        if not isinstance(source, MappedSource) or step.src is not step.file.whole:
            return
        here = self._carrier.ranges(source)
        ending = any(hi == step.segment.end for _, hi in here)
        if ending and step.segment.end - min(lo for lo, _ in here) <= held_segments * segment_bytes:
            self._segments.add(id(step.segment))

    def handed(self, read: dict[Any, tuple[int, int]]) -> int:
        """A group of runs handed out, that read ``read`` (source -> file range); its key."""
        key = next(self._keys)
        self._groups[key] = read
        return key

    def release(self, key: int) -> None:
        """The group of runs ``key`` is decoded: let go of what it read and nothing else needs."""
        for source, (lo, hi) in self._groups.pop(key).items():
            w = self._waiting.get(source)
            self._waiting[source] = (lo, hi) if w is None else (min(lo, w[0]), max(hi, w[1]))
        for source in list(self._waiting):
            lo, hi = self._waiting.pop(source)
            needed = self._carrier.ranges(source)
            needed += [read[source] for read in self._groups.values() if source in read]
            keep_lo = min((a for a, _ in needed), default=0)
            keep_hi = max((b for _, b in needed), default=0)
            if keep_hi - keep_lo > self._held:  # too much to keep: let go (the runs read it in again)
                keep_lo = keep_hi = 0
            if lo < keep_lo:
                source.release(lo, min(hi, keep_lo))
            if hi > keep_hi:
                source.release(max(lo, keep_hi), hi)
            if lo < keep_hi and hi > keep_lo:
                self._waiting[source] = (max(lo, keep_lo), min(hi, keep_hi))
