"""Where the archive index is kept (:mod:`vecbinlog.index`): its location, its files (one per
binlog, and the one that gathers them) read and written, and the identity of the binlogs it
is of (their size and time, from their filesystem's metadata: no byte of them read)."""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pyarrow as pa

from ..binlog.locations import is_uri, name_of, redact, resolve
from ..errors import ArchiveIndexError, ArchiveIndexWarning, SourceNotFoundError, warn
from .indexrows import take_rows
from .logset import binlog_files
from .summary import INDEX_FORMAT_VERSION, INDEX_SCHEMA

if TYPE_CHECKING:  # pyarrow.fs is imported where an index is used: not by every start (9 ms)
    import pyarrow.fs as pafs

__all__ = ["INDEX_SUFFIX", "VERSION_KEY", "GATHERED_NAME", "archive_paths", "index_location", "file_identity",
           "file_identities", "index_path", "read_index_file", "write_index_file", "shown_path", "damaged", "ArchiveRows",
           "gather"]

#: an index file's name is its binlog's name and this
INDEX_SUFFIX = ".parquet"
#: the key of the format version in an index file's Parquet key-value metadata
VERSION_KEY = b"vecbinlog.index.version"
#: the index rows of every binlog indexed at a location, gathered in one file by each build
#: (:class:`ArchiveRows`); the file of a binlog stays the truth when the two differ
GATHERED_NAME = "_archive.parquet"


# -- where things are ------------------------------------------------------------------------
def archive_paths(archive: Any, filesystem: Any = None) -> list[str]:
    """The binlog files of ``archive`` (a file, a glob, a folder, a ``mysql-bin.index`` or a
    list of them, as :func:`vecbinlog.open` takes paths), in log order; local ones absolute."""
    files = binlog_files(archive, filesystem)
    if filesystem is None:
        files = [f if is_uri(f) else type(f)(os.path.abspath(f)) for f in files]
    return files


def index_location(location: Any, filesystem: Any = None) -> tuple[pafs.FileSystem, str]:
    """(filesystem, folder) of an index location: a local folder, a URI, or a path in ``filesystem``."""
    import pyarrow.fs as pafs

    text = os.fspath(location)
    if filesystem is not None:
        return resolve(text, filesystem)[0], text.rstrip("/")
    if is_uri(text) and not text.startswith("file://"):
        fs, inner = pafs.FileSystem.from_uri(text)
        return fs, inner.rstrip("/")
    fs, inner, _ = resolve(text)
    return pafs.LocalFileSystem(), os.path.abspath(inner)


def file_identity(path: str, filesystem: Any = None) -> dict[str, Any]:
    """The name, path, size and modification time of a binlog file, from its filesystem's
    metadata (no byte of it read)."""
    fs, inner, shown = resolve(path, filesystem)
    if fs is None:  # (pyarrow.fs not needed: a local binlog of an index on S3, or of a local index)
        try:
            st = os.stat(inner)
        except FileNotFoundError:
            raise SourceNotFoundError("no such binlog file", uri=shown) from None
        size, mtime = st.st_size, st.st_mtime_ns
    else:
        import pyarrow.fs as pafs

        info = fs.get_file_info(inner)
        if info.type == pafs.FileType.NotFound:
            raise SourceNotFoundError("no such binlog file", uri=shown)
        size, mtime = info.size, info.mtime_ns
    return {"name": name_of(shown), "path": redact(shown) if is_uri(shown) else shown, "size": int(size),
            "mtime_ns": None if mtime is None else int(mtime), "etag": None}


