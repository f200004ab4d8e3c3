"""The archive index: a small summary of each binlog file, built where the files are, so that
planning a read (:func:`vecbinlog.splits.plan_splits` with ``index=``) reads no binlog.

Layout of an index location (a local folder, or any ``pyarrow.fs`` URI: ``s3://bucket/idx``)::

    LOCATION/
      mysql-bin.000001.parquet     one Parquet file per binlog, named for it: one row of
      mysql-bin.000002.parquet     vecbinlog.log.summary.INDEX_SCHEMA (the schema, a comment
      ...                          per field), the format version in the key-value metadata
                                   (b"vecbinlog.index.version": b"1")
      _archive.parquet             the rows of all of them, gathered by each build: a plan
                                   reads this one file (a binlog's own file is read when
                                   its row here is not of the binlog as it is now)

Each summary comes from one walk of its file's headers (:func:`vecbinlog.log.summary.summarize_file`,
the walk every read takes; no row decoded) and holds facts of that file alone: the DDL as text
and the TABLE_MAPs as bytes, replayed in log order when a plan needs the DDL and layout states
where its splits start (:func:`replay_index`). An archive is indexed incrementally: a file whose
size and modification time are those indexed is skipped; a file that grew (a binlog still being
written: indexed to its last whole event, planned to its last complete transaction) is extended:
walked from where it was indexed to, its summary added to (:func:`~vecbinlog.log.summary.extend_summary`;
walked again whole when its last transaction was not complete then, or its first bytes are not
those indexed: another file, with an :class:`~vecbinlog.errors.ArchiveIndexWarning`); any other
change is indexed again with that warning. A file larger than twice ``range_bytes`` is
indexed in ranges, a task each (:mod:`vecbinlog.binlog.resync` finds where each starts), their
summaries joined as a grown file's are.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa

from .binlog.gtid import GtidSet
from .binlog.locations import is_remote, name_of
from .binlog.sources import FILES_AHEAD
from .binlog.spec import MAGIC_LEN, table_id_width, version_tuple
from .errors import ArchiveIndexError, ArchiveIndexWarning, BinlogError, SchemaWarning, warn
from .decode.batch import table_schema
from .log.config import ReadConfig
from .log.indexfiles import (GATHERED_NAME, INDEX_SUFFIX, VERSION_KEY, Gathered, archive_paths, file_identities,
                             file_identity, gather, index_location, index_path, read_index_file, write_index_file)
from .log.summary import INDEX_SCHEMA, extend_summary, head_hash, summarize_file
from .log.versions import SchemaHistory, SchemaVersions
from .tables.ddl import Catalog
from .tables.table_map import TableMap, parse_table_map
from .tables.tracker import SchemaTracker

if TYPE_CHECKING:  # pyarrow.fs is imported where an index is used: not by every start (9 ms)
    import pyarrow.fs as pafs

__all__ = ["build_index", "IndexResult", "IndexedFile", "load_index", "current_index", "replay_index", "index_history",
           "archive_paths", "indexed_tables", "indexed_table_maps", "IndexJob", "IndexTask", "IndexDone", "index_job",
           "index_file", "file_identity", "file_identities",
           "INDEX_SUFFIX", "VERSION_KEY", "GATHERED_NAME", "RANGE_BYTES"]

#: a file larger than twice this is indexed in ranges of about this many bytes, a task each
#: (:func:`build_index`'s ``range_bytes``): a huge file indexed by several processes or executors
RANGE_BYTES = 256 << 20
#: binlog bytes to index per process started by default (a small archive is indexed in this one:
#: 122 files of 512 KB, 2.9 s in one process, 7.7 s in two, each started by ``spawn``)
_BYTES_PER_PROCESS = 1 << 30
#: the columns that say which file was indexed (read alone to decide what to index again)
_IDENTITY = ("name", "path", "size", "mtime_ns", "etag", "indexed_to", "complete_to", "seekable", "second_format")


@dataclass(frozen=True)
class IndexResult:
    """What :func:`build_index` did."""

    indexed: int  #: files indexed (new, grown or changed)
    skipped: int  #: files whose index was up to date
    bytes: int  #: binlog bytes walked (the files indexed; of a grown file, what it grew by)
    files: tuple[str, ...] = ()  #: the names of the files indexed
    extended: int = 0  #: of the files indexed, those that grew and were walked from where they were indexed to
    ranged: int = 0  #: of the files indexed, those indexed in ranges (a task each), their summaries joined

    def summary(self) -> str:
        """One line: what the command line prints."""
        how = [f"{self.extended} grown, extended"] * bool(self.extended) + [f"{self.ranged} in ranges"] * bool(self.ranged)
        said = f" ({'; '.join(how)})" if how else ""
        return f"{self.indexed} file(s) indexed{said} ({self.bytes:,} bytes), {self.skipped} up to date"


# -- building ------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexTask:
    """One file to index, or one range of a huge one: run by :func:`index_file` wherever the
    file and the index location can be reached (a process of a local pool, a Spark task)."""

    path: str
    identity: dict[str, Any]  #: the file's name, path, size, mtime_ns and etag
    filesystem: Any  #: the filesystem of ``path``
    folder: str  #: the index location
    index_fs: Any  #: its filesystem
    verify_checksums: bool
    extend: bool = False  #: the file grew: its index is extended when it can be
    #: (k, lo, hi): the k-th range of the file, from the first transaction start after an event
    #: boundary at or after ``lo`` (the file's start for k = 0) to the same after ``hi`` (None: its end)
    part: tuple[int, int, int | None] | None = None


@dataclass(frozen=True)
class IndexDone:
    """What :func:`index_file` did for one task."""

    name: str  #: the binlog's name
    walked: int  #: binlog bytes walked
    extended: bool = False  #: a grown file's index extended
    part: int | None = None  #: the range's k (its index file is written by the job, from the ranges)
    span: tuple[int, int | None] | None = None  #: where the range's walk started and was to stop
    table: pa.Table | None = None  #: the range's summary; None: no boundary found (indexed whole)
    written: pa.Table | None = None  #: the file's index as written: the gathered file takes it, not read back


def index_file(task: IndexTask) -> IndexDone:
    """Run one task of an :class:`IndexJob`: its file indexed (the summary written, to a
    temporary name then moved into place), or its range summarised (returned)."""
    name = task.identity["name"]
    if task.part is not None:
        return _index_range(task)
    if task.extend:
        table, walked = _extended(task)
        if table is not None:
            write_index_file(task.index_fs, index_path(task.folder, name), table)
            return IndexDone(name, walked, extended=True, written=table)
    table = summarize_file(task.path, task.identity, filesystem=task.filesystem, verify_checksums=task.verify_checksums)
    write_index_file(task.index_fs, index_path(task.folder, name), table)
    return IndexDone(name, int(table.column("indexed_to")[0].as_py()), written=table)  # (the bytes walked)


def _extended(task: IndexTask) -> tuple[pa.Table | None, int]:
    """The index of a file that grew, its summary extended (:func:`~.log.summary.extend_summary`),
    and the bytes walked; (None, 0) when its first bytes are not those indexed (another file,
    said with an ArchiveIndexWarning) or its index is gone."""
    from .binlog.file import BinlogFile

    identity = task.identity
    old = read_index_file(task.index_fs, index_path(task.folder, identity["name"]), rebuild=True)
    if old is None or old.num_rows != 1:
        return None, 0
    row = old.to_pylist()[0]
    cut = row["complete_to"]
    with BinlogFile(task.path, verify_checksums=task.verify_checksums, filesystem=task.filesystem) as f:
        same = head_hash(f, cut) == row["head_hash"]
    if not same:
        warn(f"{identity['path']}: its first bytes are not those of the file indexed (size {row['size']:,} -> "
             f"{identity['size']:,}): another file, indexed again", ArchiveIndexWarning)
        return None, 0
    new = summarize_file(task.path, identity, filesystem=task.filesystem, verify_checksums=task.verify_checksums,
                         start=cut)
    part = new.to_pylist()[0]
    try:
        joined = extend_summary(row, part)
    except (IndexError, KeyError, TypeError, ValueError) as exc:  # an index file whose rows do not hold together
        warn(f"{index_path(task.folder, identity['name'])}: not a usable index of {identity['path']} "
             f"({type(exc).__name__}: {exc}): indexed again", ArchiveIndexWarning)
        return None, 0
    return pa.Table.from_pylist([joined], schema=INDEX_SCHEMA), part["indexed_to"] - cut


def _index_range(task: IndexTask) -> IndexDone:
    """The summary of one range of a huge file (:attr:`IndexTask.part`), its ends found by
    :func:`~vecbinlog.binlog.resync.transaction_start_after`."""
    from .binlog.file import BinlogFile
    from .binlog.resync import transaction_start_after

    name = task.identity["name"]
    k, lo, hi = task.part
    with BinlogFile(task.path, verify_checksums=task.verify_checksums, filesystem=task.filesystem) as f:
        if not f.source.seekable:  # a compressed file: read from its start only
            return IndexDone(name, 0, part=k)
        start = MAGIC_LEN if k == 0 else transaction_start_after(f, lo)
        stop = None if hi is None else transaction_start_after(f, hi)
    if start is None or (hi is not None and stop is None):
        return IndexDone(name, 0, part=k)
    if stop is not None and stop <= start:  # (a range within one transaction: nothing of its own)
        return IndexDone(name, 0, part=k, span=(start, start), table=pa.table({}))
    table = summarize_file(task.path, task.identity, filesystem=task.filesystem,
                           verify_checksums=task.verify_checksums, start=start if k else None, stop=stop)
    walked = int(table.column("indexed_to")[0].as_py()) - (start if k else 0)  # (as a whole file's: from 0)
    return IndexDone(name, walked, part=k, span=(start, stop), table=table)


def _merge_ranges(parts: list[IndexDone]) -> pa.Table | None:
    """The index of a file from the summaries of its ranges, when they chain: each range walked
    from where the one before it ended, that one ending there with no transaction open (so
    the boundaries found are the file's, whatever its bytes), in a file of one format; else None."""
    row = None
    for done in sorted(parts, key=lambda d: d.part):
        if done.table is None:
            return None
        start, stop = done.span
        if start == stop:
            continue
        part = done.table.to_pylist()[0]
        if part["second_format"] is not None or (stop is not None and part["indexed_to"] != stop):
            return None
        if row is not None:
            if not (row["complete_to"] == row["indexed_to"] == start):
                return None
            part = extend_summary(row, part)
        elif start != MAGIC_LEN:
            return None
        row = part
    return None if row is None else pa.Table.from_pylist([row], schema=INDEX_SCHEMA)


def _todo(path: str, identity: dict[str, Any], fs: pafs.FileSystem, folder: str) -> tuple[bool, bool]:
    """Whether ``path`` must be indexed (again): not indexed, grown, or changed (with a warning);
    and whether its index is extended (it grew from a complete transaction: see :func:`_extended`)."""
    old = read_index_file(fs, index_path(folder, identity["name"]), _IDENTITY, rebuild=True)  # (its own index: the one that counts)
    if old is None or old.num_rows != 1:
        return True, False
    was = old.to_pylist()[0]
    if was["size"] == identity["size"] and was["mtime_ns"] == identity["mtime_ns"] and was["etag"] == identity["etag"]:
        return False, False
    if identity["size"] <= was["size"]:  # not the file indexed grown: another one
        warn(f"{identity['path']}: changed since it was indexed (size {was['size']:,} -> {identity['size']:,}, "
             f"modification time {was['mtime_ns']} -> {identity['mtime_ns']}): indexed again", ArchiveIndexWarning)
        return True, False
    # grown: extended from its end when that ended a transaction, in a file of one format read anywhere
    return True, was["complete_to"] == was["indexed_to"] and was["seekable"] and was["second_format"] is None


def build_index(archive: Any, location: Any, *, filesystem: Any = None, processes: int | None = None,
                index_filesystem: Any = None, verify_checksums: bool = True,
                progress: Callable[[int, int, str], None] | None = None,
                range_bytes: int | None = RANGE_BYTES) -> IndexResult:
    """Index the binlog files of ``archive`` at ``location``: one small Parquet file per binlog.

    Parameters
    ----------
    archive : binlog files as :func:`vecbinlog.open` takes paths: a file, a glob, a folder,
        a ``mysql-bin.index``, or a list of them; local paths or URIs.
    location : where the index goes: a local folder (created) or a URI (``s3://bucket/idx``).
    filesystem : the ``pyarrow.fs`` (or fsspec) filesystem ``archive``'s paths are in.
    processes : tasks run at once, each in a process of its own (default: one per GiB of
        binlog to index, at most the CPUs this process may use; 1: in this process). The pool's
        processes are started by ``spawn``: a script that calls this with more than one must
        do so under ``if __name__ == "__main__":``, as for any process pool.
    index_filesystem : the filesystem ``location`` is a path in (default: from ``location``).
    verify_checksums : check the CRC32 of the FORMAT_DESCRIPTION_EVENT of each file.
    progress : called as ``progress(done, total, name)`` after each task (a file, or a range
        of a huge file).
    range_bytes : a file to index whole that is larger than twice this is indexed in ranges of
        about this many bytes, a task each (their summaries joined: the index the file's walk
        gives); None: every file one task.

    Returns
    -------
    :class:`IndexResult`: files indexed, files up to date (skipped), binlog bytes walked.

    Examples
    --------
    >>> import vecbinlog
    >>> vecbinlog.build_index("archive/mysql-bin.*", "archive-index/")      # doctest: +SKIP
    IndexResult(indexed=193, skipped=0, bytes=..., files=(...))
    """
    job = index_job(archive, location, filesystem=filesystem, index_filesystem=index_filesystem,
                    verify_checksums=verify_checksums, range_bytes=range_bytes)
    if processes is None:  # a process starts in ~1-2 s (its imports, the kernels loaded): worth it for much to walk
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        processes = min(cpus, -(-sum(_task_bytes(t) for t in job.tasks) // _BYTES_PER_PROCESS))

    def run(tasks: list[IndexTask]) -> list[IndexDone]:
        done: list[IndexDone] = []
        workers = max(1, min(processes, len(tasks)))
        if workers == 1:
            for result in _in_this_process(tasks):
                done.append(result)
                if progress is not None:
                    progress(len(done), len(tasks), result.name)
            return done
        from concurrent.futures import ProcessPoolExecutor  # spawned: a fork of a process with threads
        from multiprocessing import get_context  # (numba's, Arrow's) may deadlock

        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            for result in pool.map(index_file, tasks, chunksize=max(1, len(tasks) // (4 * workers))):
                done.append(result)
                if progress is not None:
                    progress(len(done), len(tasks), result.name)
        return done

    return job.run(run)


def _in_this_process(tasks: list[IndexTask]) -> Iterator[IndexDone]:
    """The tasks run in this process, their results in order: files in object storage on
    :data:`~.binlog.sources.FILES_AHEAD` threads (each a few round trips to the storage, which
    so overlap: the walks' kernels let go of the GIL too), local files and ranges one by one."""
    remote = [t for t in tasks if t.part is None and is_remote(t.path, t.filesystem)]
    yield from _mapped(index_file, tasks, FILES_AHEAD if 1 < len(remote) == len(tasks) else 0)


def _mapped(fn: Callable[[Any], Any], items: list[Any], threads: int) -> Iterator[Any]:
    """``fn`` of each item, in order: on ``threads`` threads (0: in this one)."""
    if threads < 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="vecbinlog-index") as pool:
        yield from pool.map(fn, items)


def _task_bytes(task: IndexTask) -> int:
    size = task.identity["size"]
    if task.part is None:
        return size
    _, lo, hi = task.part
    return (size if hi is None else hi) - lo


@dataclass
class IndexJob:
    """What a build of an index has to do (:func:`index_job`): ``tasks``, one per file to index
    (or range of a huge file), each run by :func:`index_file` anywhere the file and the index
    location can be reached (a process of a local pool, a Spark task:
    :func:`vecbinlog.spark.build_index`); then :meth:`finish`, where the job was made
    (:meth:`run` does both)."""

    fs: Any  #: the index location's filesystem
    folder: str
    paths: list[str]  #: the archive's files
    gathered: Gathered
    stale: list[str]  #: the names whose row in the gathered file is not current
    tasks: list[IndexTask]

    def run(self, runner: Callable[[list[IndexTask]], Iterable[IndexDone]]) -> IndexResult:
        """Run the tasks with ``runner`` (a list of tasks -> what :func:`index_file` returned
        for each), then the files whose ranges did not chain again whole; :meth:`finish`."""
        done = list(runner(self.tasks)) if self.tasks else []
        again = self.join_ranges(done)
        if again:
            done += list(runner(again))
        return self.finish(done)

    def join_ranges(self, done: list[IndexDone]) -> list[IndexTask]:
        """Write the index of each file indexed in ranges from their summaries
        (:func:`_merge_ranges`); returns the tasks of the files to index again whole (their
        ranges did not chain: boundaries not found, a relay log...)."""
        parts: dict[str, list[IndexDone]] = {}
        for d in done:
            if d.part is not None:
                parts.setdefault(d.name, []).append(d)
        again = []
        for task in self.tasks:
            name = task.identity["name"]
            if task.part is None or task.part[0] != 0 or name not in parts:
                continue
            table = _merge_ranges(parts[name])
            if table is None:
                again.append(dataclasses.replace(task, part=None))
            else:
                write_index_file(self.fs, index_path(self.folder, name), table)
        return again

    def finish(self, done: list[IndexDone]) -> IndexResult:
        """The gathered file written again, and what the build did (``done``: what
        :func:`index_file` returned for each task)."""
        if self.stale:
            gather(self.fs, self.folder, self.gathered, self.stale,
                   {d.name: d.written for d in done if d.written is not None})
        files = tuple(dict.fromkeys(d.name for d in done))
        ranged = {d.name for d in done if d.part is not None} - {d.name for d in done if d.part is None}
        return IndexResult(len(files), len(self.paths) - len(files), sum(d.walked for d in done), files,
                           sum(d.extended for d in done), len(ranged))


def index_job(archive: Any, location: Any, *, filesystem: Any = None, index_filesystem: Any = None,
              verify_checksums: bool = True, range_bytes: int | None = RANGE_BYTES) -> IndexJob:
    """The files of ``archive`` to index (again) at ``location`` (see :func:`build_index`),
    from their filesystem's metadata and the index: no binlog byte read."""
    fs, folder = index_location(location, index_filesystem)
    fs.create_dir(folder, recursive=True)
    paths = archive_paths(archive, filesystem)
    names = [name_of(p) for p in paths]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"an index keeps one file per binlog name, and the archive has several named "
                         f"{', '.join(twice)}: index each server's files at a location of its own")
    if range_bytes is not None and (not isinstance(range_bytes, int) or range_bytes < 1 << 16):
        raise ValueError(f"range_bytes must be an integer of at least 65536, or None, not {range_bytes!r}")
    gathered = Gathered(read_index_file(fs, f"{folder}/{GATHERED_NAME}", rebuild=True))
    tasks, stale = [], []
    changed = [(path, identity) for path, identity in zip(paths, file_identities(paths, filesystem))
               if gathered.current(identity) is None]
    # each file's own index looked at: in object storage a request each, made several at a time
    import pyarrow.fs as pafs

    threads = FILES_AHEAD if not isinstance(fs, pafs.LocalFileSystem) and len(changed) > 1 else 0
    for (path, identity), (todo, extend) in zip(changed, _mapped(lambda c: _todo(*c, fs, folder), changed, threads)):
        stale.append(identity["name"])
        if not todo:
            continue
        task = IndexTask(path, identity, filesystem, folder, fs, verify_checksums, extend)
        size = identity["size"]
        if extend or range_bytes is None or size <= 2 * range_bytes:
            tasks.append(task)
            continue
        n = -(-size // range_bytes)
        cuts = [size * k // n for k in range(n)] + [None]
        tasks += [dataclasses.replace(task, part=(k, cuts[k], cuts[k + 1])) for k in range(n)]
    return IndexJob(fs, folder, paths, gathered, stale, tasks)


# -- reading ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexedFile:
    """The index of one binlog file of an archive, as a plan reads it."""

    path: str  #: the binlog, as the plan names it
    row: dict[str, Any]  #: the summary (INDEX_SCHEMA's fields) but its long lists, below as arrays
    starts: np.ndarray  #: int64: the transaction starts (kept)
    #: where a plan of the file ends: its size when it is the file indexed; the end of its last
    #: complete transaction when it grew since (what follows was not whole when indexed)
    end: int
    #: int64: of each of ``starts``, the greatest time (s) of the starts in its block (``start_times``)
    start_times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: where its GTIDs are (``gtid_blocks``; None: not known)
    gtids: GtidBlocks | None = None


@dataclass(frozen=True)
class GtidBlocks:
    """The ``gtid_blocks`` of an indexed file: of each block of its kept starts (from one to the
    next) and GTID source in it, the least and greatest number of that source's GTIDs there."""

    sources: list[str]  #: MySQL uuid (or uuid:tag), MariaDB domain-server
    block: np.ndarray  #: int64: a position in the file's kept starts
    source: np.ndarray  #: int32: a position in ``sources``
    first: np.ndarray  #: uint64
    last: np.ndarray  #: uint64

    def blocks_of(self, wanted: GtidSet) -> np.ndarray:
        """The blocks (sorted, distinct) whose ranges hold a number of ``wanted``: those that may hold
        one of its GTIDs (every one that does)."""
        return np.unique(self.block[wanted.holds(self.sources, self.source, self.first, self.last)])


def load_index(paths: list[str], location: Any, *, filesystem: Any = None,
               index_filesystem: Any = None) -> list[IndexedFile]:
    """The index of each of ``paths`` (binlog files in log order) at ``location``; each file's
    size and time are checked against its filesystem's metadata (no byte of it read): a file
    not indexed, smaller than indexed or of the same size but another time is an
    :class:`~vecbinlog.errors.ArchiveIndexError`; one that grew is planned to the end of its
    last transaction complete when it was indexed (``complete_to``)."""
    found: list[tuple[str, dict[str, Any], pa.Table, int]] = []  # (path, identity, index rows, row)
    for path, identity, hit in _lookup(paths, location, filesystem, index_filesystem):
        if hit is None:
            raise ArchiveIndexError(f"{identity['path']} is not in the index at {location} "
                                    "(vecbinlog.build_index / `vecbinlog index` adds it)")
        found.append((path, identity, *hit))
    rows = _rows(found)
    out = []
    for (path, identity, _, _), (row, starts, times, gtids) in zip(found, rows):
        grown = identity["size"] > row["size"]
        if not grown and (identity["size"], identity["mtime_ns"]) != (row["size"], row["mtime_ns"]):
            raise ArchiveIndexError(f"{identity['path']} changed since it was indexed (size {row['size']:,} -> "
                                    f"{identity['size']:,}): build the index again")
        end = row["complete_to"] if grown else row["size"]
        out.append(IndexedFile(path, row, starts, int(end), times, gtids))
    return out


def current_index(paths: list[str], location: Any, *, filesystem: Any = None,
                  index_filesystem: Any = None) -> dict[str, IndexedFile]:
    """The index of those of ``paths`` indexed as they are now (the same size and modification
    time), by path: what a reader of a growing archive (a stream) takes from the index, walking
    the other files (newer than the index, or grown since)."""
    found = [(path, identity, *hit) for path, identity, hit in _lookup(paths, location, filesystem, index_filesystem)
             if hit is not None]
    return {path: IndexedFile(path, row, starts, int(row["size"]), times, gtids)
            for (path, identity, _, _), (row, starts, times, gtids) in zip(found, _rows(found))
            if (identity["size"], identity["mtime_ns"]) == (row["size"], row["mtime_ns"])}


def _lookup(paths: list[str], location: Any, filesystem: Any,
            index_filesystem: Any) -> Iterator[tuple[str, dict[str, Any], tuple[pa.Table, int] | None]]:
    """(path, its identity, (the index rows, its row) or None when it is not indexed) of each of
    ``paths``: the gathered rows first, a binlog's own index file where they are not current."""
    fs, folder = index_location(location, index_filesystem)
    gathered = Gathered(read_index_file(fs, f"{folder}/{GATHERED_NAME}"))
    for path, identity in zip(paths, file_identities(paths, filesystem)):
        k = gathered.current(identity)
        if k is not None:
            yield path, identity, (gathered.table, k)
            continue
        table = read_index_file(fs, index_path(folder, identity["name"]))
        yield path, identity, (table, 0) if table is not None and table.num_rows == 1 else None


#: the long lists of a row, taken out as arrays, not Python values
_LISTS = ("transaction_starts", "start_times", "gtid_blocks")

_Row = tuple[dict[str, Any], np.ndarray, np.ndarray, GtidBlocks]


def _rows(found: list[tuple[str, dict[str, Any], pa.Table, int]]) -> list[_Row]:
    """(the row as Python values but its long lists, its transaction starts, their times (int64),
    its GTID blocks) of each ``(.., .., table, row)``: the rows of one table taken at once."""
    by_table: dict[int, tuple[pa.Table, list[int]]] = {}
    for _, _, table, k in found:
        by_table.setdefault(id(table), (table, []))[1].append(k)
    done: dict[tuple[int, int], _Row] = {}
    for key, (table, ks) in by_table.items():
        sub = table.take(ks)
        starts, times, blocks = (sub.column(name).combine_chunks() for name in _LISTS)
        so, sv = starts.offsets.to_numpy(), starts.values.to_numpy(zero_copy_only=False).astype(np.int64)
        to, tv = times.offsets.to_numpy(), times.values.to_numpy(zero_copy_only=False).astype(np.int64)
        bo = blocks.offsets.to_numpy()
        b_block, b_source, b_first, b_last = (a.to_numpy(zero_copy_only=False) for a in blocks.values.flatten())
        for j, (k, row) in enumerate(zip(ks, sub.drop_columns(list(_LISTS)).to_pylist())):
            lo, hi = bo[j], bo[j + 1]
            gtids = GtidBlocks(row["gtid_sources"], b_block[lo:hi].astype(np.int64), b_source[lo:hi].astype(np.int32),
                               b_first[lo:hi].astype(np.uint64), b_last[lo:hi].astype(np.uint64))
            starts, times = sv[so[j]:so[j + 1]], tv[to[j]:to[j + 1]]
            _check_lists(row, starts, times, gtids)
            done[(key, k)] = (row, starts, times, gtids)
    return [done[(id(table), k)] for _, _, table, k in found]


def _check_lists(row: dict[str, Any], starts: np.ndarray, times: np.ndarray, gtids: GtidBlocks) -> None:
    """An index row's lists hold together (a time per start, GTID blocks of its starts and
    sources), or an ArchiveIndexError: a damaged index file, not an IndexError later."""
    bad = len(times) != len(starts) or any(
        len(a) and (int(a.min()) < 0 or int(a.max()) >= n)
        for a, n in ((gtids.block, len(starts)), (gtids.source, len(gtids.sources))))
    if bad:
        raise ArchiveIndexError(f"the index of {row['name']} does not hold together (its transaction starts, their "
                                "times and its GTID blocks): build the index again")


def _table_maps(f: IndexedFile, parsed: dict[tuple[bytes, int, str], TableMap]) -> list[TableMap]:
    """The TABLE_MAPs of an indexed file, parsed from their bytes (once per archive)."""
    version = f.row["server_version"]
    flavor = "mariadb" if "mariadb" in version.lower() else "mysql"
    out = []
    for lay in f.row["layouts"]:
        key = (lay["body"], lay["post_header_len"], version)
        tm = parsed.get(key)
        if tm is None:
            ph = lay["post_header_len"]
            buf = np.frombuffer(bytes(int(table_id_width(ph))) + lay["body"], np.uint8)  # a table id of 0
            try:
                _, tm = parse_table_map(buf, 0, 0, len(buf), ph, path=f.path, flavor=flavor,
                                        server_major=version_tuple(version)[0], server_version=version)
            except BinlogError as exc:  # the index's bytes, not the binlog's: its offsets are the index's
                raise ArchiveIndexError(f"{f.path}: the index's TABLE_MAP_EVENT of offset {lay['offset']} cannot be "
                                        f"read ({exc}); build the index again") from exc
            parsed[key] = tm
        out.append(tm)
    return out


def indexed_table_maps(files: list[IndexedFile], table: str) -> list[TableMap]:
    """Every distinct TABLE_MAP of ``table`` that its rows events use in the indexed files, in
    log order (:meth:`vecbinlog.Binlog.table_maps`)."""
    parsed: dict[tuple[bytes, int, str], TableMap] = {}
    out: list[TableMap] = []
    for f in files:
        for tm in _table_maps(f, parsed):
            if tm.name == table and tm not in out:
                out.append(tm)
    return out


def replay_index(files: list[IndexedFile], wanted: Callable[[str], bool] | None = None,
                 config: ReadConfig | None = None) -> tuple[list[list[tuple[int, Catalog | None]]], SchemaHistory]:
    """The DDL and layout states of an indexed archive, without reading a binlog: its DDL
    statements replayed in log order through a :class:`~vecbinlog.tables.tracker.SchemaTracker`
    (as a walk replays them), and each table's effective layouts numbered as a read numbers
    ``_schema_version`` and ``_incarnation`` (:class:`~vecbinlog.log.versions.SchemaVersions`)
    at the rows events where they may change (tables ``wanted`` accepts), as a read with
    ``config``'s options (``schema=``, ``ddl``, decoding options) does (default: the defaults).

    Returns, per file, ``[(offset, DDL state from there on)]`` (offset -1: the state where the
    file starts, None when no table is defined yet; then the state after each statement that
    changed one, as :func:`vecbinlog.splits.plan_splits` gives its splits), and the
    :class:`~vecbinlog.log.versions.SchemaHistory` of the files (each table's plan included),
    as :meth:`vecbinlog.Binlog.history` gives it, for :func:`vecbinlog.splits.with_history`.
    """
    config = config if config is not None else ReadConfig.build()
    given = wanted

    def wanted(name: str) -> bool:
        return (given is None or given(name)) and config.filter.table(name)

    tracker = SchemaTracker(config.schema, track=config.ddl, wanted=wanted)
    versions = SchemaVersions(history=True)
    parsed: dict[tuple[bytes, int, str], TableMap] = {}
    last_generation, replayed = -1, False
    seen: dict[str, tuple[int, int]] = {}  #: table -> (its last TABLE_MAP's id, the generation) numbered
    per_file: list[list[tuple[int, Catalog | None]]] = []
    every: list[tuple[tuple[int, int], Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)  # the readers of the splits warn, once each
        last: Catalog | None = None  # the last state taken (a state is taken once per statement replayed)
        for k, f in enumerate(files):
            before = tracker.catalog.tables or tracker.catalog.lifetimes
            if before and (last is None or tracker.generation != last_generation or replayed):
                last, last_generation, replayed = tracker.state(), tracker.generation, False
            states: list[tuple[int, Catalog | None]] = [(-1, last if before else None)]
            maps = _table_maps(f, parsed)
            flavor = "mariadb" if "mariadb" in f.row["server_version"].lower() else "mysql"
            ddl, done = f.row["ddl"], 0

            def upto(n: int) -> None:
                nonlocal done
                nonlocal last, last_generation, replayed
                for d in ddl[done:n]:
                    databases = dict(tracker.catalog.databases)
                    if not config.ddl:
                        continue
                    replayed = True
                    if tracker.replay_statement(d["statement"], d["database"], d["error_code"],
                                                f"{f.path}: offset {d['offset']}") or tracker.catalog.databases != databases:
                        last, last_generation, replayed = tracker.state(), tracker.generation, False
                        states.append((d["offset"], last))
                        every.append(((k, d["offset"]), last))
                done = max(done, n)

            for change in f.row["layout_changes"]:
                upto(change["ddl_before"])
                tm = maps[change["layout"]]
                if not wanted(tm.name) or seen.get(tm.name) == (id(tm), tracker.generation):
                    continue  # (the same TABLE_MAP under the same DDL: the same state; files share their parsed maps)
                seen[tm.name] = (id(tm), tracker.generation)
                _, definition, lifetime = tracker.tracked(tm.name, tracker.generation)
                resolved = tracker.resolve(tm, definition, flavor, f"{f.path}: offset {change['offset']}")
                versions.assign([tm.name], np.zeros(1, np.int64), np.zeros(1, np.int64), [resolved], [lifetime],
                                flavor, (k, np.array([change["offset"]], np.int64)))
            upto(len(ddl))
            per_file.append(states)
    def schema_of(tm: TableMap, flavor: str) -> pa.Schema:
        return table_schema(tm, config.decoding.of(tm.name, flavor), config.queries)

    plans = {name: versions.plan(name, schema_of) for name in versions.layouts}
    return per_file, SchemaHistory([f.path for f in files], plans, versions.history or {}, every)


def index_history(paths: list[str], location: Any, config: ReadConfig | None = None, *, filesystem: Any = None,
                  index_filesystem: Any = None) -> SchemaHistory:
    """:meth:`vecbinlog.Binlog.history` of ``paths`` (binlog files in log order) under
    ``config``'s options, from their index at ``location`` alone (:func:`replay_index`)."""
    files = load_index(paths, location, filesystem=filesystem, index_filesystem=index_filesystem)
    return replay_index(files, config=config)[1]


def indexed_tables(files: list[IndexedFile]) -> Mapping[str, int]:
    """Every table with rows events in the indexed files, in order of first appearance, with
    its rows events."""
    out: dict[str, int] = {}
    for f in files:
        for t in f.row["tables"]:
            out[t["name"]] = out.get(t["name"], 0) + t["rows_events"]
    return out
