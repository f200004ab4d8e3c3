"""The archive index: a small summary of each binlog file, built where the files are, so that
planning a read (:func:`vecbinlog.splits.plan_splits` with ``index=``) reads no binlog.

Layout of an index location (a local folder, or any ``pyarrow.fs`` URI: ``s3://bucket/idx``)::

    LOCATION/
      mysql-bin.000001.parquet     one Parquet file per binlog, named for it: one row of
      mysql-bin.000002.parquet     vecbinlog.log.summary.INDEX_SCHEMA (the schema, a comment
      ...                          per field), the format version in the key-value metadata
                                   (b"vecbinlog.index.version": b"6"), a CRC32 in
                                   every page (Parquet's page checksums)
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

An index is input, as a binlog is: its pages carry checksums, and each row read is checked
against what it promises (:mod:`vecbinlog.log.indexrows`) before a plan uses it. A damaged
index file is an ArchiveIndexError naming it and what is wrong; a build indexes its binlogs
again, with the warning (a damaged row of the gathered file: made again from the binlog's own
index file), and keeps none of it.
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

from .binlog.locations import is_remote, name_of
from .binlog.sources import FILES_AHEAD
from .binlog.spec import MAGIC_LEN, table_id_width, version_tuple
from .errors import ArchiveIndexError, ArchiveIndexWarning, BinlogError, SchemaWarning, warn
from .decode.batch import table_schema
from .log.config import ReadConfig
from .log.indexfiles import (GATHERED_NAME, INDEX_SUFFIX, VERSION_KEY, ArchiveRows, archive_paths, damaged,
                             file_identities, file_identity, gather, index_location, index_path, read_index_file,
                             shown_path, write_index_file)
from .log.indexrows import GtidBlocks, TakenRow, take_rows
from .log.summary import INDEX_SCHEMA, extend_summary, head_hash, summarize_file
from .log.versions import SchemaHistory, SchemaVersions
from .tables.table_map import TableMap, parse_table_map
from .tables.tracker import SchemaTracker

if TYPE_CHECKING:  # pyarrow.fs is imported where an index is used: not by every start (9 ms)
    import pyarrow.fs as pafs

    from .tables.ddl import Catalog

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
    config: ReadConfig  #: how the file is opened (``filesystem``, ``verify_checksums``...) and walked
    folder: str  #: the index location
    index_fs: Any  #: its filesystem
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
    table = summarize_file(task.path, task.identity, task.config)
    write_index_file(task.index_fs, index_path(task.folder, name), table)
    return IndexDone(name, int(table.column("indexed_to")[0].as_py()), written=table)  # (the bytes walked)


def _extended(task: IndexTask) -> tuple[pa.Table | None, int]:
    """The index of a file that grew, its summary extended (:func:`~.log.summary.extend_summary`),
    and the bytes walked; (None, 0) when its first bytes are not those indexed (another file,
    said with an ArchiveIndexWarning) or its index is gone."""
    identity = task.identity
    row = _own_row(task.index_fs, task.folder, identity)
    if row is None:
        return None, 0
    cut = row["complete_to"]
    with task.config.open_file(task.path) as f:
        same = head_hash(f, cut) == row["head_hash"]
    if not same:
        warn(f"{identity['path']}: its first bytes are not those of the file indexed (size {row['size']:,} -> "
             f"{identity['size']:,}): another file, indexed again", ArchiveIndexWarning)
        return None, 0
    new = summarize_file(task.path, identity, task.config, start=cut)
    part = new.to_pylist()[0]
    try:
        joined = extend_summary(row, part)
    except (IndexError, KeyError, TypeError, ValueError) as exc:  # (checked by _own_row: not expected)
        warn(f"{shown_path(task.index_fs, index_path(task.folder, identity['name']))}: not a usable index of "
             f"{identity['path']} ({type(exc).__name__}: {exc}): indexed again", ArchiveIndexWarning)
        return None, 0
    return pa.Table.from_pylist([joined], schema=INDEX_SCHEMA), part["indexed_to"] - cut


def _index_range(task: IndexTask) -> IndexDone:
    """The summary of one range of a huge file (:attr:`IndexTask.part`), its ends found by
    :func:`~vecbinlog.binlog.resync.transaction_start_after`."""
    from .binlog.resync import transaction_start_after

    name = task.identity["name"]
    assert task.part is not None  # a range's task
    k, lo, hi = task.part
    with task.config.open_file(task.path) as f:
        if not f.source.seekable:  # a compressed file: read from its start only
            return IndexDone(name, 0, part=k)
        start = MAGIC_LEN if k == 0 else transaction_start_after(f, lo)
        stop = None if hi is None else transaction_start_after(f, hi)
    if start is None or (hi is not None and stop is None):
        return IndexDone(name, 0, part=k)
    if stop is not None and stop <= start:  # (a range within one transaction: nothing of its own)
        return IndexDone(name, 0, part=k, span=(start, start), table=pa.table({}))
    table = summarize_file(task.path, task.identity, task.config, start=start if k else None, stop=stop)
    walked = int(table.column("indexed_to")[0].as_py()) - (start if k else 0)  # (as a whole file's: from 0)
    return IndexDone(name, walked, part=k, span=(start, stop), table=table)


def _merge_ranges(parts: list[IndexDone]) -> pa.Table | None:
    """The index of a file from the summaries of its ranges, when they chain: each range walked
    from where the one before it ended, that one ending there with no transaction open (so
    the boundaries found are the file's, whatever its bytes), in a file of one format; else None."""
    row = None
    for done in sorted(parts, key=lambda d: d.part or 0):  # (every range has its k)
        if done.table is None or done.span is None:  # (a summary has its span)
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
    was = _own_row(fs, folder, identity)  # (its own index: the one that counts)
    if was is None:
        return True, False
    if was["size"] == identity["size"] and was["mtime_ns"] == identity["mtime_ns"] and was["etag"] == identity["etag"]:
        return False, False
    if identity["size"] <= was["size"]:  # not the file indexed grown: another one
        warn(f"{identity['path']}: changed since it was indexed (size {was['size']:,} -> {identity['size']:,}, "
             f"modification time {was['mtime_ns']} -> {identity['mtime_ns']}): indexed again", ArchiveIndexWarning)
        return True, False
    # grown: extended from its end when that ended a transaction, in a file of one format read anywhere
    return True, was["complete_to"] == was["indexed_to"] and was["seekable"] and was["second_format"] is None


def _own_row(fs: pafs.FileSystem, folder: str, identity: dict[str, Any]) -> dict[str, Any] | None:
    """The row of a binlog's own index file (Python values), or None when there is none or it is
    damaged (a row that does not hold together, :func:`~.log.indexrows.take_rows`; not one row
    of that binlog; not readable...: said with an ArchiveIndexWarning): then it is indexed again."""
    path = index_path(folder, identity["name"])
    table = read_index_file(fs, path, rebuild=True)
    if table is None:
        return None
    problem = None
    if table.num_rows != 1 or table.column("name")[0].as_py() != identity["name"]:
        problem = _not_one_row(table, identity["name"])
    elif isinstance(taken := take_rows(table, [0], [identity["size"]])[0], str):
        problem = f"its row of {identity['name']}: {taken}"
    if problem is not None:
        warn(f"{shown_path(fs, path)}: a damaged index file: {problem}: indexed again", ArchiveIndexWarning)
        return None
    return table.to_pylist()[0]


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
    config = ReadConfig.build(filesystem=filesystem, verify_checksums=verify_checksums)
    job = index_job(archive, location, config, index_filesystem=index_filesystem, range_bytes=range_bytes)
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
    remote = [t for t in tasks if t.part is None and is_remote(t.path, t.config.filesystem)]
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
    gathered: ArchiveRows
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


def index_job(archive: Any, location: Any, config: ReadConfig, *, index_filesystem: Any = None,
              range_bytes: int | None = RANGE_BYTES) -> IndexJob:
    """The files of ``archive`` to index (again) at ``location`` (see :func:`build_index`),
    from their filesystem's metadata and the index: no binlog byte read. Each task opens its
    file as ``config`` says (its ``filesystem``, ``verify_checksums``...)."""
    filesystem = config.filesystem
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
    gathered = ArchiveRows(read_index_file(fs, f"{folder}/{GATHERED_NAME}", rebuild=True))
    identities = file_identities(paths, filesystem)
    # (the binlogs of damaged rows: their own index files looked at)
    gathered.drop_damaged(shown_path(fs, f"{folder}/{GATHERED_NAME}"), {i["name"]: i["size"] for i in identities})
    tasks, stale = [], []
    changed = [(path, identity) for path, identity in zip(paths, identities) if gathered.current(identity) is None]
    # each file's own index looked at: in object storage a request each, made several at a time
    import pyarrow.fs as pafs

    threads = FILES_AHEAD if not isinstance(fs, pafs.LocalFileSystem) and len(changed) > 1 else 0
    todos = _mapped(lambda c: _todo(c[0], c[1], fs, folder), changed, threads)
    for (path, identity), (todo, extend) in zip(changed, todos):
        stale.append(identity["name"])
        if not todo:
            continue
        task = IndexTask(path, identity, config, folder, fs, extend)
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
    #: the index file its row was read from, as messages name it (its path, or a URI)
    source: str = ""


def load_index(paths: list[str], location: Any, *, filesystem: Any = None,
               index_filesystem: Any = None) -> list[IndexedFile]:
    """The index of each of ``paths`` (binlog files in log order) at ``location``; each file's
    size and time are checked against its filesystem's metadata (no byte of it read): a file
    not indexed, smaller than indexed or of the same size but another time is an
    :class:`~vecbinlog.errors.ArchiveIndexError`; one that grew is planned to the end of its
    last transaction complete when it was indexed (``complete_to``). A damaged index file (its
    pages' checksums, its columns, each row read checked: :mod:`vecbinlog.log.indexrows`) is an
    ArchiveIndexError naming it and what is wrong."""
    found: list[_Found] = []
    for path, identity, hit in _lookup(paths, location, filesystem, index_filesystem):
        if hit is None:
            raise ArchiveIndexError(f"{identity['path']} is not in the index at {location} "
                                    "(vecbinlog.build_index / `vecbinlog index` adds it)")
        found.append((path, identity, *hit))
    out = []
    for (path, identity, _, _, source), taken in zip(found, _rows(found)):
        row = taken.row
        grown = identity["size"] > row["size"]
        if not grown and (identity["size"], identity["mtime_ns"]) != (row["size"], row["mtime_ns"]):
            raise ArchiveIndexError(f"{identity['path']} changed since it was indexed (size {row['size']:,} -> "
                                    f"{identity['size']:,}): build the index again")
        end = row["complete_to"] if grown else row["size"]
        out.append(IndexedFile(path, row, taken.starts, int(end), taken.times, taken.gtids, source))
    return out


def current_index(paths: list[str], location: Any, *, filesystem: Any = None,
                  index_filesystem: Any = None) -> dict[str, IndexedFile]:
    """The index of those of ``paths`` indexed as they are now (the same size and modification
    time), by path: what a reader of a growing archive (a stream) takes from the index, walking
    the other files (newer than the index, or grown since)."""
    found = [(path, identity, *hit) for path, identity, hit in _lookup(paths, location, filesystem, index_filesystem)
             if hit is not None]
    return {path: IndexedFile(path, t.row, t.starts, int(t.row["size"]), t.times, t.gtids, source)
            for (path, identity, _, _, source), t in zip(found, _rows(found))
            if (identity["size"], identity["mtime_ns"]) == (t.row["size"], t.row["mtime_ns"])}


#: a binlog found in the index: (its path, its identity, the index rows, its row there, the index file shown)
_Found = tuple[str, dict[str, Any], pa.Table, int, str]


def _lookup(paths: list[str], location: Any, filesystem: Any,
            index_filesystem: Any) -> Iterator[tuple[str, dict[str, Any], tuple[pa.Table, int, str] | None]]:
    """(path, its identity, (the index rows, its row, the index file shown) or None when it is
    not indexed) of each of ``paths``: the gathered rows first, a binlog's own index file where
    they are not current. An index file that cannot hold the row it is read for (damaged) is an
    ArchiveIndexError naming it."""
    fs, folder = index_location(location, index_filesystem)
    at = f"{folder}/{GATHERED_NAME}"
    gathered = ArchiveRows(read_index_file(fs, at))
    if gathered.twice:
        raise damaged(shown_path(fs, at), f"its rows of {', '.join(map(str, gathered.twice))} are there more than once")
    for path, identity in zip(paths, file_identities(paths, filesystem)):
        k = gathered.current(identity)
        if k is not None:
            yield path, identity, (gathered.table, k, shown_path(fs, at))
            continue
        own = index_path(folder, identity["name"])
        table = read_index_file(fs, own)
        if table is not None and (table.num_rows != 1 or table.column("name")[0].as_py() != identity["name"]):
            raise damaged(shown_path(fs, own), _not_one_row(table, identity["name"]))
        yield path, identity, None if table is None else (table, 0, shown_path(fs, own))


def _not_one_row(table: pa.Table, name: str) -> str:
    """What is wrong with a binlog's own index file that is not one row, of that binlog."""
    return f"expected one row, of {name}; got {table.num_rows}, of {table.column('name').to_pylist()[:3]}"


def _rows(found: list[_Found]) -> list[TakenRow]:
    """The row of each of ``found`` (:func:`~.log.indexrows.take_rows`: the rows of one table
    taken at once), checked to hold together and to be indexed no further than the binlog's
    size now: else an ArchiveIndexError naming the index file, the binlog and what is wrong."""
    by_table: dict[int, tuple[pa.Table, list[int], list[int]]] = {}
    for _, identity, table, k, _ in found:
        _, ks, sizes = by_table.setdefault(id(table), (table, [], []))
        ks.append(k)
        sizes.append(identity["size"])
    done: dict[tuple[int, int], TakenRow | str] = {}
    for key, (table, ks, sizes) in by_table.items():
        done.update({(key, k): taken for k, taken in zip(ks, take_rows(table, ks, sizes))})
    out = []
    for _, identity, table, k, source in found:
        taken = done[(id(table), k)]
        if isinstance(taken, str):
            raise damaged(source, f"its row of {identity['name']}: {taken}")
        out.append(taken)
    return out


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
                raise damaged(f.source, f"its row of {f.row['name']}: the TABLE_MAP_EVENT of offset {lay['offset']} "
                                        f"cannot be read ({exc.message})") from exc
            parsed[key] = tm
        if tm.name != lay["table"]:
            raise damaged(f.source, f"its row of {f.row['name']}: the TABLE_MAP_EVENT of offset {lay['offset']} is "
                                    f"of {tm.name}, not of {lay['table']} as its layouts say")
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
    def wants(name: str) -> bool:
        return (wanted is None or wanted(name)) and config.filter.table(name)

    tracker = SchemaTracker(config.schema, track=config.ddl, wanted=wants)
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
                if not wants(tm.name) or seen.get(tm.name) == (id(tm), tracker.generation):
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