def file_identities(paths: list[str], filesystem: Any = None) -> list[dict[str, Any]]:
    """:func:`file_identity` of each of ``paths``: local files by their own ``stat``, files in
    object storage (URIs, or paths in ``filesystem``) by one listing of each folder they are in
    (a HEAD request per file, one after another, is most of a plan of a thousand files in S3:
    ~6 ms each), a file the listing does not show by its own metadata call."""
    import pyarrow.fs as pafs

    out: list[dict[str, Any] | None] = [None] * len(paths)
    folders: dict[tuple[Any, ...], list[int]] = {}
    for k, path in enumerate(paths):
        text = os.fspath(path)
        if filesystem is None and (not is_uri(text) or text.startswith("file://")):
            out[k] = file_identity(text)
            continue
        if filesystem is not None:
            key: tuple[Any, ...] = (id(filesystem), text.rstrip("/").rsplit("/", 1)[0])
        else:  # a folder of one bucket, reached with the same options (the query)
            parts = urlsplit(text)
            key = (parts.scheme, parts.netloc, parts.path.rsplit("/", 1)[0], parts.query)
        folders.setdefault(key, []).append(k)
    for ks in folders.values():
        if len(ks) == 1:  # one file of the folder: its own call, not a listing of every file there
            out[ks[0]] = file_identity(os.fspath(paths[ks[0]]), filesystem)
            continue
        fs, inner, _ = resolve(paths[ks[0]], filesystem)  # (one filesystem made per folder, not per file)
        assert fs is not None  # remote (a local path's identity was taken above)
        folder = inner.rsplit("/", 1)[0] if "/" in inner else ""
        listed = {info.base_name: info for info in fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
                  if info.type == pafs.FileType.File}
        for k in ks:
            text = os.fspath(paths[k])
            info = listed.get((urlsplit(text).path if filesystem is None else text).rstrip("/").rsplit("/", 1)[-1])
            if info is None:
                out[k] = file_identity(text, filesystem)  # (its own call says what is wrong)
                continue
            shown = text if filesystem is not None else redact(text)
            out[k] = {"name": name_of(shown), "path": shown, "size": int(info.size),
                      "mtime_ns": None if info.mtime_ns is None else int(info.mtime_ns), "etag": None}
    return [o for o in out if o is not None]


def index_path(folder: str, name: str) -> str:
    return f"{folder}/{name}{INDEX_SUFFIX}"


def read_index_file(fs: pafs.FileSystem, path: str, *, rebuild: bool = False) -> pa.Table | None:
    """An index file's rows, or None when there is none: its pages' checksums
    verified, its format version and columns (names and types) INDEX_SCHEMA's. A damaged one
    (not Parquet, cut short, a checksum that does not match, other columns), or one of another
    format version, is an ArchiveIndexError naming it (``rebuild``: None, with an
    ArchiveIndexWarning, for a build to replace it)."""
    import pyarrow.parquet as pq  # here: a read that is given no index does not load it

    try:
        with fs.open_input_file(path) as fh:
            pf = pq.ParquetFile(fh, page_checksum_verification=True)
            version = (pf.schema_arrow.metadata or {}).get(VERSION_KEY)
            if version != str(INDEX_FORMAT_VERSION).encode():
                if rebuild:
                    warn(f"{shown_path(fs, path)}: index format version {version!r}, not {INDEX_FORMAT_VERSION}: "
                         "indexed again", ArchiveIndexWarning)
                    return None
                raise ArchiveIndexError(f"{shown_path(fs, path)}: index format version {version!r}; this vecbinlog "
                                        f"reads {INDEX_FORMAT_VERSION} (build the index again)")
            problem = _columns_problem(pf.schema_arrow)
            if problem is None:
                table = pf.read()
                table.validate(full=True)  # (text is UTF-8, lists' offsets in their values...)
                return table
    except FileNotFoundError:
        return None
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:  # not Parquet, cut short, a page's checksum...
        problem = f"not a readable index file ({exc})"
    if rebuild:
        warn(f"{shown_path(fs, path)}: a damaged index file: {problem}: indexed again", ArchiveIndexWarning)
        return None
    raise damaged(shown_path(fs, path), problem)


def _columns_problem(schema: pa.Schema) -> str | None:
    """Whether an index file's columns are INDEX_SCHEMA's: None, or the first that is not."""
    if schema.remove_metadata().equals(INDEX_SCHEMA):
        return None
    for field in INDEX_SCHEMA:
        k = schema.get_field_index(field.name)
        got = "none" if k < 0 else str(schema.field(k).type) + ("" if schema.field(k).nullable else " not null")
        if k < 0 or not schema.field(k).equals(field):
            return f"its column {field.name} is not INDEX_SCHEMA's (expected {field.type}, got {got})"
    return f"its columns are not INDEX_SCHEMA's (expected {INDEX_SCHEMA.names}, got {schema.names})"


def shown_path(fs: pafs.FileSystem, path: str) -> str:
    """How messages name an index file: its path, or a URI (``s3://bucket/idx/_archive.parquet``)."""
    kind = getattr(fs, "type_name", "local")
    return path if kind in ("local", "py") else f"{kind}://{path}"


def damaged(shown: str, problem: str) -> ArchiveIndexError:
    """The error of an index file (``shown``: as :func:`shown_path` names it) that cannot stand
    for its binlogs: it names the file and ``problem``."""
    return ArchiveIndexError(f"{shown}: a damaged index file: {problem}; build the index again "
                             "(vecbinlog.build_index / `vecbinlog index` indexes its binlogs again)")


