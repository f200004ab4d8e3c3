"""The batches of runs, in log order, with runs placed and decoded on background threads.

A read hands out *runs* (one table's rows events of one layout, :mod:`.runs`) in log order;
each is a :class:`PendingRun` that makes its batches when asked. :func:`decode_in_order`
makes the larger ones on the ``batch`` threads (:mod:`vecbinlog.pools`: the compiled walk,
NumPy and Arrow release the GIL), each a batch ahead of the reader, while the reading thread
walks on, and yields every batch in the order the runs were handed out: batches and errors
come in the same order whatever ``threads`` is. What runs in the background is submitted
through the read's task group (:class:`~vecbinlog.pools.TaskGroup`), which the read closes
when it ends, however it ends: a run's event sources hold the bytes it reads.
"""

from __future__ import annotations

from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Generator, Iterable, Iterator

import pyarrow as pa

from ..decode.decoders.common import CountedNote
from ..errors import DecodeWarning, warn
from ..pools import TaskGroup
from .runs import CARRY_SHARE

__all__ = ["Batch", "Handed", "Made", "PendingRun", "ReadTally", "decode_in_order", "BACKGROUND_BYTES",
           "BACKGROUND_COLUMN_BYTES", "BACKGROUND_EVENT_BYTES"]

#: a batch decoded: (table, record batch)
Batch = tuple[str, pa.RecordBatch]

#: the bytes of rows events under which a run is placed and decoded here, not in the
#: background (a thread's hand-off and its turns at the GIL cost more than they give)
BACKGROUND_BYTES = 1 << 20
#: nor when its rows events are smaller than this on average: a log of many small transactions
#: keeps the reading thread busy with Python (transactions, GTIDs), which a run in the
#: background would take turns with at the GIL (bench/TUNING.md)
BACKGROUND_EVENT_BYTES = 1024
#: nor when they hold under this per column of its layout: each column decoded costs Python time
#: of its own (the GIL) whatever its size, so a run of many columns with few bytes of each takes
#: turns at the GIL with the reading thread more than it runs beside it. Random shapes (seed
#: 20261128, threads=2 against 1): the runs of the cases that read slower in the background had
#: 68-164 KB per column (median of each case), those that read faster 0.9-8.8 MB (docs/speed.md)
BACKGROUND_COLUMN_BYTES = 512 << 10
#: runs under way in the background: ``threads`` of any size, and up to RUNS_AHEAD x ``threads``
#: while each holds under ``segment_bytes // CARRY_SHARE`` of rows events and all of them under
#: ``segment_bytes``, so that a thread done with a small run takes the next at once, not when
#: the reading thread has taken the oldest one's batch. Larger runs are not: more of them under
#: way hold more memory (bench/TUNING.md)
RUNS_AHEAD = 3
#: the batches a run in the background makes ahead of its reader at most (they are held until
#: read): the next is started when the reader takes one, so that memory stays bounded. (Before,
#: a run's later batches were made on the reading thread, which then could not walk on: the
#: integer bench file 246 -> 215 ms, best of 4 interleaved, bench/TUNING.md)
BACKGROUND_BATCHES = 1

#: what decoding a run gives: per batch (batch, decoding notes, rows left out by the filters)
Made = tuple[pa.RecordBatch, list[str], int]
#: a batch handed out in log order: (table, the file of its run, batch, decoding notes, rows left out)
Handed = tuple[str, str, pa.RecordBatch, list[str], int]


@dataclass
class ReadTally:
    """What one read finds to tell as its batches come, told once at its end (:meth:`warn`):
    each table's decoding notes (a note met in several batches once, the counts of a
    :class:`~vecbinlog.decode.decoders.common.CountedNote` added up) and the rows the outcome
    filter left out. Kept on the reading thread. ``deferred_text``: the read returns whole
    tables, so text of transcoded charsets is decoded as bytes and transcoded once every batch
    is there (:attr:`~vecbinlog.decode.decoders.common.DecodeOptions.deferred_text`)."""

    deferred_text: bool = False
    dropped: Counter[str] = field(default_factory=Counter)
    #: (table, note text) -> (the file of its first batch, the note, counts so far)
    notes: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def take(self, table: str, path: str, notes: list[str], left_out: int) -> None:
        """Take in what a batch of ``table`` (of a run of the file ``path``) found."""
        if left_out:
            self.dropped[table] += left_out
        for note in notes:
            self.note(path, table, note)

    def note(self, path: str, table: str, note: str) -> None:
        """Take in a note of a batch of ``table`` read from ``path`` (a CountedNote's counts add up)."""
        key = (table, note.template + "\0" + note.name if isinstance(note, CountedNote) else note)
        seen = self.notes.get(key)
        if seen is None:
            self.notes[key] = (path, note)
        elif isinstance(note, CountedNote) and isinstance(seen[1], CountedNote):
            self.notes[key] = (seen[0], seen[1].plus(note))

    def warn(self) -> None:
        """One DecodeWarning per note and per table with rows left out; then nothing more to tell."""
        for (table, _), (path, note) in self.notes.items():
            warn(f"{path}: {table}: {note}", DecodeWarning)
        for name, n in self.dropped.items():
            if n:
                warn(f"{name}: {n} row images left out: their transaction rolled back (or was undone by ROLLBACK "
                     "TO SAVEPOINT, or has no end in the files), so they did not take effect; rolled_back='keep' "
                     "keeps them, marked by _outcome", DecodeWarning)
        self.notes.clear()
        self.dropped.clear()


