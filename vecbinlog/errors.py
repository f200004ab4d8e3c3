"""Exceptions raised by vecbinlog.

Every error class of vecbinlog is a :class:`VecbinlogError`, and also the built-in error it is
(``ValueError``, ``OSError``, ``KeyError``...): ``except vecbinlog.VecbinlogError`` catches
them all, ``except ValueError`` what it always caught (the tree: docs/errors.md; an argument of
the wrong type or value is Python's own ``TypeError`` or ``ValueError``). Every warning is a
:class:`VecbinlogWarning` (a ``UserWarning``).

Every error that comes from the content of a file is a :class:`BinlogError`
(a ``ValueError``), and carries where it happened as attributes: the file, the
absolute byte offset of the event (or of the byte that is wrong), and the event
type, so that a user can open the file at that offset and look.

Warnings are issued with :func:`warn`, which points them at the user's call (the first frame
outside the package), whatever path inside vecbinlog led to them.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "VecbinlogError",
    "VecbinlogWarning",
    "BinlogError",
    "NotABinlogError",
    "UnsupportedVersionError",
    "TruncatedError",
    "ChecksumError",
    "MalformedEventError",
    "UnsupportedError",
    "EncryptedBinlogError",
    "CorruptArchiveError",
    "FileChangedError",
    "SourceError",
    "SourceNotFoundError",
    "SourcePermissionError",
    "SourceUnreachableError",
    "TableNotFoundError",
    "SchemaChangedError",
    "ArchiveIndexError",
    "TruncatedWarning",
    "MalformedEventWarning",
    "BinlogSetWarning",
    "SchemaWarning",
    "DecodeWarning",
    "ArchiveIndexWarning",
    "warn",
]


class VecbinlogError(Exception):
    """Base class of every error class of vecbinlog; each is also the built-in error it is
    (``ValueError``, ``OSError``, ``KeyError``...)."""


class VecbinlogWarning(UserWarning):
    """Base class of every warning vecbinlog issues."""


class BinlogError(VecbinlogError, ValueError):
    """Base class: the bytes of a binlog file cannot be decoded as asked.

    Attributes
    ----------
    path : str or None
        The binlog file.
    offset : int or None
        Absolute byte offset in the file (of the event, unless the message says otherwise).
    event_type : str or None
        Name of the event type being read (``"TABLE_MAP_EVENT"``...), when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        offset: int | None = None,
        event_type: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.offset = offset
        self.event_type = event_type
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.event_type is not None:
            where.append(self.event_type)
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message

    def __reduce__(self) -> tuple[Any, ...]:  # keep attributes across pickling (Spark ships errors)
        return (
            _rebuild,
            (type(self), self.message, self.path, self.offset, self.event_type),
        )


def _rebuild(
    cls: type[BinlogError], message: str, path: str | None, offset: int | None, event_type: str | None
) -> BinlogError:
    return cls(message, path=path, offset=offset, event_type=event_type)


class NotABinlogError(BinlogError):
    """The file does not start with the binlog magic bytes ``fe 62 69 6e``."""


class UnsupportedVersionError(BinlogError):
    """A binlog format version other than v4 (MySQL 5.0+ / MariaDB), e.g. v1/v3 from 4.x servers."""


class TruncatedError(BinlogError):
    """The file ends inside an event (a server still writing it, or a copy cut short).

    Raised only with ``strict=True``; otherwise a :class:`TruncatedWarning` is issued
    and every complete event before ``offset`` is decoded.
    """


class ChecksumError(BinlogError):
    """The CRC32 stored in an event does not match the CRC32 of its bytes."""

    def __init__(self, message: str, *, stored: int, computed: int, **kw: Any) -> None:
        self.stored = stored
        self.computed = computed
        super().__init__(message, **kw)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_checksum,
            (self.message, self.path, self.offset, self.event_type, self.stored, self.computed),
        )


def _rebuild_checksum(
    message: str, path: str | None, offset: int | None, event_type: str | None, stored: int, computed: int
) -> ChecksumError:
    return ChecksumError(
        message, stored=stored, computed=computed, path=path, offset=offset, event_type=event_type
    )


class MalformedEventError(BinlogError):
    """An event whose lengths, counts or offsets are inconsistent with its size or its TABLE_MAP."""


class UnsupportedError(BinlogError):
    """A feature of the file this version of vecbinlog cannot decode."""


class EncryptedBinlogError(UnsupportedError):
    """A MariaDB encrypted binlog (START_ENCRYPTION_EVENT); decrypt it with the server first."""


class CorruptArchiveError(BinlogError):
    """A compressed binlog (``.gz``, ``.zst``, ``.bz2``, ``.lz4``) that is corrupt: its codec
    could not go on. ``offset`` is where the decompressed binlog stopped being readable: every
    complete event before it was decoded. (A compressed file that is only cut short is read as
    a cut plain file: a :class:`TruncatedWarning`, or :class:`TruncatedError` with ``strict``.)"""


