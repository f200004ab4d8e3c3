"""Binlog sets: which files make one change log, and in which order.

A server writes ``mysql-bin.000001``, ``mysql-bin.000002``, ... and lists them, oldest first,
in ``mysql-bin.index`` (one path per line, as the server was told to write them: often
``./mysql-bin.000001``, relative to the data directory, which is where the index is, or the
server's absolute paths, ``/var/lib/mysql/mysql-bin.000001``). Each file but the last ends
with a ROTATE_EVENT that names the next one.

A set is given as a file, a list, a glob, an index file or a folder (local, or a prefix in
object storage): a folder's set is what its ``*.index`` file lists, or else every file in it
that starts with the binlog magic (a compressed one: once decompressed), in log order.
"""

from __future__ import annotations

import fnmatch
import glob
import io
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

import pyarrow as pa

from ..binlog.sources import COMPRESSION_MAGIC, NewestPath, is_uri, redact, resolve, strip_compression
from ..binlog.spec import MAGIC
from ..errors import BinlogSetWarning, SourceNotFoundError, SourceUnreachableError, warn

__all__ = ["binlog_files", "binlog_sources", "folder_binlogs", "index_file_paths", "log_order_key", "source_name",
           "InMemory"]

#: what ``open()`` accepts besides paths, for the errors that say so
ACCEPTED = ("a path (str or os.PathLike) or URI, a glob, a mysql-bin.index, a folder, the binlog's bytes (bytes, bytearray, "
            "memoryview) or a binary file object (open(..., 'rb'), io.BytesIO), or a list of these")

_NUMBERED = re.compile(r"^(.*?)(\d+)$")
#: a binlog's name (compression suffix left out): a base and a number after its last dot
_BINLOG_NAME = re.compile(r"^.+\.\d+$")


def log_order_key(path: str) -> tuple[str, int, str]:
    """Sort key for binlog names: by base name, then by the number after the last dot, as a
    number (``mysql-bin.999999`` comes before ``mysql-bin.1000000``); a compression suffix
    (``mysql-bin.000042.gz``) does not count."""
    name = strip_compression(posixpath.basename(_path_part(path)))
    m = _NUMBERED.match(name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)


def index_file_paths(index: str, filesystem: Any = None) -> list[str]:
    """The files a ``mysql-bin.index`` lists, in its order; relative ones are resolved
    against the index file's folder (the server writes them relative to its data directory).
    ``index`` may be a URI, or a path inside ``filesystem``. An absolute path that is not
    there (an index copied with its binlogs to another machine or bucket) is the file of that
    name beside the index, and a :class:`~vecbinlog.BinlogSetWarning` says so once."""
    text = _read_text(index, filesystem)
    out, moved = [], []
    for line in text.splitlines():
        line = line.strip()
        if line:
            path, was_moved = _beside(index, line, filesystem)
            out.append(path)
            if was_moved:
                moved.append(line)
    if not out:
        raise ValueError(f"{redact(index)}: the index file lists no binlog files")
    if moved:
        folder = _with_path(index, posixpath.dirname(_path_part(index))) if filesystem is not None or is_uri(index) \
            else os.path.dirname(os.path.abspath(index))
        warn(f"{redact(index)} lists {len(moved)} file(s) at paths that are not there ({moved[0]}"
             f"{', ...' if len(moved) > 1 else ''}): the files of those names beside the index, in "
             f"{redact(folder)}, are read", BinlogSetWarning)
    return out


