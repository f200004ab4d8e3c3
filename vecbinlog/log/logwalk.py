"""One walk of the binlog files: segments -> unpack -> table maps -> DDL -> transactions.

Everything that reads a set of files goes through here: the reads of rows (:mod:`vecbinlog.log.batches`),
``tables``, ``schema``, ``plans`` and ``layouts`` (split planning), ``snapshot``, and ``info``
(which needs the segments unpacked but neither DDL nor transactions: :func:`unpacked`).

A walk yields one :class:`Step` per segment of each file (``segment_bytes`` of binlog), in log
order::

    BinlogFile.segments()      whole events, their headers as columns (EventIndex)
      -> unpacked()            compressed events replaced by the events they hold
      -> TableMaps.resolve()   each rows event's TABLE_MAP (its layout id)
      -> SchemaTracker.scan()  the DDL replayed: the definition each rows event sees
      -> TransactionTracker    (when asked) each event's transaction, GTID and outcome

After a file's last segment the walk warns when the next file given is not the one its last
ROTATE_EVENT names.

A read of rows (``steps(join=...)``) walks consecutive small files (at most
:data:`JOIN_FILE_BYTES` each, of one format, without compressed events) as one step: their
events copied into one buffer (:func:`~vecbinlog.binlog.gathered.gather`), up to about
``segment_bytes``. An archive of small files then costs what one large file does (the fixed
costs of a step, of a run, of a batch, paid per group rather than per file); what depends on
the file stays per file: table ids, transactions (none crosses a file), the file and offset
of each row and of each error. A group whose walk fails is walked again file by file, so that
the error is the one a walk of the files one by one gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import numpy as np

from ..binlog.compression import unpack_segment
from ..binlog.events import rotate_at
from ..binlog.file import DEFAULT_SEGMENT_BYTES, BinlogFile, Segment
from ..binlog.gathered import gather
from ..binlog.headers import EventIndex
from ..binlog.sources import FILES_AHEAD
from ..binlog.spec import MAGIC_LEN
from ..binlog.transactions import TransactionTracker, TxnContext
from ..constants import EventType
from ..errors import BinlogError, BinlogSetWarning, warn
from ..tables.table_ids import PARSED_MAPS, TableMaps
from ..tables.tracker import DdlState, SchemaTracker
from .config import ReadConfig
from .progress import ProgressBar

if TYPE_CHECKING:  # the DDL modules: imported by the first statement that needs them
    from ..tables.ddl import Catalog

__all__ = ["LogWalk", "Step", "unpacked", "JOIN_FILE_BYTES"]

#: files up to ``segment_bytes // JOIN_SHARE`` are joined with the files after them into one
#: step of a read (see the module docstring): 8 MiB with the default segments
JOIN_SHARE = 4
JOIN_FILE_BYTES = DEFAULT_SEGMENT_BYTES // JOIN_SHARE


def unpacked(seg: Segment) -> tuple[Any, EventIndex]:
    """(bytes, events) of a segment, its compressed events replaced by the events they hold
    (the segment itself when it has none: nothing is copied)."""
    found = unpack_segment(seg.src, seg.index)
    return found if found is not None else (seg.src, seg.index)


@dataclass
class Step:
    """One segment of one file, ready to decode: its events (unpacked when compressed) and
    their rows events' layouts, and the transactions they belong to."""

    file: BinlogFile
    segment: Segment  #: the segment as read (compressed events not unpacked)
    src: Any  #: the file, or an Unpacked buffer standing for it (see compression.py)
    maps: TableMaps
    index: EventIndex
    rows_pos: np.ndarray  #: int64: positions in ``index`` of the rows events
    layout: np.ndarray  #: int64 per rows event: its layout id in ``maps.layouts``
    txn: TxnContext | None
    schema: SchemaTracker  #: the DDL replayed so far (shared by every step of a walk)
    generation: np.ndarray  #: int64 per rows event: the DDL generation it sees (see tracker.py)
    #: the DDL state after each statement of the segment that changed one (when the walk was
    #: asked for them: ``steps(ddl_states=True)``)
    ddl_states: list[DdlState]
    #: small files joined into this step: the file of each event of ``index`` (an index into
    #: ``src.paths``; ``file`` and ``segment`` are the first file's); None: one file
    file_of: np.ndarray | None = None


