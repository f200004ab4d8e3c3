"""Column names, signedness, charsets and labels for binlogs that do not carry them.

Where each piece of a column's description comes from, first that knows wins:

1. the user's explicit ``names=`` / ``signedness=`` / ``charsets=`` options of ``open()``;
2. the binlog's own TABLE_MAP optional metadata (``binlog_row_metadata=FULL``; MySQL's
   ``MINIMAL`` has signedness and charsets);
3. the table's definition as the DDL in the log left it at that row (:mod:`vecbinlog.tables.ddl`,
   replayed by :class:`SchemaTracker` while the files are walked);
4. the user's ``schema=`` (a ``mysqldump --no-data`` file, CREATE TABLE text, or a dict);
5. defaults: ``@1, @2...`` names, signed integers, text as binary, ENUM/SET as numbers.

A definition (3 or 4) is used for a TABLE_MAP only when it has the same number of columns
and compatible types; otherwise a :class:`~vecbinlog.errors.SchemaWarning` says why and the
next source is tried. The TABLE_MAP's types always decide how the bytes are read: a
definition only names and qualifies the columns (it fills the :class:`ColumnSpec` fields the
binlog left empty).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ..binlog.events import query_at, query_bounds
from ..binlog.headers import EventIndex
from ..binlog.eventsource import event_path
from ..collations import collation_id
from ..constants import ColumnType as T
from ..constants import EventType
from ..errors import SchemaWarning, warn
from .table_map import ColumnSpec, TableMap
from .types import CHARSET_TYPES, ENUM_SET_TYPES, LOGGED_AS, NUMERIC_TYPES

if TYPE_CHECKING:  # the DDL modules are imported by the first statement that needs them (ddl/__init__.py)
    from .ddl import Catalog, ColumnInfo, TableDef

__all__ = ["SchemaSource", "SchemaTracker", "load_schema", "apply_definition", "logged_columns"]

#: What ``schema=`` accepts: a path, SQL text, or ``{"db.table": columns}``.
SchemaSource = str | os.PathLike[str] | Mapping[str, Any]

#: utf8mb4_general_ci: the collation of ENUM/SET labels taken from DDL text (kept as UTF-8).
_UTF8MB4 = 45

#: Statements that may change a table's columns, or empty it without logging rows (checked on
#: the first bytes, case-insensitively).
_DDL_PREFIXES = (b"CREATE", b"ALTER", b"RENAME", b"DROP", b"TRUNCATE")
_PEEK = 48
#: comments before a DDL statement, and its verb (read in the first bytes of the statement)
_AFTER_COMMENTS = re.compile(rb"\s*(?:(?:/\*.*?\*/|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$))\s*)+"
                             rb"(?:CREATE|ALTER|RENAME|DROP|TRUNCATE)\b", re.IGNORECASE | re.DOTALL)
_COMMENTED_PEEK = 4096
_SPACE = np.zeros(256, bool)
_SPACE[[0x20, 0x09, 0x0A, 0x0D]] = True


# -- user schemas ------------------------------------------------------------------------
def load_schema(source: SchemaSource | None) -> dict[str, TableDef]:
    """``schema=`` as ``{"db.table" or "table": TableDef}``.

    * a path to a file, or a string holding SQL: CREATE DATABASE / USE / CREATE TABLE
      statements, as ``mysqldump --no-data`` writes them (other statements are skipped);
      tables whose database the text does not say are keyed by their bare name and apply
      to a table of that name in any database;
    * a dict ``{"db.table": [column, ...]}`` or ``{"db.table": {"columns": [...],
      "primary_key": ["id"]}}``, where a column is a name or a dict with ``name`` and any of
      ``type`` (SQL type name, checked against the TABLE_MAP), ``unsigned``, ``charset``,
      ``collation``, ``enum``, ``set`` (lists of labels).
    """
    if source is None:
        return {}
    if isinstance(source, Mapping):
        return {name: _table_from_dict(name, spec) for name, spec in source.items()}
    from .ddl import Catalog

    text = os.fspath(source)
    if isinstance(source, os.PathLike) or (len(text) < 4096 and "\n" not in text and os.path.exists(text)):
        with open(text, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    catalog = Catalog()
    problems = catalog.apply_script(text)
    for problem in problems:
        warn(f"schema=: statement not used: {problem}", SchemaWarning)
    return dict(catalog.tables)


def _table_from_dict(name: str, spec: Any) -> TableDef:
    from .ddl import ColumnInfo, TableDef, split_name
    from .ddl.columns import TYPE_WORDS

    db, table = split_name(name)
    pk = None
    if isinstance(spec, Mapping):
        pk = tuple(spec["primary_key"]) if spec.get("primary_key") else None
        spec = spec.get("columns", ())
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence):
        raise ValueError(f"schema=: {name!r} must map to a list of columns, not {type(spec).__name__}")
    columns = []
    for c in spec:
        if isinstance(c, str):
            columns.append(ColumnInfo(c))
            continue
        if not isinstance(c, Mapping) or "name" not in c:
            raise ValueError(f"schema=: a column of {name!r} must be a name or a dict with 'name', not {c!r}")
        unknown = set(c) - {"name", "type", "unsigned", "charset", "collation", "enum", "set"}
        if unknown:
            raise ValueError(f"schema=: column {c['name']!r} of {name!r}: unknown keys {sorted(unknown)}")
        typ = str(c["type"]).upper().split("(")[0].strip() if c.get("type") else None
        if typ is not None and typ.endswith(" UNSIGNED"):
            typ = typ[: -len(" UNSIGNED")]
        typ = TYPE_WORDS.get(typ, typ) if typ is not None else None  # INTEGER is INT...
        columns.append(ColumnInfo(
            name=str(c["name"]), type=typ, unsigned=c.get("unsigned"), charset=c.get("charset"),
            collation=c.get("collation"),
            enum_values=tuple(c["enum"]) if c.get("enum") is not None else None,
            set_values=tuple(c["set"]) if c.get("set") is not None else None,
        ))
    return TableDef(db, table, tuple(columns), pk)


# -- a definition applied to a TABLE_MAP -------------------------------------------------
#: The server's type names that the type registry knows by another name.
_REGISTRY_NAME = {
    **{g: "GEOMETRY" for g in ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON",
                               "GEOMETRYCOLLECTION", "GEOMCOLLECTION")},
    "INET4": "INET", "INET6": "INET",
}


def logged_columns(table_map: TableMap, d: TableDef) -> TableDef:
    """``d`` with the columns its server logs: MySQL's hidden columns of functional key parts
    are in the row images of 8.0.13-8.0.17 only, so they are kept when the TABLE_MAP has as
    many columns as ``d``, else left out."""
    if len(d.columns) == len(table_map.columns) or not any(c.hidden for c in d.columns):
        return d
    return replace(d, columns=tuple(c for c in d.columns if not c.hidden))


def mismatch(table_map: TableMap, d: TableDef) -> str | None:
    """Why ``d`` does not describe ``table_map`` (column count, or a column's type), or None."""
    if len(d.columns) != len(table_map.columns):
        return f"it has {len(d.columns)} columns, the TABLE_MAP {len(table_map.columns)}"
    for spec, info in zip(table_map.columns, d.columns):
        allowed = LOGGED_AS.get(_REGISTRY_NAME.get(info.type or "", info.type or ""))
        if info.type == "LONGTEXT" and allowed is not None:  # a JSON column through CREATE ... SELECT:
            allowed = allowed | LOGGED_AS["JSON"]  # MariaDB's is a LONGTEXT, MySQL's stays JSON
        if allowed is not None and spec.real_type not in allowed:
            return f"column {spec.index + 1} ({info.name!r}) is {info.type} there, {spec.type_name} in the TABLE_MAP"
    return None


def apply_definition(table_map: TableMap, d: TableDef, flavor: str, problems: list[str] | None = None) -> TableMap:
    """``table_map`` with the fields the binlog left empty filled from ``d`` (which must match).
    What of ``d`` is not used (labels that do not fit) is said in ``problems``."""
    problems = [] if problems is None else problems
    cols = [_fill(spec, info, flavor, problems) for spec, info in zip(table_map.columns, d.columns)]
    pk = table_map.primary_key
    prefixes = table_map.primary_key_prefixes
    if pk is None and d.primary_key:
        where = [d.index_of(k) for k in d.primary_key]
        if all(w is not None for w in where):
            pk, prefixes = tuple(w for w in where if w is not None), tuple(0 for _ in where)
    if pk == table_map.primary_key and all(c is spec for c, spec in zip(cols, table_map.columns)):
        return table_map  # nothing filled (FULL metadata): the same layout, so what is kept per layout holds
    return replace(table_map, columns=tuple(cols), primary_key=pk, primary_key_prefixes=prefixes)


def _pack_length(real_type: int, members: int) -> int:
    """Bytes of an ENUM/SET value of that many members (get_enum_pack_length and
    get_set_pack_length in sql/field.h)."""
    if real_type == T.MYSQL_TYPE_ENUM:
        return 1 if members < 256 else 2
    return 8 if (members + 7) // 8 > 4 else (members + 7) // 8


def _fill(spec: ColumnSpec, info: ColumnInfo, flavor: str, problems: list[str]) -> ColumnSpec:
    changes: dict[str, Any] = {}
    if spec.name is None:
        changes["name"] = info.name
    real = spec.real_type
    if spec.unsigned is None and real in NUMERIC_TYPES and info.unsigned is not None:
        changes["unsigned"] = bool(info.unsigned)
    if real in ENUM_SET_TYPES:
        labels = info.enum_values if real == T.MYSQL_TYPE_ENUM else info.set_values
        key = "enum_values" if real == T.MYSQL_TYPE_ENUM else "set_values"
        width = spec.storage()[1]
        if getattr(spec, key) is None and labels is not None and _pack_length(real, len(labels)) != width:
            # the TABLE_MAP decides how the bytes are read: labels that cannot be the column's are not used
            problems.append(f"column {spec.index + 1} ({info.name!r}) has {len(labels)} {spec.type_name} members "
                            f"there, which the TABLE_MAP's {width}-byte values cannot be; its numbers are kept")
        elif getattr(spec, key) is None and labels is not None:
            # The labels are text from the statement: kept as UTF-8, with a UTF-8 collation
            # (which, for ENUM/SET, only says how the labels are decoded).
            changes[key] = tuple(v.encode("utf-8") for v in labels)
            changes["collation"] = _UTF8MB4
    elif spec.collation is None and spec.type in CHARSET_TYPES:
        cid = collation_id(info.collation, info.charset, flavor)
        if cid is not None:
            changes["collation"] = cid
    return replace(spec, **changes) if changes else spec


# -- DDL in the log ----------------------------------------------------------------------
#: effective layouts kept worked out, for every tracker of the process (then it starts over:
#: bounded memory); see :meth:`SchemaTracker.resolve`
RESOLVED_KEPT = 4096
#: (layout id, definition, user definition, flavor) -> (layout, its effective layout, the warnings
#: its working out gave: (key, message after the place))
_RESOLVED: dict[tuple, tuple[TableMap, TableMap, list[tuple[tuple, str]]]] = {}

#: the DDL state after a statement: ((file path, offset of the statement), the catalog then)
DdlState = tuple[tuple[str, int], "Catalog"]


def needs_definition(table_map: TableMap) -> bool:
    """Whether a definition could fill anything of ``table_map`` (:func:`apply_definition`):
    a column without its name, a number without its signedness, an ENUM/SET without its
    labels, text without its collation. A TABLE_MAP that names its columns was written with
    ``binlog_row_metadata=FULL``, which also gives the primary key whenever the table has one:
    so no primary key there is the server's word, not a gap. Such a TABLE_MAP is used as it
    is, and its table's DDL need not be replayed for it."""
    return any(_missing(spec) for spec in table_map.columns)


def _missing(spec: ColumnSpec) -> bool:
    """Whether ``spec`` lacks a field that :func:`_fill` takes from a definition."""
    real = spec.real_type
    if spec.name is None or (spec.unsigned is None and real in NUMERIC_TYPES):
        return True
    if real in ENUM_SET_TYPES:
        return (spec.enum_values if real == T.MYSQL_TYPE_ENUM else spec.set_values) is None
    return spec.collation is None and spec.type in CHARSET_TYPES


@dataclass(frozen=True)
class _Statement:
    """A DDL statement of the log, as read when the walk met it (its event's bytes may be let go
    of before it is replayed): its text, default database and error code, where it is (for
    warnings), and the generation it starts."""

    sql: str
    database: str | None
    error_code: int
    where: str
    generation: int


class SchemaTracker:
    """Replays the DDL of a walk over the files, in log order, and answers "what was table
    ``db.t`` like at that event" for the rows events.

    The state is a *generation*: it goes up by one at every DDL statement met (at every one
    replayed that changed a table, through :meth:`replay_statement`). Each table keeps the
    list of its definitions with the generation each started at, and, apart, of its lifetime
    count (:attr:`vecbinlog.tables.ddl.Catalog.lifetimes`), so a rows event needs only its
    generation (from a searchsorted over the segment's DDL events).

    A statement is replayed whole (its columns read, sqlglot imported) only when something
    needs it: a rows event whose TABLE_MAP lacks what a definition gives (:func:`needs_definition`:
    a log without ``binlog_row_metadata=FULL``), or the DDL state (:meth:`state`,
    :attr:`catalog`, ``scan(states=True)``: splits, the archive index, ``Binlog.history()``).
    Until then the walk reads of each statement only what it does to the names of tables
    (:meth:`~vecbinlog.tables.ddl.Catalog.apply_names`, without sqlglot): the lifetimes, which
    every rows event needs for its ``_incarnation``. A statement of which that is not enough is
    replayed whole when met, after those before it; the statements are replayed in log order,
    all of them (a statement may read another table: ``CREATE TABLE ... LIKE``, ``... SELECT``,
    a database's default charset). What a statement does to the lifetimes is the same either
    way (tests/tables/test_ddl_names.py checks the two against each other on the corpus).
    """

    def __init__(
        self, user: Mapping[str, TableDef] | None = None, *, track: bool = True, catalog: Catalog | None = None,
        wanted: Callable[[str], bool] | None = None,
    ) -> None:
        self.user = dict(user or {})
        self.track = track
        #: the tables asked for (open()'s tables=): DDL about others that is not understood
        #: is passed over without a warning (the table is still forgotten)
        self.wanted = wanted
        #: the statements replayed whole; None: none yet (the DDL modules are not imported)
        self._catalog: Catalog | None = catalog.copy() if catalog is not None else None
        #: the catalog of names (apply_names) ahead of ``_catalog`` while statements are
        #: pending; None: the same as ``_catalog`` (copied from it when next needed)
        self._names: Catalog | None = None
        self._pending: list[_Statement] = []  #: met, not replayed yet (in log order)
        self.generation = 0
        # a catalog given (the DDL state where a split starts): its tables as of generation 0
        start = {name: [(0, catalog.tables.get(name), catalog.lifetimes.get(name, 0))]
                 for name in {**catalog.tables, **catalog.lifetimes}} if catalog is not None else {}
        #: name -> [(generation, definition, lifetime)] of the statements replayed
        self.history: dict[str, list[tuple[int, TableDef | None, int]]] = start
        #: name -> [(generation, lifetime)] of every statement met (replayed or not)
        self.lives: dict[str, list[tuple[int, int]]] = {name: [(0, h[0][2])] for name, h in start.items()}
        self._warned: set[tuple] = set()

    @property
    def catalog(self) -> Catalog:
        """The DDL state after every statement met (each replayed whole)."""
        self._catch_up()
        return self._replayed()

    def _replayed(self) -> Catalog:
        """The catalog of the statements replayed whole (made at the first)."""
        if self._catalog is None:
            from .ddl import Catalog

            self._catalog = Catalog()
        return self._catalog

    def state(self) -> Catalog:
        """A copy of the DDL state now (what :func:`vecbinlog.splits.plan_splits` gives each split)."""
        return self.catalog.copy()

    def scan(self, src: Any, index: EventIndex, states: bool = False) -> tuple[np.ndarray, list[DdlState]]:
        """Meet the DDL statements of one segment (in order). Returns, for every event of
        ``index``, the generation it sees (int64), and with ``states`` the DDL state after
        each statement that changed one (what a range starting after it must be given; the
        statements are then replayed whole as they are met)."""
        gen = np.full(len(index), self.generation, np.int64)
        after: list[DdlState] = []
        if not self.track:
            return gen, after
        cand = ddl_candidates(src, index)
        if len(cand) == 0:
            return gen, after
        if states:
            self._catch_up()
        for i in cand.tolist():
            q = query_at(src, index, i)
            self.generation += 1
            st = _Statement(q.query.decode("utf-8", "replace"), q.database or None, q.error_code,
                            f"{event_path(src, i)}: offset {int(index.pos[i])}", self.generation)
            if not states:
                self._meet(st)
                continue
            databases = dict(self._replayed().databases)
            if self._replay(st, lives=True) or self._replayed().databases != databases:
                # (a database's default charset changes no table, but tables created later see it)
                after.append(((event_path(src, i), int(index.pos[i])), self.state()))
        # an event after the k-th statement sees generation base + k
        gen += np.searchsorted(cand, np.arange(len(index)), side="left")
        return gen, after

    def replay_statement(self, sql: str, database: str | None, error_code: int, where: str) -> bool:
        """Replay one DDL statement whole (a QUERY_EVENT's text, default database and error
        code; ``where``: its file and offset, for warnings), as the archive index's planning
        does for those it kept; True when it changed a table (the generation then went up)."""
        self._catch_up()
        return self._replay(_Statement(sql, database or None, error_code, where, self.generation + 1), lives=True)

    def meet_statement(self, sql: str, database: str | None, error_code: int, where: str) -> None:
        """Meet one DDL statement (as :meth:`replay_statement` takes it), as :meth:`scan` meets
        those of a segment: it starts a generation; what it does to the names of tables is
        replayed now, the rest when something needs it (see the class docstring)."""
        self.generation += 1
        self._meet(_Statement(sql, database or None, error_code, where, self.generation))

    def _meet(self, st: _Statement) -> None:
        """A statement met by the walk: its names replayed now, the rest when needed; replayed
        whole now when its names alone do not tell its lifetimes."""
        if st.error_code == 0:
            if self._names is None:
                self._names = self._replayed().copy()
            changed = self._names.apply_names(st.sql, st.database)
            if changed is not None:
                self._pending.append(st)
                self._note_lives(st.generation, changed, self._names)
                return
        self._catch_up()
        self._replay(st, lives=True)

    def _catch_up(self, generation: int | None = None) -> None:
        """Replay whole the statements pending up to ``generation`` (all of them: None)."""
        k = 0
        while k < len(self._pending) and (generation is None or self._pending[k].generation <= generation):
            self._replay(self._pending[k], lives=False)
            k += 1
        del self._pending[:k]
        if not self._pending:
            self._names = None

    def _replay(self, st: _Statement, lives: bool) -> bool:
        """Replay ``st`` whole on the catalog, as of its generation (``lives``: its lifetimes
        noted too; else they were when it was met); True when it changed a table."""
        from .ddl import DdlError

        catalog = self._replayed()
        try:
            if st.error_code:  # failed on the server, logged for what it did first (CREATE OR REPLACE's drop)
                changed = catalog.apply_failed(st.sql, st.database)
            else:
                changed, _ = catalog.apply(st.sql, st.database)
        except DdlError as exc:
            changed = [exc.table] if exc.table else []
            for name in changed:
                catalog.tables.pop(name, None)
            what = f"{exc.table} is no longer tracked from here on" if exc.table else "no table could be told from it"
            if exc.table is None or self.wanted is None or self.wanted(exc.table):
                warn(
                    f"{st.where}: QUERY_EVENT: DDL not understood ({exc}): "
                    f"{st.sql[:120]!r}; {what} (the binlog's metadata, schema= or @N names are used)",
                    SchemaWarning,
                )
        for note in catalog.notes:
            warn(f"{st.where}: QUERY_EVENT: {note} (in {st.sql[:120]!r})",
                 SchemaWarning)
        if not changed:
            return False
        self.generation = max(self.generation, st.generation)
        for name in dict.fromkeys(changed):
            self.history.setdefault(name, []).append(
                (st.generation, catalog.tables.get(name), catalog.lifetimes.get(name, 0)))
        if lives:
            self._note_lives(st.generation, changed, catalog)
        return True

    def _note_lives(self, generation: int, changed: list[str], catalog: Catalog) -> None:
        for name in dict.fromkeys(changed):
            self.lives.setdefault(name, []).append((generation, catalog.lifetimes.get(name, 0)))

    def tracked(self, name: str, generation: int, definition: bool = True) -> tuple[int, TableDef | None, int]:
        """(version id, definition, lifetime) of table ``name`` as of ``generation``;
        (-1, None, 0) when no DDL in the log has named it yet. The lifetime counts the
        statements that dropped, created or emptied a table of that name before. Without
        ``definition`` (the TABLE_MAP has all a definition gives: :func:`needs_definition`),
        no statement is replayed for it: the definition is None, the version id counts the
        statements that changed its lifetime."""
        if not definition:
            lives = self.lives.get(name) or self._folded(self.lives, name)
            k = _at(lives, generation)
            return (k, None, lives[k][1]) if lives is not None and k >= 0 else (-1, None, 0)
        self._catch_up(generation)
        hist = self.history.get(name) or self._folded(self.history, name)
        k = _at(hist, generation)
        return (k, hist[k][1], hist[k][2]) if hist is not None and k >= 0 else (-1, None, 0)

    def _folded(self, named: Mapping[str, list], name: str) -> list | None:
        """The entry of ``named`` of the one table whose DDL spells ``name`` in other case, when
        the TABLE_MAP's name is in lower case: a server with ``lower_case_table_names`` 1 logs
        ``CREATE TABLE MySqlCdc`` as written and its rows under ``mysqlcdc``. (The names are
        those of every statement met, replayed or not, as when each is replayed as met.)"""
        if name != name.lower() or not self.lives:
            return None
        same = [k for k in self.lives if k.lower() == name]
        return named.get(same[0]) if len(same) == 1 else None

    def resolve(self, table_map: TableMap, definition: TableDef | None, flavor: str, where: str) -> TableMap:
        """The TABLE_MAP with what the DDL (else the user schema) says filled in: worked out
        once per layout and definition in the process (the files of an archive share their
        layouts, and every read of them its definitions, equal if not the same objects), and
        the same object each time: what is kept per layout object (its Arrow schema, its
        column plan) holds across reads. Its warnings are given again to each tracker."""
        user = self.user.get(table_map.name) or self.user.get(table_map.table)
        key = (id(table_map), definition, user, flavor)
        kept = _RESOLVED.get(key)
        if kept is None or kept[0] is not table_map:  # (the layout held: its id is its own)
            notes: list[tuple[tuple, str]] = []
            kept = (table_map, self._resolve(table_map, definition, user, flavor, notes), notes)
            if len(_RESOLVED) >= RESOLVED_KEPT:
                _RESOLVED.clear()  # (atomic: safe with reads on other threads)
            _RESOLVED[key] = kept
        for note_key, message in kept[2]:
            self._warn_once(note_key, f"{where}: {message}")
        return kept[1]

    @staticmethod
    def _resolve(table_map: TableMap, definition: TableDef | None, user: TableDef | None, flavor: str,
                 notes: list[tuple[tuple, str]]) -> TableMap:
        for source, d in (("the DDL in the log", definition), ("schema=", user)):
            if d is None:
                continue
            d = logged_columns(table_map, d)
            problem = mismatch(table_map, d)
            if problem is None:
                unused: list[str] = []
                resolved = apply_definition(table_map, d, flavor, unused)
                for note in unused:
                    notes.append(((source, table_map, d, note), f"{table_map.name}: the definition from {source}: {note}"))
                return resolved
            notes.append((
                (source, table_map, d),
                f"{table_map.name}: the definition from {source} does not match the TABLE_MAP "
                f"({problem}); it is not used for these rows",
            ))
        return table_map

    def _warn_once(self, key: tuple, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warn(message, SchemaWarning)


def _at(entries: list | None, generation: int) -> int:
    """The index of the last of ``entries`` (generation first, in order) as of ``generation``, or -1."""
    if not entries:
        return -1
    return int(np.searchsorted(np.array([e[0] for e in entries]), generation, side="right")) - 1


def ddl_candidates(src: Any, index: EventIndex) -> np.ndarray:
    """Indices of the QUERY events whose statement starts (after spaces, and comments) with
    CREATE, ALTER, RENAME, DROP or TRUNCATE: a vectorised peek at their first bytes, so that
    only those are parsed."""
    q = np.flatnonzero(index.type_code == EventType.QUERY_EVENT)
    if len(q) == 0:
        return q
    start, end = query_bounds(src, index, q, lenient=True)
    k = np.arange(_PEEK)
    inside = k < (end - start)[:, None]
    peek = np.where(inside, np.take(src.buf, np.minimum(start[:, None] + k, len(src.buf) - 1)), 0).astype(np.uint8)
    lead = np.argmax(~_SPACE[peek], axis=1)  # first byte that is not a space
    width = max(len(p) for p in _DDL_PREFIXES)
    cols = np.minimum(lead[:, None] + np.arange(width), _PEEK - 1)
    word = np.take_along_axis(peek, cols, axis=1)
    word = np.where((word >= 0x61) & (word <= 0x7A), word - 0x20, word)  # ASCII upper case
    hit = np.zeros(len(q), bool)
    for p in _DDL_PREFIXES:
        hit |= (word[:, : len(p)] == np.frombuffer(p, np.uint8)).all(axis=1)
    # a statement written after a comment (``/* ApplicationName=DBeaver */ CREATE TABLE ...``,
    # kept in the log as the client sent it): the few that start with one are read in Python
    commented = (word[:, 0] == ord("#")) | ((word[:, 0] == ord("/")) & (word[:, 1] == ord("*"))) | (
        (word[:, 0] == ord("-")) & (word[:, 1] == ord("-")))
    for j in np.flatnonzero(commented).tolist():
        head = bytes(src.buf[int(start[j]): min(int(end[j]), int(start[j]) + _COMMENTED_PEEK)])
        hit[j] = _AFTER_COMMENTS.match(head) is not None
    return q[hit]
