"""vecbinlog: MySQL and MariaDB binary logs, decoded column by column with NumPy into Apache Arrow."""

from __future__ import annotations

from .errors import (
    BinlogError,
    ChecksumError,
    CorruptArchiveError,
    EncryptedBinlogError,
    MalformedEventError,
    NotABinlogError,
    TruncatedError,
    TruncatedWarning,
    MalformedEventWarning,
    BinlogSetWarning,
    SchemaWarning,
    SourceError,
    SourceNotFoundError,
    SourcePermissionError,
    SourceUnreachableError,
    TableNotFoundError,
    SchemaChangedError,
    UnsupportedError,
    UnsupportedVersionError,
    DecodeWarning,
)
from .reader import Binlog, open, read_pandas, read_table

__version__ = "0.1.0"

__all__ = [
    "Binlog",
    "open",
    "read_table",
    "read_pandas",
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
    "SourceError",
    "SourceNotFoundError",
    "SourcePermissionError",
    "SourceUnreachableError",
    "TableNotFoundError",
    "SchemaChangedError",
    "DecodeWarning",
]
