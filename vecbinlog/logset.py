"""Binlog sets: which files make one change log, and in which order.

A server writes ``mysql-bin.000001``, ``mysql-bin.000002``, ... and lists them, oldest first,
in ``mysql-bin.index`` (one path per line, as the server was told to write them: often
``./mysql-bin.000001``, relative to the data directory, which is where the index is). Each
file but the last ends with a ROTATE_EVENT that names the next one.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Iterable

__all__ = ["binlog_files", "index_file_paths", "log_order_key"]

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
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: list[str] = []
    for item in items:
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
