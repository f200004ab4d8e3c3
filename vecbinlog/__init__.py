"""vecbinlog: MySQL and MariaDB binary logs, decoded column by column with NumPy into Apache Arrow."""

# No ``from __future__ import annotations`` here: it would put ``annotations`` in dir(vecbinlog).
from .errors import (
    BinlogError,
    BinlogSetWarning,
    ChecksumError,
    CorruptArchiveError,
    DecodeWarning,
    EncryptedBinlogError,
    FileChangedError,
    MalformedEventError,
    MalformedEventWarning,
    NotABinlogError,
    SchemaChangedError,
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
    "FileChangedError",
    "SourceError",
    "SourceNotFoundError",
    "SourcePermissionError",
    "SourceUnreachableError",
    "TableNotFoundError",
    "SchemaChangedError",
    "DecodeWarning",
]