class LogWalk:
    """The walk of ``files`` in log order, as :class:`Step` s, as the read's ``config`` says
    (segment size, DDL replayed or not, ``schema=``, queries, the ``tables`` filter).

    The filter's ``start``/``stop`` bound the walk itself (``start`` in the first file,
    ``stop`` in the last) when ``seek`` is set: a range read alone (a split) starts where a
    transaction starts and sees nothing before it; ``ddl_state`` is then the DDL state where
    it starts (``Split.ddl``).
    """

    def __init__(self, files: list[BinlogFile], config: ReadConfig, *, seek: bool = False,
                 ddl_state: Catalog | None = None) -> None:
        self.files, self.config = files, config
        self.segment_bytes = config.segment_bytes
        self.start, self.stop, self.seek = config.filter.start, config.filter.stop, seek
        self.ddl_state = ddl_state
        self.parsed = PARSED_MAPS  #: the TABLE_MAPs parsed, shared by the files, walks and logs
        self._chain_warned: set[int] = set()
        self._read_ahead_of: set[int] = set()  # the files (by id) asked to read their first segment

    def first(self, f: BinlogFile) -> bool:
        """``f`` is the first file (where ``start`` applies)."""
        return f is self.files[0]

    def last(self, f: BinlogFile) -> bool:
        """``f`` is the last file (where ``stop`` applies)."""
        return f is self.files[-1]

    def bounds(self, f: BinlogFile) -> tuple[int, int | None]:
        """The part of ``f`` walked: all of it, or with ``seek`` the range's part."""
        if not self.seek:
            return MAGIC_LEN, None
        start = max(self.start or 0, MAGIC_LEN) if self.first(f) else MAGIC_LEN
        return start, self.stop if self.last(f) else None

    def steps(self, transactions: bool = False, ddl_states: bool = False, progress: ProgressBar | None = None,
              keep_pages: Callable[[Segment], bool] | None = None, join: int = 0) -> Iterator[Step]:
        """Every segment of every file, unpacked, with its rows events and their layout ids.

        The DDL of the log is replayed on the way, so that each rows event knows the
        definition of its table as of that event, across segments and files (with
        ``ddl_states``, each step has the DDL states after its statements). ``keep_pages``:
        asked as the walk leaves a segment of a memory-mapped file, whether its pages stay
        mapped (runs decoded later read them; they let go of them then). ``join``: consecutive
        files of at most this many bytes walked as one step (see the module docstring; 0: none;
        :meth:`join_bytes`: a read's).
        """
        config = self.config
        schema = SchemaTracker(config.schema, track=config.ddl, catalog=self.ddl_state, wanted=config.filter.table)
        walk = _Walking(schema, transactions, ddl_states, progress, keep_pages)
        group: list[Segment] = []  # whole small files to walk as one step
        held = 0  # their bytes
        for k, f in enumerate(self.files):
            self._read_ahead(k)
            if not self._joinable(f, join):
                yield from self._joined(group, walk)
                group = []
                yield from self._file_steps(f, f.segments(self.segment_bytes, *self.bounds(f), keep=keep_pages), walk)
                continue
            try:
                whole = list(f.segments(self.segment_bytes, *self.bounds(f), keep=_kept))  # (let go of below)
            except BinlogError:  # the files before it first, as when each is walked in turn
                yield from self._joined(group, walk)
                raise
            if len(whole) == 1 and len(f.formats) == 1 and unpack_segment(whole[0].src, whole[0].index) is None:
                if group and _format_key(group[0].file) != _format_key(f):
                    yield from self._joined(group, walk)
                    group = []
                if not group:
                    held = 0
                group.append(whole[0])
                held += whole[0].end - whole[0].start
                if held >= self.segment_bytes:
                    yield from self._joined(group, walk)
                    group = []
                continue
            yield from self._joined(group, walk)
            group = []
            yield from self._file_steps(f, whole, walk, release=True)
        yield from self._joined(group, walk)

    def _read_ahead(self, k: int) -> None:
        """The files after the ``k``-th start reading their first segment in the background
        (files in object storage: a round trip each, overlapping this file's walk): the next
        one, and more while their first segments hold at most a segment's bytes together (at
        most :data:`FILES_AHEAD`: small files, where the round trips are most of the time)."""
        budget = self.segment_bytes
        for f in self.files[k + 1: k + 1 + FILES_AHEAD]:
            need = min(f.size, self.segment_bytes) if f.size is not None else budget + 1
            if need > budget:
                return
            budget -= need
            if id(f) not in self._read_ahead_of:
                self._read_ahead_of.add(id(f))
                f.prefetch(self.segment_bytes, *self.bounds(f))

    @property
    def join_bytes(self) -> int:
        """The largest file a read joins with the files around it (``segment_bytes // JOIN_SHARE``)."""
        return self.segment_bytes // JOIN_SHARE

    def _joinable(self, f: BinlogFile, join: int) -> bool:
        """Whether ``f`` may be walked joined with the files around it: of at most ``join`` bytes,
        and walked whole (neither the ``start`` nor the ``stop`` of a range or of the filter cuts it)."""
        if f.size is None or f.size > join:
            return False
        start = self.config.filter.start if self.first(f) else None
        stop = self.config.filter.stop if self.last(f) else None
        return (start is None or start <= MAGIC_LEN) and (stop is None or stop >= f.size)

    def _file_steps(self, f: BinlogFile, segments: Iterable[Segment], walk: _Walking,
                    release: bool = False) -> Iterator[Step]:
        """The steps of one file, a segment each (``release``: the segments were listed with
        their pages kept, which are let go of as the walk leaves each, as ``keep_pages`` says)."""
        maps = TableMaps(self.parsed)
        tracker = TransactionTracker(f, queries=self.config.queries) if walk.transactions else None
        rotate = None  # the file the last ROTATE_EVENT names
        for seg in segments:
            src, index = unpacked(seg)
            txn = tracker.assign(src, index, seg.end) if tracker is not None else None
            rows_pos, layout = maps.resolve(index, src)
            generation, states = walk.schema.scan(src, index, walk.ddl_states)
            rotate = _rotate(seg, rotate)
            if walk.progress is not None:
                walk.progress.at(f, seg.end)
            yield Step(f, seg, src, maps, index, rows_pos, layout, txn, walk.schema, generation[rows_pos], states)
            if release and not (walk.keep_pages is not None and walk.keep_pages(seg)):
                f.source.release(seg.start, seg.end)
        self._check_chain(f, rotate)

    def _joined(self, segs: list[Segment], walk: _Walking) -> Iterator[Step]:
        """The files of ``segs`` (each whole in its one segment) as one step."""
        if len(segs) <= 1:
            for seg in segs:
                yield from self._file_steps(seg.file, [seg], walk, release=True)
            return
        files = [s.file for s in segs]
        rotates = [_rotate(s, None) for s in segs]
        src, index = gather([(s.src, s.index) for s in segs], range(len(segs)), [f.path for f in files],
                            [f.name for f in files], verify_checksums=files[0].verify_checksums, keep_origins=True)
        for s in segs:  # copied: the files' pages are not read again
            s.file.source.release(s.start, s.end)
        file_of = src.file_of
        try:
            tracker = TransactionTracker(files[-1], queries=self.config.queries) if walk.transactions else None
            file_starts = np.flatnonzero(file_of[1:] != file_of[:-1]) + 1
            txn = tracker.assign(src, index, segs[-1].end, file_starts) if tracker is not None else None
            maps = TableMaps(self.parsed)
            rows_pos, layout = maps.resolve(index, src, file_of)
            generation, states = walk.schema.scan(src, index, walk.ddl_states)
        except BinlogError:  # walked again one by one: the error is theirs, at its file and offset
            for seg in segs:
                yield from self._file_steps(seg.file, [seg], walk)
            return
        if walk.progress is not None:
            for s in segs:
                walk.progress.at(s.file, s.end)
        yield Step(files[0], segs[0], src, maps, index, rows_pos, layout, txn, walk.schema, generation[rows_pos], states,
                   file_of)
        for f, rotate in zip(files, rotates):
            self._check_chain(f, rotate)

    def _check_chain(self, f: BinlogFile, name: str | None) -> None:
        """Warn when the file after ``f`` is not the one its last ROTATE_EVENT names."""
        k = self.files.index(f)
        if k + 1 >= len(self.files) or name is None or self.seek:
            return
        nxt = self.files[k + 1]
        if name != nxt.name and k not in self._chain_warned and not nxt.name.startswith("<memory"):
            self._chain_warned.add(k)
            warn(
                f"{f.path} rotates to {name!r} but the next file given is {nxt.name!r}: files may be "
                "missing or out of order (transactions and table ids do not cross files, so each file "
                "still decodes alone)",
                BinlogSetWarning,
            )