#: the long lists of numbers, each close to the one before: DELTA_BINARY_PACKED, a few bits each
_DELTA = {name: "DELTA_BINARY_PACKED" for name in (
    "transaction_starts.list.element", "start_times.list.element", *(f"gtid_blocks.list.element.{f}" for f in (
        "block", "source", "first", "last")))}


def write_index_file(fs: pafs.FileSystem, path: str, table: pa.Table) -> None:
    """Write index rows to ``path``: to a temporary name, then moved into place."""
    import pyarrow.parquet as pq

    tmp = f"{path}.{os.getpid()}.tmp"
    version = {VERSION_KEY: str(INDEX_FORMAT_VERSION).encode()}
    # the footer is most of a small file's index: no statistics (nothing filters on them), no
    # Arrow schema (Parquet's own types read back as INDEX_SCHEMA): 12.7 -> 7.0 KB a file
    lean = hasattr(pq.ParquetWriter, "add_key_value_metadata")  # pyarrow 16+
    schema = INDEX_SCHEMA if lean else INDEX_SCHEMA.with_metadata(version)
    table = table.select(INDEX_SCHEMA.names).cast(schema)
    # each page's CRC32 in its header (Parquet's page checksums), verified by read_index_file: an
    # index is kept for months and copied; a page damaged on the way is named, not planned from
    with fs.open_output_stream(tmp) as out, pq.ParquetWriter(
            out, schema, compression="zstd", write_statistics=False, store_schema=not lean,
            use_dictionary=False, column_encoding=_DELTA, write_page_checksum=True) as writer:
        writer.write_table(table)
        if lean:
            writer.add_key_value_metadata(version)
    fs.move(tmp, path)


class ArchiveRows:
    """The index rows of a location gathered in one file (:data:`GATHERED_NAME`), by binlog name:
    what a plan reads first, rather than a file per binlog (976 of them: 2.3 s)."""

    def __init__(self, table: pa.Table | None) -> None:
        self.table = table
        self.at: dict[str, int] = {}
        self._ids: list[tuple[Any, ...]] = []
        self.twice: list[str] = []  #: names of more than one row (a damaged file: never written so)
        if table is not None:
            ids = table.select(["name", "size", "mtime_ns", "etag"]).to_pylist()
            self.at = {r["name"]: k for k, r in enumerate(ids)}
            self._ids = [(r["size"], r["mtime_ns"], r["etag"]) for r in ids]
            seen = Counter(r["name"] for r in ids)
            self.twice = sorted((n for n, c in seen.items() if c > 1), key=str)

    def current(self, identity: dict[str, Any]) -> int | None:
        """The row of the file of ``identity`` when its index there is of that file as it is now."""
        k = self.at.get(identity["name"])
        if k is None or self._ids[k] != (identity["size"], identity["mtime_ns"], identity["etag"]):
            return None
        return k

    def drop_damaged(self, shown: str, sizes: dict[str, int]) -> None:
        """For a build: leave out the rows that do not hold together (:func:`~.indexrows.take_rows`;
        ``sizes``: the binlogs' sizes now, by name), and those of a name there twice, each with
        an ArchiveIndexWarning: their binlogs' own index files are looked at instead (and they
        are indexed again when those are damaged too)."""
        if self.table is None:
            return
        names = list(self.at)
        problems = {n: f"its rows of {n} are there more than once" for n in self.twice}
        rows = take_rows(self.table, [self.at[n] for n in names], [sizes.get(n) for n in names])
        for name, taken in zip(names, rows):
            if isinstance(taken, str):
                problems.setdefault(name, f"its row of {name}: {taken}")
        for name, problem in problems.items():
            warn(f"{shown}: a damaged index file: {problem}: that binlog's own index file is read instead",
                 ArchiveIndexWarning)
            self.at.pop(name, None)


def gather(fs: pafs.FileSystem, folder: str, gathered: ArchiveRows, names: list[str],
           written: dict[str, pa.Table] | None = None) -> None:
    """Write :data:`GATHERED_NAME` again: its rows but those of ``names``, and the index files of
    ``names`` (those ``written`` just now taken from it, not read back)."""
    replaced = set(names)
    keep = [k for n, k in gathered.at.items() if n not in replaced]
    parts = [gathered.table.take(keep)] if gathered.table is not None and keep else []
    for name in names:
        table = (written or {}).get(name)
        if table is None:
            table = read_index_file(fs, index_path(folder, name))
        if table is not None:
            parts.append(table.select(INDEX_SCHEMA.names).cast(INDEX_SCHEMA))
    if parts:
        write_index_file(fs, f"{folder}/{GATHERED_NAME}", pa.concat_tables(parts))