class FileChangedError(BinlogError):
    """A file was cut back while it was read: a read found it shorter than it was when it was
    opened (a server recovering from a crash trims its newest binlog; a rotation by
    ``copytruncate``; a network filesystem). ``offset`` is where its data now ends; the events
    before it were read. Only a file read with ``pread`` can tell (see "Which files are
    memory-mapped" in docs/api.md): a memory-mapped one would end the process (SIGBUS)."""


class SourceError(VecbinlogError, OSError):
    """A binlog's bytes cannot be read from where they are (a local path, or a URI of
    object storage or HDFS). ``uri`` names it, without credentials."""

    def __init__(self, message: str, *, uri: str) -> None:
        self.uri = uri
        self.message = message
        super().__init__(f"{uri}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:  # keep attributes across pickling (Spark ships errors)
        return (_rebuild_source, (type(self), self.message, self.uri))


def _rebuild_source(cls: type[SourceError], message: str, uri: str) -> SourceError:
    return cls(message, uri=uri)


class SourceNotFoundError(SourceError, FileNotFoundError):
    """No file or object at that path or URI (or a pattern that matches none)."""


class SourcePermissionError(SourceError, PermissionError):
    """Reading it was denied (credentials missing or not allowed)."""


class SourceUnreachableError(SourceError, ConnectionError):
    """The storage service could not be reached, or a read failed on the way."""


class TableNotFoundError(VecbinlogError, KeyError):
    """A table asked for by name (``read_table``, ``iter_batches``, ``schema``, ``snapshot``...)
    has no rows events in the files, or the ``tables=`` filter leaves it out. A ``KeyError``;
    ``.table`` is the name asked for, ``.tables`` the tables there are."""

    def __init__(self, message: str, *, table: str, tables: list[str]) -> None:
        super().__init__(message)
        self.message, self.table, self.tables = message, table, tables

    def __str__(self) -> str:  # not KeyError's repr() of the message
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_table_not_found, (self.message, self.table, self.tables))


def _rebuild_table_not_found(message: str, table: str, tables: list[str]) -> TableNotFoundError:
    return TableNotFoundError(message, table=table, tables=tables)


class TruncatedWarning(VecbinlogWarning):
    """Reading stopped early at a truncated event; the complete events before it were decoded."""


class MalformedEventWarning(VecbinlogWarning):
    """An event that is not needed for the rows asked for is malformed and was passed over
    (e.g. a corrupt statement in a QUERY_EVENT: it is not taken as a transaction boundary)."""


class BinlogSetWarning(VecbinlogWarning):
    """The files given as one binlog set do not chain: a file's ROTATE_EVENT names another
    next file than the one given (a file missing, or the files out of order); or the set was
    not taken as written: a folder's file named as a binlog was left out (not a binlog, or not
    in the folder's index), an index file's absolute paths that are not there were read as the
    files beside it."""


class SchemaWarning(VecbinlogWarning):
    """A table definition could not be used: a DDL statement in the log that could not be
    parsed or interpreted (the table it names is no longer tracked), a ``schema=`` statement
    that could not be read, or a definition whose column count or types do not match the
    TABLE_MAP (it is not applied to those rows; the TABLE_MAP's types always decide how
    values are read)."""


class DecodeWarning(VecbinlogWarning):
    """A value could not be typed as declared (e.g. text invalid in its charset) and was kept
    as bytes; also counts the rows a read leaves out (dates Arrow cannot hold, changes that
    did not take effect)."""


class SchemaChangedError(BinlogError):
    """A table's layout changed within a stream in a way its fixed schema cannot hold (a new
    column, a type no Arrow type widens...): the stream stops before the first change in the
    new layout; restarting the query (from its checkpoint) reads on with a schema that has it."""


class ArchiveIndexError(VecbinlogError, ValueError):
    """The archive index (:mod:`vecbinlog.index`) cannot stand for the files given: a file is
    not indexed, or changed since it was (other size or time), or its index file is of a
    format version this vecbinlog does not read, or damaged (the message names the index file
    and what is wrong: :mod:`vecbinlog.log.indexrows`). ``build_index`` brings it up to date."""


class ClosedError(VecbinlogError, ValueError):
    """An open log, or one of its reads, used after :meth:`~vecbinlog.Binlog.close` (as
    Python's "I/O operation on closed file", a ``ValueError``): also what a read raises when
    another thread closed its log while it ran. Its background work was ended first."""


class ArchiveIndexWarning(VecbinlogWarning):
    """About the archive index: a file already in it changed (it is not the file that was
    indexed, nor that file grown) and is indexed again, or its index file cannot be read; or a
    Spark read plans a large archive without one (the driver walks every file)."""


#: the package's folder: frames of files under it are vecbinlog's, not the user's
_PACKAGE = os.path.dirname(__file__) + os.sep


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` at the user's call: its ``stacklevel`` is that of
    the first frame outside vecbinlog, so the warning names the user's line (``read_table``,
    the loop over ``iter_batches``...) however deep in the package it is found, and Python's
    once-per-location filter works on the user's lines."""
    frame: FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level - 1 if frame is None else level)