def binlog_files(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], filesystem: Any = None) -> list[str]:
    """The files of a binlog set, in log order.

    ``paths`` is a file, a glob (``"/archive/mysql-bin.*"``: sorted by :func:`log_order_key`,
    ``*.index`` files left out), a server index file (a name ending in ``.index``), a folder
    (:func:`folder_binlogs`), or a list of any of these (kept in the order given). The newest
    file of a glob, index or folder is a :class:`~vecbinlog.binlog.sources.NewestPath` (read
    with ``pread``, not mapped). Each may be a local path, a URI
    (``s3://bucket/binlogs/mysql-bin.*``) or a path inside ``filesystem``. A pattern that
    matches nothing is an error.
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else _items(paths)
    out: list[str] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"binlog files are paths (str or os.PathLike), globs or a mysql-bin.index, not {type(item).__name__}")
        item = os.fspath(item)
        remote = filesystem is not None or (is_uri(item) and not item.startswith("file://"))
        if item.startswith("file://") and filesystem is None:
            item = urlsplit(item).path
        if glob.has_magic(_path_part(item)):
            found = _glob_remote(item, filesystem) if remote else sorted(
                (p for p in glob.glob(item) if os.path.isfile(p) and not p.endswith(".index")), key=log_order_key)
            if not found:
                raise SourceNotFoundError("no binlog file matches", uri=redact(item))
            out.extend(_newest_marked(found))
        elif _path_part(item).endswith(".index") and (remote or os.path.isfile(item)):
            out.extend(_newest_marked(index_file_paths(item, filesystem)))
        elif _is_folder(item, filesystem, remote):
            out.extend(_newest_marked(folder_binlogs(item, filesystem)))
        else:
            out.append(item)
    if not out:
        raise ValueError("no binlog files given")
    return out


def _newest_marked(files: list[str]) -> list[str]:
    """``files`` (in log order), the last a :class:`~vecbinlog.binlog.sources.NewestPath`: the
    newest file of a folder, glob or index may still be written, or cut back by a server that
    recovers from a crash, so it is read with ``pread``, not memory-mapped."""
    return [*files[:-1], NewestPath(files[-1])] if files else files


def _path_part(item: str) -> str:
    """The path of a URI (no scheme, host or query), or the item itself."""
    return urlsplit(item).path if is_uri(item) else item


def _with_path(item: str, path: str) -> str:
    """``item`` (a URI or a path inside a filesystem) with its path replaced by ``path``."""
    if not is_uri(item):
        return path
    parts = urlsplit(item)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def _beside(index: str, line: str, filesystem: Any) -> tuple[str, bool]:
    """A path an index file lists, resolved against the index file's folder, and whether it
    was moved there: an absolute path that is not there (the server's, in a copy of its
    files) is the file of that name beside the index. The server's absolute paths mean nothing
    in object storage: there the file beside the index is always meant."""
    if is_uri(line):
        return line, False
    if filesystem is None and not is_uri(index):
        base = os.path.dirname(os.path.abspath(index))
        if not os.path.isabs(line):
            return os.path.normpath(os.path.join(base, line)), False
        if os.path.exists(line):
            return line, False
        return os.path.join(base, os.path.basename(line)), True
    moved = line.startswith("/")
    if moved:
        line = posixpath.basename(line)
    return _with_path(index, posixpath.normpath(posixpath.join(posixpath.dirname(_path_part(index)), line))), moved


def _is_folder(item: str, filesystem: Any, remote: bool) -> bool:
    """Whether ``item`` is a folder (or a prefix objects are under, in object storage). A
    remote name that looks like a binlog's is taken as a file without asking the storage."""
    if not remote:
        return os.path.isdir(item)
    path = _path_part(item)
    if path.endswith("/"):
        return True
    if _BINLOG_NAME.match(strip_compression(posixpath.basename(path))):
        return False
    import pyarrow.fs as pafs  # imported by resolve() for a remote location

    fs, inner, shown = resolve(item, filesystem)
    assert fs is not None  # remote
    try:
        return fs.get_file_info(inner).type == pafs.FileType.Directory
    except OSError as exc:
        raise SourceUnreachableError(str(exc).splitlines()[0], uri=shown) from None


