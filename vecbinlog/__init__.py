"""vecbinlog: MySQL and MariaDB binary logs, decoded column by column with NumPy into Apache Arrow."""

# No ``from __future__ import annotations`` here: it would put ``annotations`` in dir(vecbinlog).
import typing as _typing

from .errors import (
    BinlogError,
    BinlogSetWarning,
    ChecksumError,
    ClosedError,
    CorruptArchiveError,
    DecodeWarning,
    EncryptedBinlogError,
    FileChangedError,
    MalformedEventError,
    MalformedEventWarning,
    NotABinlogError,
    SchemaChangedError,
    ArchiveIndexError,
    ArchiveIndexWarning,
    SchemaWarning,
    SourceError,
    SourceNotFoundError,
    SourcePermissionError,
    SourceUnreachableError,
    TableNotFoundError,
    TruncatedError,
    TruncatedWarning,
    UnsupportedError,
    UnsupportedVersionError,
    VecbinlogError,
    VecbinlogWarning,
)

__version__ = "0.1.0"

#: the API, imported when first used (``vecbinlog.open``...): ``import vecbinlog`` alone, and
#: the command line before it knows its command, load none of NumPy, pyarrow and numba
_LAZY = {"Binlog": "reader", "open": "reader", "read_pandas": "reader", "read_table": "reader",
         "build_index": "index"}
if _typing.TYPE_CHECKING:  # what a type checker sees of them
    from .index import build_index
    from .reader import Binlog, open, read_pandas, read_table


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module 'vecbinlog' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "Binlog",
    "open",
    "read_table",
    "read_pandas",
    "build_index",
    "VecbinlogError",
    "VecbinlogWarning",
    "BinlogError",
    "NotABinlogError",
    "UnsupportedVersionError",
    "TruncatedError",
    "TruncatedWarning",
    "MalformedEventWarning",
    "BinlogSetWarning",
    "SchemaWarning",
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
    "DecodeWarning",
    "ArchiveIndexError",
    "ArchiveIndexWarning",
    "ClosedError",
]
