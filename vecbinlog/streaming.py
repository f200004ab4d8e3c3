"""A growing binlog archive read as a stream: positions, what is complete, and where the DDL
and each table's layouts stand along the way. No Spark here: :mod:`vecbinlog.spark` builds
its streaming source on it (``spark.readStream.format("binlog")``), and so can any other
scheduler.

Positions
---------
A :class:`Position` is ``(file, pos)``: a binlog's name (``mysql-bin.000042``: no folder, no
compression suffix, as ``_log_file``) and a real byte offset in it, never ``end_log_pos``
(a uint32 that wraps past 4 GiB). Positions order by file in log order
(:func:`vecbinlog.log.logset.log_order_key`), then by offset. Every position a stream hands out
is *outside any transaction* (a transaction start, or where the last complete transaction
and the events after it end), so the changes between two positions decode alone, given
where the DDL and the layouts stand at the first (:class:`StreamHistory`).

What is complete (:meth:`Archive.end`)
--------------------------------------
* a file is final once a later file is in the archive: it is read to its end (its last
  complete event; a transaction it leaves open never ends: the server started a new file);
* the newest file is still being written (or uploaded): it is read up to the end of its
  last complete transaction, found by walking its headers (:func:`scan_transactions`); the
  rest, a transaction whose end is not there yet or an event cut in the middle, comes later.

Where a transaction ends (the rules of :mod:`vecbinlog.binlog.transactions`)::

    starts  a GTID event, or a BEGIN / XA START query not after a GTID event
    ends    XID_EVENT, a COMMIT / ROLLBACK / XA PREPARE query, XA_PREPARE_LOG_EVENT; or
            any other statement when no BEGIN opened the transaction (DDL after a GTID
            event; a MariaDB GTID without FL_STANDALONE counts as BEGIN)

Compressed events (MySQL TRANSACTION_PAYLOAD, MariaDB's compressed events) are unpacked
first, so that the events inside them count.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

import numpy as np

from .binlog.gtid import GtidSet
from .binlog.sources import name_of, redact
from .binlog.spec import MAGIC_LEN
from .binlog.transactions import FileScan, scan_transactions
from .decode.tableplan import TablePlan
from .errors import (
    ArchiveIndexError,
    NotABinlogError,
    SchemaChangedError,
    SourceNotFoundError,
    TruncatedError,
    TruncatedWarning,
    warn,
)
from .index import IndexedFile, current_index, replay_index
from .log.config import ReadConfig
from .log.indexfiles import file_identities
from .log.loginfo import gtid_offset
from .log.logset import log_order_key
from .log.versions import SchemaHistory, VersionState, followed_by
from .reader import Binlog
from .splits import DEFAULT_SPLIT_BYTES, Split, cut_bounds, may_hold_gtids, split_paths, starts_near, transaction_starts

__all__ = ["Position", "FileScan", "scan_transactions", "archive_files", "Archive", "StreamHistory",
           "NewLayout", "SchemaChangedError", "archive_history"]



# -- positions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Position:
    """``(file, pos)``: a binlog's name and a byte offset in it (see the module docstring)."""

    file: str
    pos: int

    def key(self) -> tuple:
        """Sort key: the file in log order, then the offset."""
        return (*log_order_key(self.file), self.pos)

    def __lt__(self, other: Position) -> bool:
        return self.key() < other.key()

    def __le__(self, other: Position) -> bool:
        return self.key() <= other.key()

    def to_offset(self) -> dict[str, Any]:
        """The JSON offset of a Spark stream: ``{"file": ..., "pos": ...}``."""
        return {"file": self.file, "pos": self.pos}

    @classmethod
    def from_offset(cls, offset: dict[str, Any]) -> Position:
        try:
            return cls(str(offset["file"]), int(offset["pos"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a binlog stream offset {{'file': ..., 'pos': ...}}: {offset!r}") from exc

    def __str__(self) -> str:
        return f"{self.file}:{self.pos}"


# -- the archive ----------------------------------------------------------------------------------
def archive_files(spec: str | Sequence[str], filesystem: Any = None) -> list[str]:
    """The files of an archive, in log order: a folder (local, or a prefix in object storage:
    the files its ``*.index`` lists, else those that start with the binlog magic, see
    :func:`vecbinlog.log.logset.folder_binlogs`), a glob, a ``mysql-bin.index``, a file, or a
    comma-separated list or a list of these; local paths or URIs."""
    return split_paths([spec] if isinstance(spec, str) else [str(p) for p in spec], filesystem)


class Archive:
    """A binlog archive that grows: files are listed again at each :meth:`end`, the newest is
    read up to its last complete transaction, new ones are taken in log order.

    Parameters
    ----------
    spec : a folder, a glob, a ``mysql-bin.index``, a file or a list of them (see
        :func:`archive_files`); local paths or URIs.
    config : the read's :class:`~vecbinlog.log.config.ReadConfig`: every file is opened with
        it (:meth:`~vecbinlog.log.config.ReadConfig.open_file`: its ``filesystem``, checksums,
        limits), its segments are its ``segment_bytes``; or
    options : the options of :func:`vecbinlog.open` it is built from (``filesystem=``, a
        ``pyarrow.fs.FileSystem`` or fsspec one the paths are in; ``verify_checksums=``...).
    index : an archive index of the files (:func:`vecbinlog.build_index`): a file indexed as
        it is now (but the newest, still written) is not walked; its transaction starts, its
        end, its times and GTIDs come from the index. The others are walked.

    What each file's walk found is kept (:class:`FileScan`), so a file is walked once, and the
    newest one only from where its last walk stopped (``forget`` lets go of files passed).
    """

    def __init__(self, spec: str | Sequence[str], config: ReadConfig | None = None, *, index: Any = None,
                 **options: Any) -> None:
        if config is None:
            config = ReadConfig.build(**options)
        elif options:
            raise TypeError(f"Archive takes a config or options, not both: {sorted(options)}")
        self.spec = spec
        self.config = config
        self.index = index
        self._indexed: dict[str, IndexedFile | None] = {}  # name -> its index as it was when first listed
        self._scans: dict[str, FileScan] = {}
        self._final: set[str] = set()  # files walked to their end while a later file was there
        self._seen: set[str] = set()
        self._cut_told: set[str] = set()  # final files cut short, said once (a TruncatedWarning)

    @property
    def filesystem(self) -> Any:
        """The filesystem the archive's paths are in (its config's)."""
        return self.config.filesystem

    @property
    def shown(self) -> str:
        """The archive as messages name it (URIs without credentials)."""
        return ", ".join(redact(str(p)) for p in ([self.spec] if isinstance(self.spec, str) else self.spec))

    # -- listing ------------------------------------------------------------------------
    def files(self) -> list[tuple[str, str]]:
        """``(name, path)`` of every file, in log order (listed now)."""
        out = [(name_of(p), p) for p in archive_files(self.spec, self.filesystem)]
        names = [n for n, _ in out]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"the archive holds {twice} more than once (a plain and a compressed copy?): "
                             f"{[redact(p) for n, p in out if n in twice]}")
        out = sorted(out, key=lambda np_: log_order_key(np_[0]))
        new = [(n, p) for n, p in out[:-1] if n not in self._indexed]  # (the newest is walked: it grows)
        if self.index is not None and new:  # looked up once, when first listed
            found = current_index([p for _, p in new], self.index, filesystem=self.filesystem)
            self._indexed.update((n, found.get(p)) for n, p in new)
        return out

    def indexed(self, name: str) -> IndexedFile | None:
        """The index of file ``name`` when the archive's index holds it as it is (never the newest file)."""
        return self._indexed.get(name)

    def _listed(self, start: Position | None) -> list[tuple[str, str]]:
        """The files, checked against what the stream has passed: a file that appears before
        ``start`` after the stream went past it would never be read, so it is an error."""
        files = self.files()
        if start is not None and self._seen:
            late = [n for n, _ in files if n not in self._seen and Position(n, 0) < Position(start.file, 0)]
            if late:
                raise ValueError(
                    f"{late} appeared in the archive after the stream had passed them (it is at {start}): files "
                    "must arrive in log order; restart the query from an earlier startingPosition to read them")
        self._seen.update(n for n, _ in files)
        return files

    # -- one file ----------------------------------------------------------------------
    def scan(self, name: str, path: str, lo: int, newest: bool) -> FileScan | None:
        """The walk of ``name`` from ``lo`` (or from before it) to its end as it is now; None
        when it is the newest file and its FORMAT_DESCRIPTION_EVENT is not all there yet."""
        cached = self._scans.get(name)
        if cached is not None and cached.start <= lo and name in self._final:
            return cached
        ix = None if newest else self._indexed.get(name)
        if ix is not None:  # a final file the index holds as it is: not read
            end = ix.row["indexed_to"]
            if end < ix.row["size"] and name not in self._cut_told:
                self._cut_told.add(name)
                warn(f"{redact(path)}: reading stopped at offset {end} (its index says: an event is not all there); "
                     "a later file is in the archive, so this one will not grow: every complete event before it is "
                     "read", TruncatedWarning)
            # with every start kept, each one's time too (start_times): as a walk of the file
            stamps = ix.start_times.astype(np.uint32) if ix.row["start_spacing"] == 1 else None
            self._scans[name] = FileScan(MAGIC_LEN, end, None, ix.starts, stamps, ix.row["size"])
            self._final.add(name)
            return self._scans[name]
        try:
            f = self.config.open_file(path, newest=newest)  # newest: pread, not mapped
        except TruncatedError:
            if newest:  # its FORMAT_DESCRIPTION_EVENT not all written yet
                return None
            raise
        except NotABinlogError:
            if newest and file_identities([path], self.filesystem)[0]["size"] < MAGIC_LEN:
                return None  # not even its magic bytes yet
            raise
        with f:
            if cached is not None and cached.start <= lo <= cached.complete and f.size == cached.size \
                    and f.size is not None:
                scan = cached
            else:
                resume = cached.complete if cached is not None and cached.start <= lo <= cached.complete else lo
                fresh = scan_transactions(f, resume, self.config.segment_bytes)
                if resume != lo:  # continued from the last walk: the starts before it are kept
                    assert cached is not None and cached.stamps is not None  # (a walk's: an index's is final)
                    keep = cached.starts < resume
                    fresh = FileScan(cached.start, fresh.walked, fresh.open_start,
                                     np.concatenate([cached.starts[keep], fresh.starts]),
                                     np.concatenate([cached.stamps[keep], fresh.stamps]), fresh.size)
                scan = fresh
            if not newest and (f.size is None or scan.walked >= f.size or not f.source.seekable):
                self._final.add(name)
            if not newest and f.walk_stop is not None and name not in self._cut_told:
                self._cut_told.add(name)  # told once, by the driver: the tasks read up to its last event
                stop = f.walk_stop
                warn(f"{f.path}: reading stopped at offset {stop.offset}: {stop.reason}; a later file is in the "
                     "archive, so this one will not grow: every complete event before it is read", TruncatedWarning)
            if not f.source.seekable:
                self._final.add(name)  # a compressed file does not grow
        self._scans[name] = scan
        return scan

    def forget(self, before: Position) -> None:
        """Let go of what was found about the files before ``before``'s file."""
        for name in [n for n in self._scans if Position(n, 0) < Position(before.file, 0)]:
            del self._scans[name]
            self._final.discard(name)

    # -- positions -------------------------------------------------------------------------
    def first(self) -> Position:
        """The start of the archive's first file."""
        files = self._listed(None)
        if not files:
            raise SourceNotFoundError("no binlog file in the archive", uri=self.shown)
        return Position(files[0][0], MAGIC_LEN)

    def latest(self) -> Position:
        """Where the complete data ends now: the end of the newest file's last complete
        transaction (the end of the file before it while its first event is not all there)."""
        files = self._listed(None)
        for k in range(len(files) - 1, -1, -1):
            name, path = files[k]
            scan = self.scan(name, path, MAGIC_LEN, newest=k == len(files) - 1)
            if scan is not None:
                return Position(name, scan.complete if k == len(files) - 1 else scan.walked)
        raise SourceNotFoundError("no binlog file in the archive has a complete first event", uri=self.shown)

    def end(self, start: Position, *, max_bytes: int | None = None, max_files: int | None = None,
            target: Position | None = None) -> Position:
        """Where a read from ``start`` ends: the end of what is complete (see the module
        docstring), at most ``target``; with ``max_bytes``, at the first transaction start at
        least that many bytes of binlog after ``start`` (a transaction larger than that comes
        whole); with ``max_files``, within that many files. Returns ``start`` when nothing new
        is complete."""
        files = self._listed(start)
        names = [n for n, _ in files]
        if start.file not in names:
            raise SourceNotFoundError(
                f"the stream is at {start}, but {start.file} is no longer in the archive (removed before it was "
                "read to its end?)", uri=self.shown)
        if target is not None and target <= start:
            return start
        k = names.index(start.file)
        out, used_bytes, used_files = start, 0, 0
        for j in range(k, len(files)):
            name, path = files[j]
            if target is not None and Position(target.file, 0) < Position(name, 0):
                break
            newest = j == len(files) - 1
            lo = start.pos if j == k else MAGIC_LEN
            scan = self.scan(name, path, lo, newest)
            if scan is None:
                break
            hi = scan.complete if newest else scan.walked
            if target is not None and name == target.file:
                hi = min(hi, target.pos)
            if hi <= lo:
                continue
            if max_files is not None and used_files >= max_files:
                break
            full = True
            if max_bytes is not None:
                room = max_bytes - used_bytes
                if room <= 0:
                    break
                if hi - lo > room:  # cut at the first transaction start at least `room` bytes on
                    starts = self._starts_at(scan, path, lo + room)
                    cuts = starts[(starts > lo) & (starts < hi)]
                    i = int(np.searchsorted(cuts, lo + room, side="left"))
                    if i < len(cuts):
                        hi, full = int(cuts[i]), False
            used_bytes += hi - lo
            used_files += 1
            out = Position(name, hi)
            if not full:
                break
        return out

    def _starts_at(self, scan: FileScan, path: str, pos: int) -> np.ndarray:
        """The transaction starts of ``scan`` around ``pos``: all of them when the file was walked
        here, or its index keeps them all; when the index keeps a start per block (no times:
        ``stamps`` None; :func:`~vecbinlog.log.summary.start_spacing`), those between the two it
        keeps around ``pos``, walked (:func:`~vecbinlog.splits.starts_near`)."""
        if scan.stamps is not None:
            return scan.starts
        return starts_near(path, pos, scan.starts, self.config)

    def path_of(self, name: str) -> str:
        for n, p in self.files():
            if n == name:
                return p
        raise SourceNotFoundError(f"{name} is not in the archive", uri=self.shown)

    def starts_before(self, at: Position, lo: int = MAGIC_LEN) -> int:
        """The last transaction start at or before ``at`` in its file (``lo`` when none after it)."""
        scan = self._scans.get(at.file)
        if scan is None or scan.start > lo or scan.walked < at.pos:
            with self.config.open_file(self.path_of(at.file)) as f:
                found = transaction_starts(f, lo, at.pos + 1)
        else:
            found = self._starts_at(scan, self.path_of(at.file), at.pos)
        found = found[(found >= lo) & (found <= at.pos)]
        return int(found[-1]) if len(found) else lo

    def resolve_start(self, spec: str) -> Position:
        """The position a stream starts from: ``earliest`` (the first file), ``latest`` (where
        the complete data ends now), ``FILE:POS`` (a transaction start, or 4), a GTID (the
        stream starts *after* that transaction: it is the last one already applied, as a
        replica's ``gtid_slave_pos``) or an ISO 8601 time (no time zone = UTC: the first
        transaction whose event time is at or after it)."""
        text = spec.strip()
        low = text.lower()
        if low == "earliest":
            return self.first()
        if low == "latest":
            return self.latest()
        if re.fullmatch(r"\d+-\d+-\d+", text) or re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
                                                               r"(:[A-Za-z_][A-Za-z0-9_]*)?:\d+", text):
            return self._after_gtid(text)
        when = _datetime(text)
        if when is not None:
            return self._at_time(when)
        m = re.fullmatch(r"(.+):(\d+)", text)
        if m is None:
            raise ValueError(f"startingPosition: 'earliest', 'latest', FILE:POS, a GTID or an ISO 8601 time, "
                             f"not {spec!r}")
        return self._checked(Position(posixpath.basename(m.group(1)), int(m.group(2))))

    def _checked(self, at: Position) -> Position:
        files = self._listed(None)
        names = [n for n, _ in files]
        if at.file not in names:
            raise ValueError(f"startingPosition {at}: {at.file} is not in the archive ({names[0]} .. {names[-1]})")
        k = names.index(at.file)
        scan = self.scan(at.file, files[k][1], MAGIC_LEN, newest=k == len(files) - 1)
        ok = at.pos == MAGIC_LEN or (scan is not None and at.pos == scan.complete)
        starts = None
        if not ok and scan is not None:
            starts = self._starts_at(scan, files[k][1], at.pos)
            ok = at.pos in starts.tolist()
        if not ok:
            near = [] if starts is None else starts[np.abs(starts - at.pos).argsort()[:2]].tolist()
            raise ValueError(f"startingPosition {at} is not where a transaction starts (a GTID event, or a BEGIN "
                             f"query without one); the nearest starts are {sorted(near)}")
        return at

    def _after_gtid(self, gtid: str) -> Position:
        files = self._listed(None)
        wanted = GtidSet(gtid)
        for k, (name, path) in enumerate(files):
            ix = self._indexed.get(name)
            if ix is not None and not may_hold_gtids(ix, wanted):
                continue  # its index says it does not hold it: not read
            newest = k == len(files) - 1
            if ix is not None and ix.gtids is not None and not newest:
                at = self._indexed_gtid(ix, path, wanted, gtid)
            else:
                with self.config.open_file(path) as f, warnings.catch_warnings():
                    warnings.simplefilter("ignore", TruncatedWarning)
                    at = gtid_offset(f, self.config.segment_bytes, gtid)
            if at is None:
                continue
            scan = self.scan(name, path, MAGIC_LEN, newest)
            found = self._starts_at(scan, path, at) if scan is not None else np.zeros(0, np.int64)
            later = found[found > at]
            if len(later):
                return Position(name, int(later[0]))
            if newest and scan is not None and scan.open_start == at:
                raise ValueError(f"startingPosition {gtid}: its transaction at {name}:{at} is not complete yet")
            assert scan is not None  # (the file holds the GTID: its FORMAT_DESCRIPTION_EVENT is all there)
            return Position(name, scan.complete if newest else scan.walked)
        raise ValueError(f"startingPosition: GTID {gtid!r} is not in the archive")

    def _at_time(self, when: datetime) -> Position:
        seconds = int(when.timestamp())
        files = self._listed(None)
        for k, (name, path) in enumerate(files):
            ix = self._indexed.get(name)
            if ix is not None and ix.row["last_time"] is not None and ix.row["last_time"].timestamp() < seconds:
                continue  # every event of it is older (its index says): not read
            scan = self.scan(name, path, MAGIC_LEN, newest=k == len(files) - 1)
            if scan is None:
                break
            if scan.stamps is None:  # from an index that keeps a start per block: the block that holds it
                assert ix is not None
                at = self._indexed_time(ix, path, seconds)
                if at is not None:
                    return Position(name, at)
                continue
            hit = np.flatnonzero(scan.stamps.astype(np.int64) >= seconds)
            if len(hit):
                return Position(name, int(scan.starts[hit[0]]))
        return self.latest()

    def _indexed_gtid(self, ix: IndexedFile, path: str, wanted: GtidSet, gtid: str) -> int | None:
        """The offset of the GTID event of ``gtid`` in an indexed file (None: it has none): the
        blocks whose GTID ranges hold it (``gtid_blocks``) walked (their bytes only), or, when
        the index keeps every start (a block is one transaction), the start of that block."""
        assert ix.gtids is not None
        for k in ix.gtids.blocks_of(wanted).tolist():
            if ix.row["start_spacing"] == 1:
                return int(ix.starts[k])
            stop = int(ix.starts[k + 1]) if k + 1 < len(ix.starts) else None
            with self.config.open_file(path) as f, warnings.catch_warnings():
                warnings.simplefilter("ignore", TruncatedWarning)
                at = gtid_offset(f, self.config.segment_bytes, gtid, int(ix.starts[k]), stop)
            if at is not None:
                return at
        return None

    def _indexed_time(self, ix: IndexedFile, path: str, seconds: int) -> int | None:
        """The first transaction start of an indexed file whose time is at or after ``seconds``
        (None: there is none): the first block whose greatest time is (``start_times``), walked
        (its bytes only). (An index that keeps every start gives each start's time: no walk,
        :meth:`scan`.)"""
        hit = np.flatnonzero(ix.start_times >= seconds)
        if not len(hit):
            return None
        k = int(hit[0])
        stop = int(ix.starts[k + 1]) if k + 1 < len(ix.starts) else None
        with self.config.open_file(path) as f, warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)
            block = scan_transactions(f, int(ix.starts[k]), self.config.segment_bytes, stop)
        assert block.stamps is not None  # a walk's
        found = np.flatnonzero(block.stamps.astype(np.int64) >= seconds)
        if not len(found):  # (the index is of this file as it is: its size and time are checked)
            raise ArchiveIndexError(f"{redact(path)}: its index says a transaction at or after {ix.starts[k]} starts "
                                    f"at or after {seconds} s, but none does: build the index again")
        return int(block.starts[found[0]])

    # -- splits ----------------------------------------------------------------------------
    def splits(self, start: Position, end: Position, split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[Split]:
        """``[start, end)`` as splits of about ``split_bytes``, each starting at ``start`` or
        at a transaction start (the files between the two read whole). Without the DDL and
        layout states: :meth:`StreamHistory.with_states` adds them."""
        if end <= start:
            return []
        files = self.files()
        names = [n for n, _ in files]
        for p in (start, end):
            if p.file not in names:
                raise SourceNotFoundError(f"{p.file} (stream position {p}) is no longer in the archive",
                                          uri=self.shown)
        out: list[Split] = []
        follows = False  # the file before was planned to its end (Split.follows)
        for name, path in files[names.index(start.file): names.index(end.file) + 1]:
            lo = start.pos if name == start.file else MAGIC_LEN
            hi = end.pos if name == end.file else None
            mine = self._file_splits(name, path, lo, hi, split_bytes)
            if mine and follows and mine[0].start == MAGIC_LEN:
                mine[0] = dataclasses.replace(mine[0], follows=True)
            follows = bool(mine) and hi is None
            out.extend(mine)
        return out

    def _file_splits(self, name: str, path: str, lo: int, hi: int | None, split_bytes: int) -> list[Split]:
        """``[lo, hi)`` of one file (None: to its end) as splits (see :meth:`splits`)."""
        ix = self._indexed.get(name)
        if ix is not None:  # its transaction starts from the index: not read
            if not ix.row["seekable"]:
                return [Split(path, lo, hi)]
            stop = ix.row["indexed_to"] if hi is None else hi
            cuts, spacing = ix.starts, ix.row["start_spacing"]
            if ix.row["second_format"] is not None:
                cuts = cuts[cuts < ix.row["second_format"]]
        else:
            with self.config.open_file(path) as f, warnings.catch_warnings():
                warnings.simplefilter("ignore", TruncatedWarning)  # a final file cut short: read to its last event
                if not f.source.seekable:
                    return [Split(path, lo, hi)]
                assert f.size is not None  # a seekable file's
                stop = f.size if hi is None else hi
                if lo >= stop:
                    return []
                cuts = transaction_starts(f, lo, stop)
                spacing = 1  # (the file's every start: of [lo, stop) alone, not of the whole file)
                if len(f.formats) > 1:  # a relay log: no cut after its second FORMAT_DESCRIPTION_EVENT
                    cuts = cuts[cuts < f.formats[1].offset]
        if lo >= stop:
            return []
        bounds = cut_bounds(cuts[(cuts > lo) & (cuts < stop)], lo, stop, split_bytes, spacing)
        return [Split(path, a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _datetime(text: str) -> datetime | None:
    """An ISO 8601 date and time (a date alone would read as a MariaDB GTID), naive = UTC."""
    if not re.search(r"\d:\d\d", text):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


# -- layouts along the stream -----------------------------------------------------------------
@dataclass
class _Stretch:
    """The layouts of ``[first, last)``, walked from the states at ``first``."""

    first: Position
    last: Position
    paths: dict[str, str]  #: name -> path of the files walked
    ddl: Any  #: the DDL state at ``first``
    versions: dict[str, VersionState]  #: the version states at ``first``
    found: SchemaHistory


@dataclass(frozen=True)
class NewLayout:
    """A layout of a table met for the first time in a stretch of the stream."""

    table: str
    version: int  #: its ``_schema_version``
    at: Position  #: its first rows event
    schema: Any  #: its declared Arrow schema (``table_schema``)


@dataclass
class StreamHistory:
    """Where the DDL and each table's layouts stand along a stream, and each table's
    :class:`~vecbinlog.decode.tableplan.TablePlan` over the layouts met so far.

    The first stretch is walked from the archive's first file (so that ``_schema_version``
    and ``_incarnation`` count as a batch read of the archive counts them, and the DDL of
    every file names the columns); each later stretch from where the last one ended, given
    the states there (:meth:`vecbinlog.Binlog.over_range`): a file is walked
    once. ``config``: the read's (``tables``, ``names``, ``schema``, ``signedness``...).
    """

    config: ReadConfig = field(default_factory=ReadConfig)
    plans: dict[str, TablePlan] = field(default_factory=dict)
    known: Position | None = None  #: the layouts are known up to here
    _stretches: list[_Stretch] = field(default_factory=list)

    def walk(self, archive: Archive, end: Position, first: Position | None = None,
             walked: SchemaHistory | None = None) -> _Stretch:
        """The layouts of ``[known, end)`` (from ``first``, the archive's start, the first
        time), not yet taken in (:meth:`take`). The files before ``end``'s that the archive's
        index holds (:meth:`Archive.indexed`), from ``first`` on, are not read: their DDL and
        layouts are replayed from the index (:func:`vecbinlog.index.replay_index`), the
        walk goes on with the file after them. ``walked``: a walk of the archive's files made
        already (``Binlog.history()`` of them whole, as a query's schema walks them), taken
        as it is when the stretch is all of it: the files still those it walked, of the sizes
        it walked, ``end`` the end of the last."""
        files = archive.files()
        names = [n for n, _ in files]
        begin = self.known if self.known is not None else (first or Position(names[0], MAGIC_LEN))
        if begin.file not in names or end.file not in names:
            raise SourceNotFoundError(f"{begin.file} or {end.file} is no longer in the archive", uri=archive.shown)
        chosen = files[names.index(begin.file): names.index(end.file) + 1]
        if walked is not None and self.known is None and _walked_whole(walked, archive, files, begin, end):
            return _Stretch(begin, end, dict(zip(names, walked.paths)), None, {}, walked)
        ddl, versions = self.state_at(begin) if self.known is not None else (None, {})
        config = self.config.replace(filesystem=archive.filesystem)
        indexed: list[IndexedFile] = []
        if begin.pos == MAGIC_LEN:
            for name, _ in chosen[:-1]:
                ix = archive.indexed(name)
                if ix is None:
                    break
                indexed.append(ix)
        to_walk, lo = chosen, begin.pos
        head: SchemaHistory | None = None
        if indexed:  # replayed from the index; the walk starts with the file after them
            _, head = replay_index(indexed, config=config)
            start_ddl, start_versions = head.start_state(indexed[-1].path, indexed[-1].row["indexed_to"])
            to_walk, lo = chosen[len(indexed):], MAGIC_LEN
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)
            with Binlog.over_range([p for _, p in to_walk], lo, end.pos, ddl=start_ddl if head else ddl,
                                   versions=start_versions if head else versions, config=config) as log:
                found = log.history()
        if head is not None:
            found = followed_by(head, found)
        return _Stretch(begin, end, dict(chosen), ddl, dict(versions), found)

    def new_layouts(self, stretch: _Stretch) -> list[NewLayout]:
        """The layouts of ``stretch`` the plans do not have yet, in log order."""
        names = list(stretch.paths)
        out = []
        for table, plan in stretch.found.plans.items():
            mine = self.plans.get(table)
            seen: set[int] = set()
            for (file_no, offset), state in stretch.found.history.get(table, []):
                v = state.version
                if v in seen or (mine is not None and v in mine.versions):
                    continue
                seen.add(v)
                out.append(NewLayout(table, v, Position(names[file_no], offset), plan.layout_schema(v)))
        return sorted(out, key=lambda n: n.at.key())

    def take(self, stretch: _Stretch) -> None:
        """Take in the layouts of ``stretch`` (whose first position is :attr:`known`)."""
        for new in self.new_layouts(stretch):
            self.plans.setdefault(new.table, TablePlan(new.table)).add(new.version, new.schema)
        self._stretches.append(stretch)
        self.known = stretch.last

    def state_at(self, at: Position) -> tuple[Any, dict[str, VersionState]]:
        """(DDL state, layout states) where a range starting at ``at`` starts."""
        for stretch in reversed(self._stretches):
            if stretch.first <= at <= stretch.last:
                if at.file not in stretch.paths:
                    continue
                ddl, layouts = stretch.found.start_state(stretch.paths[at.file], at.pos)
                return (ddl if ddl is not None else stretch.ddl), {**stretch.versions, **layouts}
        raise ValueError(f"no layouts are known at {at} (known from "
                         f"{self._stretches[0].first if self._stretches else None} to {self.known})")

    def with_states(self, splits: Iterable[Split]) -> list[Split]:
        """The splits, each with the DDL and layout states where it starts."""
        out = []
        for s in splits:
            ddl, layouts = self.state_at(Position(name_of(s.path), s.start))
            out.append(dataclasses.replace(s, ddl=ddl, versions=layouts))
        return out

    def forget(self, before: Position) -> None:
        """Let go of the stretches that end before ``before`` (the last one is kept)."""
        while len(self._stretches) > 1 and self._stretches[0].last < before:
            self._stretches.pop(0)


def _walked_whole(walked: SchemaHistory, archive: Archive, files: list[tuple[str, str]], begin: Position,
                  end: Position) -> bool:
    """Whether ``walked`` is the walk of ``[begin, end)``: of the archive's ``files`` whole, as
    large as they are now, ``begin`` the start of the first and ``end`` the end of the last."""
    names = [n for n, _ in files]
    if walked.walked is None or [name_of(p) for p in walked.paths] != names or begin != Position(names[0], MAGIC_LEN):
        return False
    sizes = [i["size"] for i in file_identities([p for _, p in files], archive.filesystem)]
    return sizes == [w.size for w in walked.walked] and end == Position(names[-1], sizes[-1])


def archive_history(spec: str | Sequence[str], config: ReadConfig, index: Any) -> SchemaHistory:
    """The history a stream over ``spec`` starts with (to the end of what is complete now):
    the files its ``index`` holds as they are replayed from it, the others (newer than the
    index, grown since, the newest) walked."""
    archive = Archive(spec, config, index=index)
    return StreamHistory(config).walk(archive, archive.latest(), first=archive.first()).found
