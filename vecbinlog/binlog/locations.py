"""Where a binlog is: a local path, a URI (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``,
``file://``) or a path inside a ``filesystem=``; its name; its compression, told by its name or
its first bytes; and how messages name it (never with credentials). How its bytes are then read
is :mod:`vecbinlog.binlog.sources`.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pyarrow as pa

from ..errors import SourceError, SourceNotFoundError, SourcePermissionError, SourceUnreachableError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = ["COMPRESSION_MAGIC", "COMPRESSION_SUFFIXES", "codec_by_magic", "codec_by_name", "first_line",
           "is_uri", "name_of", "redact", "resolve", "source_error", "strip_compression"]

#: file name endings -> pyarrow codec
COMPRESSION_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bz2", ".lz4": "lz4"}
#: first bytes -> pyarrow codec (gzip, zstd frame, bzip2, lz4 frame)
COMPRESSION_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"BZh", "bz2"), (b"\x04\x22\x4d\x18", "lz4"))
#: query parameters of a URI that are secrets (shown as ``***`` in messages)
_SECRET_KEYS = re.compile(r"(key|secret|token|password|passwd|sas|credential|signature)", re.IGNORECASE)
#: schemes read as another (Hadoop's names for S3)
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_uri(path: str) -> bool:
    """Whether ``path`` is a URI (``scheme://...``), not a local path."""
    return bool(_URI.match(path))


def is_remote(path: Any, filesystem: Any = None) -> bool:
    """Whether ``path`` is read through a filesystem (object storage, HDFS, ``filesystem=``),
    where each request costs a round trip, not a local file."""
    if filesystem is not None:
        return True
    if not isinstance(path, (str, os.PathLike)):
        return False
    text = os.fspath(path)
    return is_uri(text) and not text.startswith("file://")


def redact(uri: str) -> str:
    """``uri`` without credentials: no user/password, secret query values as ``***``."""
    if not is_uri(uri):
        return uri
    parts = urlsplit(uri)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, "***" if _SECRET_KEYS.search(k) else v) for k, v in parse_qsl(parts.query)], safe="*:/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def name_of(path: str) -> str:
    """The binlog's name: the last path component of a path or URI (query left out), less a
    compression suffix (``mysql-bin.000042.gz`` is the binlog ``mysql-bin.000042``)."""
    if is_uri(path):
        path = urlsplit(path).path
    return strip_compression(path.rstrip("/").rsplit("/", 1)[-1])




def strip_compression(name: str) -> str:
    """``name`` less a compression suffix (:data:`COMPRESSION_SUFFIXES`)."""
    for suffix in COMPRESSION_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def resolve(path: str | os.PathLike[str], filesystem: Any = None) -> tuple[pafs.FileSystem | None, str, str]:
    """``(filesystem, path inside it, what messages call it)``; filesystem None: a local path.

    ``filesystem``: a ``pyarrow.fs.FileSystem`` or an fsspec filesystem (wrapped with
    ``pyarrow.fs.PyFileSystem(FSSpecHandler(...))``), and ``path`` a path inside it.
    """
    text = os.fspath(path)
    if filesystem is not None:
        return _as_pyarrow(filesystem), text, text
    if not is_uri(text):
        return None, text, text
    if text.startswith("file://"):
        return None, urlsplit(text).path, text
    import pyarrow.fs as pafs  # here: a local path does not need it (9 ms of every start)

    scheme, rest = text.split("://", 1)
    uri = f"{_SCHEME_ALIASES.get(scheme.lower(), scheme)}://{rest}"
    try:
        fs, inner = pafs.FileSystem.from_uri(uri)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
        raise SourceError(f"not a location pyarrow can read: {first_line(exc)}", uri=redact(text)) from None
    except OSError as exc:
        raise source_error(exc, redact(text)) from None
    return fs, inner, redact(text)


def _as_pyarrow(filesystem: Any) -> pafs.FileSystem:
    import pyarrow.fs as pafs

    if isinstance(filesystem, pafs.FileSystem):
        return filesystem
    try:
        import fsspec
    except ImportError:  # pragma: no cover - no fsspec: only pyarrow filesystems can be given
        fsspec = None
    if fsspec is not None and isinstance(filesystem, fsspec.AbstractFileSystem):
        return pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    raise TypeError(f"filesystem must be a pyarrow.fs.FileSystem or an fsspec filesystem, not {type(filesystem)!r}")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def source_error(exc: BaseException, uri: str) -> SourceError:
    """One clear error for a failed open or read (credentials never shown)."""
    text = first_line(exc)
    low = text.lower()
    if isinstance(exc, FileNotFoundError) or "does not exist" in low or "nosuchkey" in low or "not found" in low:
        return SourceNotFoundError("no such file or object", uri=uri)
    if isinstance(exc, PermissionError) or any(w in low for w in ("access denied", "access_denied", "forbidden", "403")):
        return SourcePermissionError(f"access denied ({_redact_text(text)})", uri=uri)
    return SourceUnreachableError(_redact_text(text), uri=uri)


def _redact_text(text: str) -> str:
    """A pyarrow message, any URI in it redacted."""
    return re.sub(r"[A-Za-z][A-Za-z0-9+.-]+://\S+", lambda m: redact(m.group(0)), text)


def codec_by_name(name: str) -> str | None:
    for suffix, codec in COMPRESSION_SUFFIXES.items():
        if name.lower().endswith(suffix):
            return codec
    return None


def codec_by_magic(head: bytes) -> str | None:
    for magic, codec in COMPRESSION_MAGIC:
        if head.startswith(magic):
            return codec
    return None