def folder_binlogs(folder: str, filesystem: Any = None) -> list[str]:
    """The binlogs of a folder (a local one, or a prefix in object storage), in log order: the
    files its ``*.index`` file lists, when it has one, else every file in it that starts with
    the binlog magic ``fe 62 69 6e`` (a compressed one once decompressed), sorted by
    :func:`log_order_key`. Files named as binlogs are (``NAME.NUMBER``) that are left out (not
    binlogs, or not in the index) are named by a :class:`~vecbinlog.BinlogSetWarning`; other
    files (notes, the index itself) are passed over, and so are files of under 4 bytes (a
    binlog a server has just created: a stream takes it once it has its first bytes). Several
    index files are an error (give the one meant); so is a folder without a binlog."""
    entries = _listing(folder, filesystem)
    indexes = sorted(p for name, p in entries if name.endswith(".index"))
    if len(indexes) > 1:
        raise ValueError(f"{redact(folder)} holds {len(indexes)} index files ({', '.join(redact(p) for p in indexes)}): "
                         "give the one whose binlogs are meant")
    if indexes:
        found = index_file_paths(indexes[0], filesystem)
        listed = {strip_compression(_base(p)) for p in found}
        left = [n for n, _ in entries if _BINLOG_NAME.match(strip_compression(n)) and strip_compression(n) not in listed]
        why = f"not in {_base(indexes[0])}"
    else:
        heads = {p: _head(p, filesystem) for n, p in entries if not n.endswith(".index")}
        found = sorted((p for p, head in heads.items() if head == MAGIC), key=log_order_key)
        # under 4 bytes: a file a server has just created, not yet a binlog nor anything else
        left = [n for n, p in entries if _BINLOG_NAME.match(strip_compression(n)) and len(heads.get(p, MAGIC)) == 4
                and heads[p] != MAGIC]
        why = "they do not start with the binlog magic fe 62 69 6e"
    if left:
        warn(f"{redact(folder)}: left out {', '.join(sorted(left, key=log_order_key))} ({why})", BinlogSetWarning)
    if not found:
        raise SourceNotFoundError("no binlog file in the folder (none starts with the binlog magic)", uri=redact(folder))
    return found


def _base(path: str) -> str:
    return posixpath.basename(_path_part(path).rstrip("/")) if is_uri(path) else os.path.basename(path)


def _listing(folder: str, filesystem: Any) -> list[tuple[str, str]]:
    """``(name, path)`` of the files directly in ``folder``, paths in the form ``folder`` has
    (a local path, a URI with its query, or a path inside ``filesystem``)."""
    if filesystem is None and not is_uri(folder):
        return [(e.name, e.path) for e in os.scandir(folder) if e.is_file()]
    import pyarrow.fs as pafs  # imported by resolve() for a remote location

    fs, inner, shown = resolve(folder, filesystem)
    assert fs is not None
    try:
        listing = fs.get_file_info(pafs.FileSelector(inner.rstrip("/"), allow_not_found=True))
    except OSError as exc:
        raise SourceUnreachableError(f"cannot list the folder: {str(exc).splitlines()[0]}", uri=shown) from None
    files = [posixpath.basename(i.path) for i in listing if i.type == pafs.FileType.File]
    if filesystem is not None:
        return [(n, posixpath.join(inner.rstrip("/"), n)) for n in files]
    prefix = _path_part(folder).rstrip("/")
    return [(n, _with_path(folder, f"{prefix}/{n}")) for n in files]


#: files found to start with the binlog magic (a file's first bytes do not change): a folder
#: listed again (a stream's archive, at each micro-batch) does not read them again
_BINLOG_HEADS: set[tuple[int, str]] = set()


def _head(path: str, filesystem: Any) -> bytes:
    """The file's first 4 bytes (a compressed file's once decompressed; fewer when it is
    shorter, ``b"????"`` when it cannot be read or decompressed: not a binlog, and said so)."""
    key = (id(filesystem), path)
    if key in _BINLOG_HEADS:
        return MAGIC
    fs, inner, _ = resolve(path, filesystem)
    try:
        with open(inner, "rb") if fs is None else fs.open_input_stream(inner, compression=None) as raw:
            head = raw.read(len(MAGIC))
        codec = next((c for magic, c in COMPRESSION_MAGIC if head.startswith(magic)), None)
        if head != MAGIC and codec is not None:
            opened = pa.OSFile(inner, "rb") if fs is None else fs.open_input_stream(inner, compression=None)
            with pa.CompressedInputStream(opened, codec) as stream:
                head = stream.read(len(MAGIC))
    except (OSError, pa.ArrowException):
        return b"????"
    if head == MAGIC:
        if len(_BINLOG_HEADS) > 100_000:
            _BINLOG_HEADS.clear()
        _BINLOG_HEADS.add(key)
    return bytes(head)