@dataclass
class _Walking:
    """What a walk's steps share: the DDL replayed so far, and what the walk was asked for."""

    schema: SchemaTracker
    transactions: bool
    ddl_states: bool
    progress: ProgressBar | None
    keep_pages: Callable[[Segment], bool] | None


def _kept(segment: Segment) -> bool:
    """A file's segments listed ahead keep their pages (let go of when walked or copied)."""
    return True


def _format_key(f: BinlogFile) -> tuple:
    """What must be the same for files to be joined: their FORMAT_DESCRIPTION_EVENT's layout facts."""
    fmt = f.formats[0]
    return fmt.binlog_version, fmt.server_version, fmt.header_length, fmt.post_header_lengths, fmt.checksum_alg


def _rotate(seg: Segment, last: str | None) -> str | None:
    """The file the last ROTATE_EVENT of ``seg`` names, else ``last``."""
    rot = np.flatnonzero(seg.index.type_code == EventType.ROTATE_EVENT)
    return rotates_to(seg, int(rot[-1])) if len(rot) else last


def rotates_to(seg: Segment, i: int) -> str | None:
    """The file the ROTATE_EVENT ``seg.index[i]`` names (None when it cannot be read)."""
    try:
        name, _ = rotate_at(seg.src, seg.index, i)
    except BinlogError:
        return None  # events() / info() show the event; the rows do not depend on it
    return name
