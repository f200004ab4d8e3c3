"""Binlog sets: which files make one change log, and in which order.

A server writes ``mysql-bin.000001``, ``mysql-bin.000002``, ... and lists them, oldest first,
in ``mysql-bin.index`` (one path per line, as the server was told to write them: often
``./mysql-bin.000001``, relative to the data directory, which is where the index is). Each
file but the last ends with a ROTATE_EVENT that names the next one.
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

from ..binlog.sources import is_uri, redact, resolve, strip_compression
from ..errors import SourceNotFoundError, SourceUnreachableError

__all__ = ["binlog_files", "binlog_sources", "index_file_paths", "log_order_key", "source_name", "InMemory"]

#: what ``open()`` accepts besides paths, for the errors that say so
ACCEPTED = ("a path (str or os.PathLike) or URI, a glob, a mysql-bin.index, the binlog's bytes (bytes, bytearray, "
            "memoryview) or a binary file object (open(..., 'rb'), io.BytesIO), or a list of these")

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


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
    ``index`` may be a URI, or a path inside ``filesystem``."""
    text = _read_text(index, filesystem)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.append(_beside(index, line, filesystem))
    if not out:
        raise ValueError(f"{redact(index)}: the index file lists no binlog files")
    return out


def binlog_files(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], filesystem: Any = None) -> list[str]:
    """The files of a binlog set, in log order.

    ``paths`` is a file, a glob (``"/archive/mysql-bin.*"``: sorted by :func:`log_order_key`,
    ``*.index`` files left out), a server index file (a name ending in ``.index``), or a list
    of any of these (kept in the order given). Each may be a local path, a URI
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
            out.extend(found)
        elif _path_part(item).endswith(".index") and (remote or os.path.isfile(item)):
            out.extend(index_file_paths(item, filesystem))
        else:
            out.append(item)
    if not out:
        raise ValueError("no binlog files given")
    return out


def _path_part(item: str) -> str:
    """The path of a URI (no scheme, host or query), or the item itself."""
    return urlsplit(item).path if is_uri(item) else item


def _with_path(item: str, path: str) -> str:
    """``item`` (a URI or a path inside a filesystem) with its path replaced by ``path``."""
    if not is_uri(item):
        return path
    parts = urlsplit(item)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def _beside(index: str, line: str, filesystem: Any) -> str:
    """A path an index file lists, resolved against the index file's folder. The server's
    absolute paths mean nothing in object storage: there the file beside the index is meant."""
    if is_uri(line):
        return line
    if filesystem is None and not is_uri(index):
        base = os.path.dirname(os.path.abspath(index))
        return line if os.path.isabs(line) else os.path.normpath(os.path.join(base, line))
    if line.startswith("/"):
        line = posixpath.basename(line)
    return _with_path(index, posixpath.normpath(posixpath.join(posixpath.dirname(_path_part(index)), line)))


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
