"""Binlog sets: which files make one change log, and in which order.

A server writes ``mysql-bin.000001``, ``mysql-bin.000002``, ... and lists them, oldest first,
in ``mysql-bin.index`` (one path per line, as the server was told to write them: often
``./mysql-bin.000001``, relative to the data directory, which is where the index is). Each
file but the last ends with a ROTATE_EVENT that names the next one.
"""

from __future__ import annotations

import glob
import io
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable

__all__ = ["binlog_files", "binlog_sources", "index_file_paths", "log_order_key", "open_source", "InMemory"]

#: what ``open()`` accepts besides paths, for the errors that say so
ACCEPTED = ("a path (str or os.PathLike), a glob, a mysql-bin.index, the binlog's bytes (bytes, bytearray, "
            "memoryview) or a binary file object (open(..., 'rb'), io.BytesIO), or a list of these")

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def log_order_key(path: str) -> tuple[str, int, str]:
    """Sort key for binlog names: by base name, then by the number after the last dot, as a
    number (``mysql-bin.999999`` comes before ``mysql-bin.1000000``)."""
    name = os.path.basename(path)
    m = _NUMBERED.match(name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)


def index_file_paths(index: str) -> list[str]:
    """The files a ``mysql-bin.index`` lists, in its order; relative ones are resolved
    against the index file's folder (the server writes them relative to its data directory)."""
    base = os.path.dirname(os.path.abspath(index))
    out = []
    with open(index, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            line = line.strip()
            if line:
                out.append(line if os.path.isabs(line) else os.path.normpath(os.path.join(base, line)))
    if not out:
        raise ValueError(f"{index}: the index file lists no binlog files")
    return out


def binlog_files(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """The files of a binlog set, in log order.

    ``paths`` is a file, a glob (``"/archive/mysql-bin.*"``: sorted by :func:`log_order_key`,
    ``*.index`` files left out), a server index file (a name ending in ``.index``), or a list
    of any of these (kept in the order given). A pattern that matches nothing is an error.
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else _items(paths)
    out: list[str] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"binlog files are paths (str or os.PathLike), globs or a mysql-bin.index, not {type(item).__name__}")
        item = os.fspath(item)
        if glob.has_magic(item):
            found = sorted((p for p in glob.glob(item) if os.path.isfile(p) and not p.endswith(".index")),
                           key=log_order_key)
            if not found:
                raise FileNotFoundError(f"{item}: no binlog file matches")
            out.extend(found)
        elif item.endswith(".index") and os.path.isfile(item):
            out.extend(index_file_paths(item))
        else:
            out.append(item)
    if not out:
        raise ValueError("no binlog files given")
    return out


def _items(paths: Any) -> list[Any]:
    if isinstance(paths, (bytes, bytearray, memoryview)) or hasattr(paths, "read"):
        return [paths]
    try:
        return list(paths)
    except TypeError:
        raise TypeError(f"paths: {ACCEPTED}; not {type(paths).__name__}") from None


@dataclass(frozen=True)
class InMemory:
    """A binlog given as its bytes (or a binary file object, read whole): opened through an
    anonymous memory file, under ``name``."""

    name: str
    data: bytes | bytearray | memoryview


def binlog_sources(paths: Any) -> list[str | InMemory]:
    """:func:`binlog_files`, where an item may also be the binlog itself: ``bytes``,
    ``bytearray``, ``memoryview`` or a binary file object (read to its end). Those are named
    after the file object's ``name`` when it has one, else ``<memory 1>``, ``<memory 2>``...
    (their ``_log_file``)."""
    out: list[str | InMemory] = []
    unnamed = 0
    for item in _items(paths) if not isinstance(paths, (str, os.PathLike)) else [paths]:
        if isinstance(item, (str, os.PathLike)):
            out.extend(binlog_files(item))
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


def open_source(source: str | InMemory, **options: Any):
    """The :class:`~vecbinlog.file.BinlogFile` of a path, or of an in-memory binlog (its bytes
    copied into an anonymous memory file, ``memfd_create``, or a temporary file removed once
    mapped where there is none; errors name the source, not that file)."""
    from .errors import BinlogError
    from .file import BinlogFile

    if not isinstance(source, InMemory):
        return BinlogFile(source, **options)
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("vecbinlog", 0)
        path = f"/proc/self/fd/{fd}"
    else:  # pragma: no cover - not Linux
        fd, path = tempfile.mkstemp(prefix="vecbinlog-")
    try:
        with os.fdopen(os.dup(fd), "wb") as fh:
            fh.write(source.data)
        try:
            f = BinlogFile(path, **options)
        except BinlogError as exc:
            raise exc.at_path(source.name) from None
    finally:
        os.close(fd)
        if not path.startswith("/proc/"):  # pragma: no cover - not Linux
            os.unlink(path)
    f.path = f.name = source.name
    return f