def _glob_remote(pattern: str, filesystem: Any) -> list[str]:
    """The files a pattern's last component matches in its folder (object storage lists a
    folder; patterns in folder names are not expanded), in log order."""
    import pyarrow.fs as pafs  # imported by resolve() for a remote location

    fs, inner, shown = resolve(pattern, filesystem)
    assert fs is not None
    folder, name = posixpath.split(inner)
    try:
        listing = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    except OSError as exc:
        raise SourceUnreachableError(f"cannot list {folder!r}: {str(exc).splitlines()[0]}", uri=shown) from None
    found = sorted((i.path for i in listing if i.type == pafs.FileType.File and fnmatch.fnmatchcase(
        posixpath.basename(i.path), name) and not i.path.endswith(".index")), key=log_order_key)
    if filesystem is not None:
        return found
    path_prefix = _path_part(pattern)[: len(_path_part(pattern)) - len(name)]  # the URI's folder part
    return [_with_path(pattern, path_prefix + posixpath.basename(p)) for p in found]


def _read_text(path: str, filesystem: Any) -> str:
    fs, inner, shown = resolve(path, filesystem)
    try:
        if fs is None:
            with open(inner, encoding="utf-8", errors="surrogateescape") as fh:
                return fh.read()
        with fs.open_input_stream(inner) as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        raise SourceNotFoundError("no such index file", uri=shown) from None
    except OSError as exc:
        raise SourceUnreachableError(str(exc).splitlines()[0], uri=shown) from None


def _items(paths: Any) -> list[Any]:
    if isinstance(paths, (bytes, bytearray, memoryview)) or hasattr(paths, "read"):
        return [paths]
    try:
        return list(paths)
    except TypeError:
        raise TypeError(f"paths: {ACCEPTED}; not {type(paths).__name__}") from None


@dataclass(frozen=True)
class InMemory:
    """A binlog given as its bytes (or a binary file object, read whole), named ``name``
    (read through :class:`vecbinlog.binlog.sources.MemorySource`)."""

    name: str
    data: bytes | bytearray | memoryview


def binlog_sources(paths: Any, filesystem: Any = None) -> list[str | InMemory]:
    """:func:`binlog_files`, where an item may also be the binlog itself: ``bytes``,
    ``bytearray``, ``memoryview`` or a binary file object (read to its end). Those are named
    after the file object's ``name`` when it has one, else ``<memory 1>``, ``<memory 2>``...
    (their ``_log_file``)."""
    out: list[str | InMemory] = []
    unnamed = 0
    for item in _items(paths) if not isinstance(paths, (str, os.PathLike)) else [paths]:
        if isinstance(item, (str, os.PathLike)):
            out.extend(binlog_files(item, filesystem))
            continue
        if isinstance(item, (bytes, bytearray, memoryview)):
            data, name = item, None
        elif hasattr(item, "read"):
            if isinstance(item, io.TextIOBase):
                raise TypeError("a binlog file object must be binary: open the file with mode 'rb'")
            data = item.read()
            if isinstance(data, str):
                raise TypeError("a binlog file object must be binary (its read() returned str): open it with mode 'rb'")
            name = getattr(item, "name", None)
            name = os.path.basename(name) if isinstance(name, str) and name else None
        else:
            raise TypeError(f"paths: {ACCEPTED}; not {type(item).__name__}")
        if name is None:
            unnamed += 1
            name = f"<memory {unnamed}>"
        out.append(InMemory(name, data))
    if not out:
        raise ValueError("no binlog files given")
    return out


def source_name(source: str | InMemory) -> str:
    """What a source is called: its path, or an in-memory binlog's name."""
    return source.name if isinstance(source, InMemory) else source
