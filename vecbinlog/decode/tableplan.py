"""A table's one schema over all its layouts, and its batches fitted to it.

A binlog holds a table under several layouts when it was ALTERed, or dropped and created
again, within the files read. ``read_table``, ``read_all``, ``read_pandas``, ``snapshot``,
``vecbinlog to-parquet`` and the Spark source give all of its rows in one schema, made by
one rule (:class:`TablePlan`), from the layouts in log order (``_schema_version`` 0, 1, ...):

* **Columns are matched by name.** A column keeps its name across the layouts that have it;
  a row written under a layout without it (added later, dropped before) is null there.
* **Types are widened** when one Arrow type holds every value of both exactly
  (:func:`widen_type`; text whose bytes fell back to binary: :func:`own_bytes_type`).
* **Types that cannot be widened are kept apart.** When a column's type in a layout has no
  exact common type with its type so far (``BIGINT UNSIGNED`` then ``DATE`` after a DROP
  TABLE and CREATE TABLE, ``INT`` then ``BIGINT UNSIGNED``, an ALTER ... MODIFY to text), the
  layouts from that one on hold a *new column* of the same name. The latest such column keeps
  the name; each earlier one is named ``name@V``, V the ``_schema_version`` from which it had
  its type (``a@0``), and is null in the rows of the other layouts, as a renamed column is.
  Nothing is cast: every value keeps a type that holds it.
* Then come the metadata columns, with ``_schema_version`` (which layout) and
  ``_incarnation`` (which table of that name: +1 at every DROP/CREATE/TRUNCATE TABLE, see
  :attr:`vecbinlog.tables.ddl.Catalog.lifetimes`).

Column order: the last layout's columns, in its order, then the columns only earlier layouts
had, latest first. The plan is made from the layouts' declared schemas (before any row is
decoded: the Spark driver, ``to-parquet``), so a table's schema never depends on the row
filters; :meth:`TablePlan.widen` then takes in what a batch's data changed (a text column
whose bytes are not valid in its charset comes back as binary), and a read of whole tables
(:func:`concat_batches`) makes each text column text in all its rows or binary in all its
rows, over all its layouts, first (:meth:`TablePlan.settle_text`).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import binary_parts, strings
from ..errors import DecodeWarning, UnsupportedError, warn
from ..pools import TaskGroup, run_all
from .batch import ABSENT_TYPE, JSON_DIFFS_FIELD, METADATA_FIELDS, QUERY_FIELD
from .decoders.strings import UTF8_CHARSETS, invalid_values, text_array, transcoded

__all__ = ["TablePlan", "concat_batches", "widen_type", "own_bytes_type", "METADATA_NAMES"]

#: Metadata columns, in their order (every other column is a column of the table).
METADATA_ORDER = [f.name for f in METADATA_FIELDS] + [JSON_DIFFS_FIELD.name, QUERY_FIELD.name]
METADATA_NAMES = frozenset(METADATA_ORDER)
_INT_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64,
             pa.uint8(): 8, pa.uint16(): 16, pa.uint32(): 32, pa.uint64(): 64}
#: decimal digits an integer type needs
_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 20}


def widen_type(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """The narrowest Arrow type that holds every value of ``a`` and of ``b`` exactly, or None.

    Integers widen to a wider integer (signed when either is: int64 and uint64 have none);
    integers of up to 16 bits and float32 to float32, up to 32 bits and floats to float64;
    decimals (and integers with decimals) to a decimal with enough integer and fraction
    digits; string/binary to their large forms. Anything else (text and numbers, dates and
    timestamps, ENUM labels and their indexes...) has no exact common type.
    """
    if a == b:
        return a
    if pa.types.is_null(a) or pa.types.is_null(b):
        return b if pa.types.is_null(a) else a
    ints = pa.types.is_integer
    if ints(a) and ints(b):
        sa, sb = pa.types.is_signed_integer(a), pa.types.is_signed_integer(b)
        bits = max(_INT_BITS[a] + (sb and not sa), _INT_BITS[b] + (sa and not sb))
        if sa == sb:
            bits = max(_INT_BITS[a], _INT_BITS[b])
        for width in (8, 16, 32, 64):
            if width >= bits:
                return getattr(pa, f"{'int' if sa or sb else 'uint'}{width}")()
        return None
    if pa.types.is_floating(a) and pa.types.is_floating(b):
        return pa.float64() if pa.float64() in (a, b) else None
    for x, y in ((a, b), (b, a)):
        if ints(x) and pa.types.is_floating(y):
            if _INT_BITS[x] <= 16 and y == pa.float32():
                return pa.float32()
            return pa.float64() if _INT_BITS[x] <= 32 else None
        if ints(x) and pa.types.is_decimal(y):
            return _decimal(_INT_DIGITS[_INT_BITS[x]], 0, y.precision - y.scale, y.scale)
    if pa.types.is_decimal(a) and pa.types.is_decimal(b):
        return _decimal(a.precision - a.scale, a.scale, b.precision - b.scale, b.scale)
    for small, large in ((pa.string(), pa.large_string()), (pa.binary(), pa.large_binary())):
        if {a, b} == {small, large}:
            return large
    return None


#: charsets whose text is returned as the column's own bytes (checked, not transcoded)
_OWN_BYTES_CHARSETS = frozenset(cs.encode() for cs in UTF8_CHARSETS | {"ascii"})


def own_bytes_type(a: pa.Field, b: pa.Field) -> pa.DataType | None:
    """binary (or large_binary) for string and binary batches of one UTF-8 or ascii column.

    A text batch holding bytes that are not valid in its charset comes back as binary, bytes
    unchanged (decoders/strings.py); the column's other batches are strings whose bytes are
    the column's own bytes too, so binary holds every value of both exactly, and the column
    reads the same whether its rows came in one batch or in several (``segment_bytes`` and
    ``batch_rows`` only bound memory). Text transcoded from another charset has lost its
    bytes: None there."""
    types = {a.type, b.type}
    if not types <= {pa.string(), pa.large_string(), pa.binary(), pa.large_binary()}:
        return None
    if not (types & {pa.string(), pa.large_string()} and types & {pa.binary(), pa.large_binary()}):
        return None
    if any((f.metadata or {}).get(b"mysql_charset") not in _OWN_BYTES_CHARSETS for f in (a, b)):
        return None
    return pa.large_binary() if types & {pa.large_string(), pa.large_binary()} else pa.binary()


def _decimal(int_a: int, scale_a: int, int_b: int, scale_b: int) -> pa.DataType | None:
    scale = max(scale_a, scale_b)
    precision = max(int_a, int_b) + scale
    if precision <= 38:
        return pa.decimal128(precision, scale)
    return pa.decimal256(precision, scale) if precision <= 76 else None


@dataclass
class _Column:
    """A column of the plan: one name and the layouts whose types widen together."""

    name: str  #: its name in the layouts
    since: int  #: the _schema_version from which it has this type
    field: pa.Field  #: its Arrow field, widened over the layouts (the latest one's metadata)


@dataclass
class TablePlan:
    """The columns of one table over its layouts, and how each batch maps to them.

    :meth:`add` each layout (``_schema_version`` and declared schema) in log order, then
    :meth:`conform` batches to :attr:`schema`. See the module docstring for the rule.
    """

    table: str
    _columns: list[_Column] = field(default_factory=list)
    _latest: dict[str, int] = field(default_factory=dict)  #: name -> its latest column
    _layouts: dict[int, list[int]] = field(default_factory=dict)  #: version -> column of each data field
    _meta: dict[str, pa.Field] = field(default_factory=dict)
    _metadata: dict | None = None
    _cache: tuple[pa.Schema, list[str]] | None = field(default=None, repr=False)
    _declared: dict[int, pa.Schema] = field(default_factory=dict, repr=False)  #: version -> schema added

    # -- building ----------------------------------------------------------------------
    def add(self, version: int, schema: pa.Schema) -> None:
        """Layout ``version`` (its declared schema); layouts come in log order. A version
        added again changes nothing (use :meth:`widen` for a batch's own types)."""
        if version in self._layouts:
            return
        self._cache = None
        self._declared[version] = schema
        mine: list[int] = []
        for f in schema:
            if f.name in METADATA_NAMES:
                self._meta.setdefault(f.name, f)
                continue
            k = self._latest.get(f.name)
            wide = None if k is None or k in mine else _common_type(self._columns[k].field, f)
            if k is None or wide is None:  # a new column: the first of its name, or a type that cannot join
                k = len(self._columns)
                self._columns.append(_Column(f.name, version, f if f.nullable else f.with_nullable(True)))
                self._latest[f.name] = k
            else:
                self._columns[k].field = pa.field(f.name, wide, nullable=True, metadata=f.metadata)
            mine.append(k)
        self._layouts[version] = mine
        self._metadata = schema.metadata

    def widen(self, batch: pa.RecordBatch, path: str | None = None) -> None:
        """Take in the types of a batch's data (a text column that fell back to binary):
        each column widened within its own column, never moved to another.

        Raises UnsupportedError when a column's batch holds a type no Arrow type holds with
        the others exactly (a transcoded text column whose bytes were invalid in some batch,
        fitted batch by batch: ``cat``, ``to-parquet``; a read of whole tables settles its
        batches first, :meth:`settle_text`, and never meets it)."""
        if batch.num_rows == 0:
            return
        version = _version(batch)
        if version not in self._layouts:
            self.add(version, batch.schema)
            return
        data = [f for f in batch.schema if f.name not in METADATA_NAMES]
        for f, k in zip(data, self._layouts[version]):
            col = self._columns[k]
            if col.field.type == f.type:
                continue
            wide = _common_type(col.field, f)
            if wide is None:
                raise UnsupportedError(
                    f"{self.table}: column {f.name!r} is {f.type} in rows of _schema_version {version} and "
                    f"{col.field.type} in the table's schema (its layouts and the batches fitted so far), and no "
                    "Arrow type holds both exactly (text transcoded from its charset in some batches, bytes invalid "
                    "in it in others); read_table() and read_all() return such a column as binary in every row, "
                    "iter_batches() each batch as it is, and "
                    f"charsets={{{self.table!r}: {{{f.name!r}: 'binary'}}}} reads it as bytes everywhere",
                    path=path, offset=batch.column("_log_pos")[0].as_py() if batch.num_rows else None,
                    event_type="rows event",
                )
            self._cache = None
            col.field = pa.field(col.field.name, wide, nullable=True, metadata=col.field.metadata)
        for f in batch.schema:
            if f.name in METADATA_NAMES and f.name not in self._meta:
                self._cache = None
                self._meta[f.name] = f

    def settle_text(self, batches: list[pa.RecordBatch], paths: dict[str, str], threads: int = 1,
                    ) -> list[pa.RecordBatch]:
        """The batches of a read of whole tables (text of transcoded charsets came as its bytes,
        :attr:`~vecbinlog.decode.decoders.common.DecodeOptions.deferred_text`), with each text
        column of the plan text in every batch or bytes in every batch, over all its layouts.

        A column is text when every value of it is valid in its charset: its bytes of a
        transcoded charset are transcoded then. Otherwise (a value of a transcoded charset that
        is not valid in it, or UTF-8/ascii text that fell back to its bytes in a batch) it is
        bytes in every batch, this plan's type for it binary: bytes of a transcoded charset as
        they came, UTF-8 or ascii text as its own bytes (a cast: the string's bytes are those
        of the binlog; text of no charset, a layout's JSON or date as text, its UTF-8),
        whatever the layout (``_schema_version``: its charset says what the row's bytes are
        in), with one DecodeWarning when values of a transcoded charset are not valid in it
        (the batch decoder warns of UTF-8 that is not). So the result depends neither on the
        batches nor on which layout's rows are invalid. ``paths``: ``_log_file`` -> the
        file's path, for the warning."""
        where: dict[int, list[tuple[int, int]]] = {}  # column of the plan -> (batch, field) of its text
        for b, batch in enumerate(batches):
            if not batch.num_rows:
                continue
            version = _version(batch)
            if version not in self._layouts:  # a layout the plan was not made with: as declared
                self.add(version, pa.schema([f.with_type(pa.string()) if _deferred(f) else f for f in batch.schema],
                                            metadata=batch.schema.metadata))
            data = [i for i, f in enumerate(batch.schema) if f.name not in METADATA_NAMES]
            for i, k in zip(data, self._layouts[version]):
                f = batch.schema.field(i)
                if _deferred(f) or _fell_back(f) or _is_text(f.type):
                    where.setdefault(k, []).append((b, i))
        out = list(batches)
        columns = []  # (column, its places, their fields, those deferred, whether one fell back)
        for k, places in where.items():
            fields = [out[b].schema.field(i) for b, i in places]
            deferred = [p for p, f in zip(places, fields) if _deferred(f)]
            fell_back = any(map(_fell_back, fields))
            if deferred or fell_back:  # (else text in every batch)
                columns.append((k, places, fields, deferred, fell_back))
        # every batch of every column transcoded (``threads`` at once: the compiled transcoding
        # releases the GIL), then each column text where all its batches are
        calls = [functools.partial(_transcoded, out[b], i) for _, _, _, deferred, fell_back in columns
                 if not fell_back for b, i in deferred]
        if threads > 1 and len(calls) > 1:
            with TaskGroup("the text transcoded") as group:
                transcoded = iter(run_all(group, "columns", threads, calls))
        else:
            transcoded = (call() for call in calls)
        for k, places, fields, deferred, fell_back in columns:
            texts: list[Any] | None = None if fell_back else [next(transcoded) for _ in deferred]
            if texts is not None and any(t is None for t in texts):
                texts = None
            if texts is not None:
                for (b, i), text in zip(deferred, texts):
                    out[b] = out[b].set_column(i, out[b].schema.field(i).with_type(text.type), text)
                continue
            for (b, i), f in zip(places, fields):  # UTF-8 text: its bytes are the binlog's
                if _is_text(f.type):
                    as_bytes = pa.large_binary() if pa.types.is_large_string(f.type) else pa.binary()
                    out[b] = out[b].set_column(i, f.with_type(as_bytes), out[b].column(i).cast(as_bytes))
            self._keep_bytes(k, [out[b].column(i).type for b, i in places])
            if deferred:
                self._warn_invalid(k, [(out[b], i) for b, i in deferred],
                                   [cs for cs in dict.fromkeys(map(_charset, fields)) if cs != "unknown"], paths)
        return out

    def _keep_bytes(self, k: int, types: list[pa.DataType]) -> None:
        """Column ``k`` of the plan holds bytes (its text types become binary ones)."""
        col = self._columns[k]
        large = pa.types.is_large_string(col.field.type) or pa.large_binary() in types
        col.field = col.field.with_type(pa.large_binary() if large else pa.binary())
        self._cache = None

    def _warn_invalid(self, k: int, places: list[tuple[pa.RecordBatch, int]], charsets: list[str],
                      paths: dict[str, str]) -> None:
        """One DecodeWarning for column ``k`` kept as bytes, when values at ``places`` (its
        bytes of transcoded charsets) are not valid in their charset: the column's ``charsets``
        (of all its layouts) and how many values are not valid in which."""
        bad: dict[str, int] = {}
        path = None
        for batch, i in places:
            arr, cs = batch.column(i), _charset(batch.schema.field(i))
            n = invalid_values(*binary_parts(arr), cs)
            bad[cs] = bad.get(cs, 0) + n
            if n and path is None:
                path = paths.get(batch.column("_log_file")[0].as_py(), batch.column("_log_file")[0].as_py())
        if path is None:  # every such value valid: bytes for UTF-8 that was not (the batch decoder said so)
            return
        name = _output_names(self._columns)[k]
        counts = ", ".join(f"{n} value(s) not valid {cs}" for cs, n in bad.items() if n)
        layouts = ", in the charset of its row's layout (_schema_version)" if len(charsets) > 1 else ""
        warn(f"{path}: {self.table}: column {name!r} ({', '.join(charsets)}) holds {counts}: the column is binary in "
             f"every row read, each value's bytes as the binlog holds them{layouts} (bytes.decode() turns the "
             "others into text; charsets= names another charset)", DecodeWarning)

    # -- the result ----------------------------------------------------------------------
    @property
    def versions(self) -> list[int]:
        """The ``_schema_version`` of every layout added, in order."""
        return sorted(self._layouts)

    def layout_schema(self, version: int) -> pa.Schema:
        """The schema layout ``version`` was added with (its own names and types), so that a
        plan of a later stretch of the log can be taken into this one (a stream's)."""
        return self._declared[version]

    @property
    def schema(self) -> pa.Schema:
        """The table's schema: its columns (see the rule), then the metadata columns."""
        return self._made()[0]

    def column_names(self, versions: Iterable[int] | None = None) -> list[str]:
        """The table's own columns (no metadata columns), in schema order; only those of the
        layouts ``versions`` when given."""
        names = self._made()[1]
        keep: range | set[int]
        if versions is None:
            keep = range(len(self._columns))
        else:
            keep = {k for v in versions for k in self._layouts.get(v, ())}
        order = self._order()
        return [names[k] for k in order if k in keep]

    def layout_names(self, version: int) -> list[str]:
        """The plan's names of the columns of layout ``version``, in the layout's order."""
        names = self._made()[1]
        return [names[k] for k in self._layouts[version]]

    def _order(self) -> list[int]:
        """Columns in schema order: the last layout's first, then those only earlier ones had."""
        out: list[int] = []
        for v in sorted(self._layouts, reverse=True):
            out += [k for k in self._layouts[v] if k not in out]
        return out

    def _made(self) -> tuple[pa.Schema, list[str]]:
        if self._cache is None:
            names = _output_names(self._columns)
            fields = [self._columns[k].field.with_name(names[k]) for k in self._order()]
            meta = sorted(self._meta, key=METADATA_ORDER.index)
            self._cache = (pa.schema(fields + [self._meta[n] for n in meta], metadata=self._metadata), names)
        return self._cache

    def conform(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` (of a layout of this plan) in the plan's schema: its columns renamed and
        widened as the rule says, nulls for the columns its layout lacks. Types are cast only
        where the plan widened them (exactly); a type the plan does not hold (a batch whose
        text fell back to binary, when the plan was not :meth:`widen`-ed with it) is cast and
        fails if a value does not fit, never silently."""
        schema, names = self._made()
        if batch.num_rows == 0:
            return pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
        version = _version(batch)
        if version not in self._layouts:
            raise ValueError(f"{self.table}: _schema_version {version} is not a layout of this plan")
        if batch.schema.equals(schema, check_metadata=False):
            return batch
        mine = self._layouts[version]
        data = [i for i, f in enumerate(batch.schema) if f.name not in METADATA_NAMES]
        where = {names[k]: i for k, i in zip(mine, data)}
        renamed = [names[k] for k in mine] != [batch.schema.field(i).name for i in data]
        arrays = []
        for f in schema:
            i = where.get(f.name) if f.name not in METADATA_NAMES else batch.schema.get_field_index(f.name)
            if i is None or i < 0:
                arrays.append(pa.nulls(batch.num_rows, f.type))
                continue
            col = batch.column(i)
            if renamed and f.name == "_absent":
                col = _renamed_absent(col, [names[k] for k in mine])
            elif renamed and f.name == JSON_DIFFS_FIELD.name:
                col = _renamed_diffs(col, [batch.schema.field(i).name for i in data], [names[k] for k in mine])
            if col.type != f.type and _is_bytes(col.type) and not _is_bytes(f.type):
                raise self._bytes_as_text(batch, f.name, batch.schema.field(i))
            arrays.append(col if col.type == f.type else col.cast(f.type, safe=True))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _bytes_as_text(self, batch: pa.RecordBatch, name: str, f: pa.Field) -> UnsupportedError:
        """The error for a batch whose text fell back to bytes where the schema says text: a
        cast would pass off bytes of another charset as UTF-8 (or fail on some), so none is made."""
        cs = _charset(f)
        return UnsupportedError(
            f"{self.table}: column {name!r} ({cs}) holds values whose bytes are not valid {cs}, in rows that the "
            "schema, fixed before any row was decoded (Spark's, a stream's), has as text; read_table() returns such "
            f"a column as binary in every row, and charsets={{{self.table!r}: {{{f.name!r}: 'binary'}}}} reads it as "
            "bytes everywhere", offset=batch.column("_log_pos")[0].as_py(), event_type="rows event")


def concat_batches(batches: list[pa.RecordBatch], plan: TablePlan, paths: dict[str, str], threads: int = 1) -> pa.Table:
    """One table of batches whose layouts may differ (ALTER TABLE, a table created again), in
    the plan's schema, widened first with what the batches' data changed (text that fell back
    to binary). ``paths``: ``_log_file`` -> the file's path, for the errors. Each text column is
    made text in every batch or bytes in every batch first, over all its layouts
    (:meth:`TablePlan.settle_text`, its columns transcoded ``threads`` at once)."""
    batches = plan.settle_text(batches, paths, threads)
    for b in batches:
        plan.widen(b, paths.get(b.column("_log_file")[0].as_py()) if b.num_rows else None)
    return pa.Table.from_batches([plan.conform(b) for b in batches], schema=plan.schema)


def _transcoded(batch: pa.RecordBatch, i: int) -> pa.Array | None:
    """Column ``i`` of ``batch`` (bytes of a transcoded charset) as text, or None when a value is
    not valid in its charset."""
    arr = batch.column(i)
    return text_array(len(arr), *binary_parts(arr), _charset(batch.schema.field(i)))


def _common_type(a: pa.Field, b: pa.Field) -> pa.DataType | None:
    return widen_type(a.type, b.type) or own_bytes_type(a, b)


def _is_bytes(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def _charset(f: pa.Field) -> str:
    """The MySQL charset a text field's metadata names (``unknown`` when none was known)."""
    return (f.metadata or {}).get(b"mysql_charset", b"unknown").decode()


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _fell_back(f: pa.Field) -> bool:
    """Whether ``f`` is UTF-8 or ascii text that came as its bytes (a value not valid in it)."""
    return _is_bytes(f.type) and (f.metadata or {}).get(b"mysql_charset") in _OWN_BYTES_CHARSETS


def _deferred(f: pa.Field) -> bool:
    """Whether ``f`` is text of a transcoded charset that came as its bytes (deferred_text)."""
    return _is_bytes(f.type) and _charset(f) != "unknown" and transcoded(_charset(f))


def _version(batch: pa.RecordBatch) -> int:
    if batch.num_rows == 0:
        return -1
    return batch.column("_schema_version")[0].as_py()


def _output_names(columns: list[_Column]) -> list[str]:
    """The name of each column: the latest column of a name keeps it, earlier ones of the same
    name are ``name@V`` (V: the _schema_version from which they had their type)."""
    latest: dict[str, int] = {}
    for k, c in enumerate(columns):
        latest[c.name] = k
    taken = set(latest)
    out = []
    for k, c in enumerate(columns):
        if latest[c.name] == k:
            out.append(c.name)
            continue
        name = f"{c.name}@{c.since}"
        while name in taken:  # a column really named so
            name += f"@{c.since}"
        taken.add(name)
        out.append(name)
    return out


def _renamed_absent(col: pa.Array, names: list[str]) -> pa.Array:
    """``_absent`` whose codes name a layout's columns, with the plan's names for them."""
    values = col.values
    renamed = pa.DictionaryArray.from_arrays(values.indices, strings(names))
    return pa.ListArray.from_arrays(col.offsets, renamed, type=ABSENT_TYPE)


def _renamed_diffs(col: pa.Array, old: list[str], new: list[str]) -> pa.Array:
    """``_json_diffs`` with the plan's names of the layout's columns in ``column``."""
    items = col.values
    which = pc.index_in(items.field("column"), value_set=strings(old))
    column = strings(new).take(which)
    fields = [items.type.field(i) for i in range(items.type.num_fields)]
    children = [column if f.name == "column" else items.field(f.name) for f in fields]
    return pa.ListArray.from_arrays(col.offsets, pa.StructArray.from_arrays(children, fields=fields), type=col.type)