class PendingRun:
    """The batches of one run of ``table``, placed and decoded: here, as they are read
    (:meth:`results`), or in the background (:meth:`start`, on the ``tasks`` of the read),
    :data:`BACKGROUND_BATCHES` at a time ahead of the reader (:meth:`take`); ``make`` yields
    them, each handed out with its decoding notes and the rows the filters left out
    (:data:`Handed`: the read takes them in). ``release``: called once the run is decoded, to
    let its segments' pages go again (the walk let them go when it moved on, and the run's
    reads brought them back); None: the walk lets them go."""

    def __init__(self, path: str, table: str, background: bool, make: Callable[[], Iterator[Made]],
                 tasks: TaskGroup, release: Callable[[], None] | None = None, nbytes: int = 0) -> None:
        self.path, self.table, self.background = path, table, background
        self.nbytes = nbytes  #: of its rows events
        self.make: Callable[[], Iterator[Made]] | None = make
        self.future: Future | None = None  #: the batches being made in the background
        self.workers = 1
        self.finished = False  #: every batch handed over (or the error raised)
        self._tasks = tasks
        self._release = release

    def start(self, workers: int) -> None:
        """Place and decode the run's first batches on one of ``workers`` ``batch`` threads."""
        self.workers = workers
        self.future = self._tasks.submit("batch", workers, _made_until_error, self.make, BACKGROUND_BATCHES)

    def ready(self) -> bool:
        """Whether :meth:`take` has its batches without waiting (a run started in the background)."""
        return self.future is not None and self.future.done()

    def cancel(self) -> None:
        """Not wanted any more: not started, or let go of once done."""
        if self.future is not None:
            self.future.cancel()
        self.make = self.future = None

    def take(self) -> Iterator[Handed]:
        """The batches a run started in the background has made (waiting for them), the next
        ones started in the background first; at the end (``finished``), the error if one
        stopped it."""
        assert self.future is not None  # (taken while one is under way)
        done, error, rest = self.future.result()
        self.future = None
        more = error is None and len(done) == BACKGROUND_BATCHES
        if more:
            self.future = self._tasks.submit("batch", self.workers, _made_until_error, lambda: rest, BACKGROUND_BATCHES)
        else:
            self.finished, self.make = True, None
        yield from self._handed(_handed_over(done))
        if not more:
            self._end(error)

    def results(self) -> Iterator[Handed]:
        """Each batch (:data:`Handed`); the batches before an error come first, then the error."""
        if self.future is not None:
            while not self.finished:
                yield from self.take()
            return
        assert self.make is not None  # (not started in the background: made here)
        made, self.make = self.make(), None
        yield from self._handed(made)
        self.finished = True
        self._end(None)

    def _handed(self, made: Iterable[Made]) -> Iterator[Handed]:
        for batch, notes, left_out in made:
            yield self.table, self.path, batch, notes, left_out
            del batch

    def _end(self, error: Exception | None) -> None:
        if self._release is not None:
            self._release()
        if error is not None:
            raise error


def _handed_over(made: list[Made]) -> Iterator[Made]:
    """The items of ``made``, each let go of by the list as it is handed over."""
    made.reverse()
    while made:
        yield made.pop()


def _made_until_error(make: Callable[[], Iterator[Made]], limit: int
                      ) -> tuple[list[Made], Exception | None, Iterator[Made]]:
    """The first ``limit`` batches ``make`` yields, the error that stopped it (None: none),
    and the rest of them, to be made next."""
    made: list[Made] = []
    batches = make()
    try:
        for m in batches:
            made.append(m)
            if len(made) == limit:
                break
    except Exception as exc:
        return made, exc, iter(())
    return made, None, batches


def decode_in_order(jobs: Iterable[PendingRun], threads: int,
                    ahead_bytes: int = 0) -> Generator[Handed, None, None]:
    """The batches of ``jobs``, in their order.

    With ``threads`` > 1 the runs marked ``background`` are placed and decoded on ``threads``
    threads (the compiled walk, NumPy and Arrow release the GIL), each
    :data:`BACKGROUND_BATCHES` ahead of the batch read, ``threads`` runs under way at a time,
    more while they are small and hold under ``ahead_bytes`` of rows events
    (:data:`RUNS_AHEAD`), while this thread walks on through the log and takes the batches
    in turn; batches still come, and fail, in order: when the walk fails, the batches of the
    runs before come first."""
    pending: deque[PendingRun] = deque()  # started, in log order

    def head(wait: bool) -> Iterator[Handed]:  # the first run's batches made (waiting for them)
        if wait or pending[0].ready():
            yield from pending[0].take()
            if pending[0].finished:
                pending.popleft()

    def full() -> bool:
        return len(pending) >= threads and (
            len(pending) >= RUNS_AHEAD * threads or sum(p.nbytes for p in pending) >= ahead_bytes
            or any(p.nbytes >= ahead_bytes // CARRY_SHARE for p in pending))

    it = iter(jobs)
    try:
        while True:
            while pending and pending[0].ready():  # what is made, handed over at once (its memory freed)
                yield from head(wait=False)
            try:
                job = next(it)
            except StopIteration:
                break
            except BaseException:
                while pending:
                    yield from head(wait=True)
                raise
            if threads > 1 and job.background:
                job.start(threads)
                pending.append(job)
                while full():
                    yield from head(wait=True)
            else:
                while pending:
                    yield from head(wait=True)
                yield from job.results()
            del job
        while pending:
            yield from head(wait=True)
    finally:  # the caller stopped reading, or a run failed: the runs under way are not wanted
        for job in pending:
            job.cancel()
