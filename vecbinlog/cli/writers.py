"""Output files of the command line: a table's part files (Parquet, Arrow IPC or CSV; a new part
when the schema or an IPC dictionary changes), the writers of every table of a one-pass export
and their files moved into place at its end, and a CSV file as ``cat --format csv`` prints it.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections import OrderedDict, deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa

from ..pools import TaskGroup

from .lines import CsvText
from .parser import ROW_GROUP_ROWS

#: Dictionary columns whose dictionary is made per batch (one entry per transaction or
#: statement of the batch): an Arrow IPC file cannot change a dictionary, so there they are
#: written as plain strings instead of starting a new part file at every batch.
PER_BATCH_DICTIONARIES = ("_gtid", "_query")


def plain_per_batch_dictionaries(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with its :data:`PER_BATCH_DICTIONARIES` columns as plain strings."""
    names = [n for n in PER_BATCH_DICTIONARIES if n in batch.schema.names]
    if not names:
        return batch
    schema = batch.schema
    for n in names:
        i = schema.get_field_index(n)
        schema = schema.set(i, schema.field(i).with_type(schema.field(i).type.value_type))
    return batch.cast(schema)


class PartWriter:
    """The part files of one table: a new part whenever the schema (or, for Arrow IPC files,
    a dictionary) changes."""

    def __init__(self, folder: Path, fmt: str) -> None:
        self.folder = folder
        self.fmt = fmt
        self.parts = 0
        self.rows = 0
        self.writer: Any = None  #: the part's: pyarrow's Parquet or IPC file writer, or a CsvFile
        self.schema: pa.Schema | None = None
        self.dicts: dict[int, pa.Array] = {}
        self.files: list[Path] = []

    def _fits(self, batch: pa.RecordBatch) -> bool:
        if self.writer is None or not batch.schema.equals(self.schema, check_metadata=True):
            return False
        if self.fmt == "arrow":  # the IPC file format cannot replace a dictionary
            for i, d in self.dicts.items():
                if not batch.column(i).dictionary.equals(d):
                    return False
        return True

    def write(self, batch: pa.RecordBatch) -> None:
        if self.fmt == "arrow":
            batch = plain_per_batch_dictionaries(batch)
        if not self._fits(batch):
            self.close()
            self._open(batch)
        if self.fmt == "parquet":
            self.writer.write_batch(batch, row_group_size=ROW_GROUP_ROWS)
        else:
            self.writer.write_batch(batch)
        self.rows += batch.num_rows

    def _open(self, batch: pa.RecordBatch) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        ext = {"parquet": "parquet", "arrow": "arrow", "csv": "csv"}[self.fmt]
        path = self.folder / f"part-{self.parts:05d}.{ext}"
        self.parts += 1
        self.files.append(path)
        self.schema = batch.schema
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            self.writer = pq.ParquetWriter(path, batch.schema, compression="zstd", use_compliant_nested_type=False)
        elif self.fmt == "arrow":
            self.dicts = {i: batch.column(i).dictionary for i, f in enumerate(batch.schema)
                          if pa.types.is_dictionary(f.type)}
            self.writer = pa.ipc.new_file(path, batch.schema, options=pa.ipc.IpcWriteOptions(compression="zstd"))
        else:
            self.writer = CsvFile(path, batch.schema)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class CsvFile:
    """A CSV file as ``cat --format csv`` prints it: a header, then each batch's lines."""

    def __init__(self, path: str | Path, schema: pa.Schema) -> None:
        self.text = CsvText()
        self.fh = open(path, "wb")
        self.fh.write(self.text.header(schema.names))

    def write_batch(self, batch: pa.RecordBatch) -> None:
        self.text.write(batch, self.fh)

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> CsvFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TableWriters:
    """The part writers of every table of a one-pass export. At most ``MAX_OPEN`` are open at
    a time (a binlog may hold thousands of tables): the least recently written is closed, and
    its table's next batch starts a new part file.

    Batches are written on threads of their own (``WRITERS``: pyarrow's writers release the
    GIL), each table's in the order they came, while the next ones are decoded: a Parquet
    export spent 2/3 of its time writing, on the reading thread. At most ``AHEAD`` batches
    wait to be written (memory bounded); an error writing is raised by the next :meth:`write`,
    or by :meth:`close`, which waits for every write (the writes belong to this object's task
    group)."""

    MAX_OPEN = 64
    #: threads writing (tables at once)
    WRITERS = 2
    #: batches handed to the writing threads and not written yet, at most
    AHEAD = 4

    def __init__(self, outdir: Path, fmt: str) -> None:
        self.outdir, self.fmt = outdir, fmt
        self.writers: dict[str, PartWriter] = {}
        self.open: OrderedDict[str, None] = OrderedDict()
        self._tasks = TaskGroup("the export's writes")
        self._pending: deque[Future] = deque()
        self._last: dict[str, Future] = {}  # each table's last write: the next one waits for it
        self._locks: dict[str, threading.Lock] = {}  # a table's writer: its writes and its close
        self._lru = threading.Lock()  # ``open``, ``writers``, ``_locks``

    def write(self, table: str, batch: pa.RecordBatch) -> None:
        """Write ``batch`` of ``table`` (on a writing thread, after that table's batches before it)."""
        while self._pending and (len(self._pending) >= self.AHEAD or self._pending[0].done()):
            self._pending.popleft().result()  # (its error, if it failed)
        future = self._tasks.submit("write", self.WRITERS, self._write, self._last.get(table), table, batch)
        self._last[table] = future
        self._pending.append(future)

    def _write(self, before: Future | None, table: str, batch: pa.RecordBatch) -> None:
        if before is not None:
            before.result()  # (submitted earlier: running or done, never waiting for a thread)
        with self._lru:
            pw = self.writers.get(table)
            if pw is None:
                pw = self.writers[table] = PartWriter(table_folder(self.outdir, table), self.fmt)
                self._locks[table] = threading.Lock()
            self.open[table] = None
            self.open.move_to_end(table)
            oldest = self.open.popitem(last=False)[0] if len(self.open) > self.MAX_OPEN else None
        if oldest is not None:
            with self._locks[oldest]:
                self.writers[oldest].close()
        with self._locks[table]:
            pw.write(batch)

    def done(self, table: str) -> tuple[int, list[Path]]:
        """Rows written and part files of ``table``."""
        pw = self.writers.get(table)
        return (pw.rows, pw.files) if pw is not None else (0, [])

    def close(self) -> None:
        """Wait for the writes (the first error among them raised, after every file is closed)."""
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._tasks.close()
            self._pending.clear()
            self._last.clear()
            for pw in self.writers.values():
                pw.close()


def publish_tables(staging: Path, outdir: Path, tables: Iterable[str], overwrite: bool) -> None:
    """Move the part files of ``tables`` written in ``staging`` (a folder inside ``outdir``, so
    on the same file system) into their folders of ``outdir``; with ``overwrite`` the part
    files a table's folder already has are deleted first (also those of a table with none
    written now). A folder new to ``outdir`` is renamed into place whole."""
    for table in tables:
        src, dest = table_folder(staging, table), table_folder(outdir, table)
        if overwrite:
            for old in dest.glob("part-*"):
                if old.is_file():
                    old.unlink()
        if not src.is_dir():
            continue
        if not dest.exists():
            src.rename(dest)
            continue
        for part in sorted(src.iterdir()):
            part.rename(dest / part.name)


def table_folder(outdir: Path, table: str) -> Path:
    """``OUTDIR/table=db.table``, the name percent-encoded as hive partitioning expects."""
    return outdir / f"table={urllib.parse.quote(table, safe='')}"
