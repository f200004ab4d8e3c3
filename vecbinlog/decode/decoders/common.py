"""What every column decoder receives, and the vectorised gathers they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...arrowbuild import binary_like, pooled, validity
from ...errors import MalformedEventError
from ...tables.table_map import ColumnSpec
from .. import rowwalk

__all__ = ["ColumnData", "CountedNote", "gather_fixed", "gather_var", "validity", "binary_like", "DecodeOptions"]


class CountedNote(str):
    """A decoding note (its text) whose counts add up over the batches of a read, so that a
    read warns once per note with the totals. ``template`` is a :meth:`str.format` template of
    ``{name}`` (the column's: never part of the template itself, so any name is safe), ``{n}``
    (how many), ``{of}`` (of how many) and ``{first}`` (an example: the first batch's is kept)."""

    template: str
    name: str
    n: int
    of: int
    first: str

    def __new__(cls, template: str, name: str, n: int, of: int = 0, first: str = "") -> CountedNote:
        note = super().__new__(cls, template.format(name=name, n=n, of=of, first=first))
        note.template, note.name, note.n, note.of, note.first = template, name, n, of, first
        return note

    def plus(self, other: CountedNote) -> CountedNote:
        """This note with ``other``'s counts added (a later batch's: this one's example kept)."""
        return CountedNote(self.template, self.name, self.n + other.n, self.of + other.of, self.first)


@dataclass(frozen=True)
class DecodeOptions:
    """User choices that change how values are typed (see :func:`vecbinlog.open`)."""

    #: per column name or ``@N``: "signed"/"unsigned" or an Arrow integer type name
    signedness: dict[str, bool] = field(default_factory=dict)
    #: per column name or ``@N``: a MySQL character set name ("utf8mb4", "latin1", "binary"...)
    charsets: dict[str, str] = field(default_factory=dict)
    #: the table's column names, in order, when the user gives them
    names: tuple[str, ...] | None = None
    #: MySQL flavour of the file ("mysql" or "mariadb"), for collation ids that differ
    flavor: str = "mysql"
    #: zero, partly-zero and impossible dates ('0000-00-00', '2020-00-15', '2001-02-29' under
    #: ALLOW_INVALID_DATES), legal in MySQL but not in Arrow:
    #: "null" (default: null in the typed column, with a DecodeWarning that counts them) or
    #: "string" (every temporal column comes back as MySQL's own text, so nothing is lost)
    invalid_dates: str = "null"
    #: text of a transcoded charset (not UTF-8, ascii or binary) comes back as its bytes
    #: (binary), to be transcoded by :func:`vecbinlog.decode.tableplan.concat_batches` once every
    #: batch of the table is there: a read that returns one table (``read_table``) decides
    #: text or bytes per column, not per batch
    deferred_text: bool = False


@dataclass
class ColumnData:
    """One column of a group of row images, located but not yet decoded.

    A fixed-width column comes with its values' bytes (``raw``, as the walk writes them; or
    ``offsets`` to gather them from), a length-prefixed one with ``offsets``/``lengths``,
    absolute positions in ``buf``; where ``valid`` is False (NULL, or absent from the image)
    they are zeros and must not be read.
    """

    spec: ColumnSpec
    name: str
    buf: np.ndarray  #: uint8, the whole file
    offsets: np.ndarray | None  #: int64, shape (n,): where each value starts
    lengths: np.ndarray | None  #: int64, shape (n,): value length (length-prefixed types)
    width: int  #: value length for fixed-width types (0 for length-prefixed ones)
    valid: np.ndarray  #: bool, shape (n,)
    options: DecodeOptions
    warnings: list[str] = field(default_factory=list)  #: notes (a CountedNote adds up over batches)
    path: str | None = None  #: the binlog file, for errors
    #: uint8 (n, width), C-contiguous: the values' bytes (fixed-width types)
    raw: np.ndarray | None = None
    #: where the value of a row is in ``buf`` (for errors), when ``offsets`` does not say
    locate: Callable[[int], int | None] | None = field(default=None, repr=False)
    #: the values concatenated, as :func:`gather_var` gives them, when the batch copied those
    #: of several columns at once (:func:`gather_columns`)
    gathered: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.valid)

    def fixed_bytes(self) -> np.ndarray:
        """The ``width`` bytes of each value (fixed-width types): uint8 (n, width), C-contiguous."""
        if self.raw is None:  # a column given by positions (tests, a value unpacked elsewhere)
            assert self.offsets is not None  # one or the other
            self.raw = gather_fixed(self.buf, self.offsets, self.width)
        return self.raw

    def offset_of(self, row: int) -> int | None:
        """The absolute offset of the value of ``row``."""
        if self.offsets is not None:
            return int(self.offsets[row])
        return self.locate(row) if self.locate is not None else None

    def error(self, message: str, row: int) -> MalformedEventError:
        """An error about the value of ``row``, located at its absolute file offset."""
        return MalformedEventError(
            f"column {self.name!r}: {message}", path=self.path, offset=self.offset_of(row), event_type="rows event"
        )


def gather_fixed(buf: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes at each offset: uint8 array of shape (n, width), C-contiguous.

    The file is viewed as overlapping ``width``-byte records, one starting at every byte
    (``void`` items with a stride of 1, no copy), and the records at ``offsets`` are taken:
    a copy of ``width`` bytes per value with an index of one int64 per value, instead of
    one per byte (2-3x faster for the usual widths)."""
    if width == 0:
        return np.zeros((len(offsets), 0), np.uint8)
    if len(buf) < width:
        return np.take(buf, offsets[:, None] + np.arange(width, dtype=np.int64))
    records = np.ndarray(shape=(len(buf) - width + 1,), dtype=np.dtype((np.void, width)), buffer=buf, strides=(1,))
    return records[offsets].view(np.uint8).reshape(len(offsets), width)  # (np.take would copy records)


def gather_columns(buf: np.ndarray, starts: list[np.ndarray], lengths: list[np.ndarray], valid: list[np.ndarray],
                   ) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """What :func:`gather_var` gives for each of several length-prefixed columns (their values'
    ``starts``, ``lengths`` and ``valid``, in ``buf``), copied row after row in one pass
    (:func:`vecbinlog.decode.rowwalk.copy_columns`: the orders bench file's 8 text columns,
    a column after another 122-139 ms, at once 55-78 ms); the columns' data share one
    buffer. None when a value is not inside ``buf``: each column's own :func:`gather_var`
    then says which, in column order."""
    k, n = len(starts), len(valid[0])
    offsets = np.empty((k, n + 1), np.int64)
    bases = np.zeros(k + 1, np.int64)
    for c in range(k):
        bases[c + 1] = bases[c] + rowwalk.value_offsets(lengths[c], valid[c], 0, offsets[c])
    data = pooled(int(bases[k]))
    valid2 = np.stack(valid)
    column, _ = rowwalk.copy_columns(buf, np.stack(starts), valid2, offsets, bases, data)
    if column >= 0:
        return None
    return [(offsets[c], data[bases[c]:bases[c + 1]]) for c in range(k)]


def gather_var(col: ColumnData, skip: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate the variable-length values of ``col`` (less their first ``skip`` bytes):
    Arrow-style offsets (int64, n+1) and the data bytes (compiled: :func:`vecbinlog.decode.rowwalk.value_offsets`
    and :func:`vecbinlog.decode.rowwalk.copy_values`)."""
    if skip == 0 and col.gathered is not None:
        return col.gathered
    buf, n = col.buf, len(col)
    assert col.offsets is not None  # a column given by positions
    lengths = col.lengths if col.lengths is not None else np.full(n, col.width, np.int64)
    out_offsets = np.empty(n + 1, np.int64)
    data = pooled(rowwalk.value_offsets(lengths, col.valid, skip, out_offsets))
    outside = rowwalk.copy_values(buf, col.offsets, skip, col.valid, out_offsets, data)
    if outside >= 0:  # the row walk checks every value against its event first: a second line of defence
        raise col.error(f"value of {int(lengths[outside]) - skip} bytes at offset {int(col.offsets[outside]) + skip} "
                        f"is not inside the {len(buf)} bytes of the file", outside)
    return out_offsets, data
