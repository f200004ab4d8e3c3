"""A table's definition, the DDL statements that change it, and how an ALTER TABLE rebuilds
its column list.

The readers of DDL text (:mod:`.tree`: sqlglot's tree; :mod:`.scan`: a tolerant
reading of the tokens) turn a statement into one of the statement classes here
(:class:`CreateTable`, :class:`AlterTable`, :class:`DropTables`...), whose column
definitions are :class:`~.columndef.ColumnDecl`; :class:`vecbinlog.tables.ddl.Catalog`
applies them. So what a statement does is written once, whichever reader read it.

:func:`alter_columns` builds the column list the way the server does
(``mysql_prepare_alter_table`` in sql/sql_table.cc, MariaDB and MySQL alike): the table's
columns in order, less the dropped ones, each changed one replaced where it stands; then,
in the statement's order, the added columns at the end and every column given FIRST or
AFTER moved there (AFTER names a column of the new list). MariaDB keeps its implicit
``row_start``/``row_end`` last: a column added without FIRST/AFTER goes before them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .columns import (
    ColumnDecl,
    ColumnInfo,
    DdlError,
    charset_name,
    charset_of_collation,
    column_info,
    convert_column,
    functional_column,
    versioning_columns,
)

__all__ = [
    "Action",
    "AddColumn",
    "AlterTable",
    "ChangeColumn",
    "CreateTable",
    "DatabaseDef",
    "DropColumn",
    "DropTables",
    "FunctionalIndex",
    "IndexChange",
    "Name",
    "PrimaryKey",
    "RenameColumn",
    "RenameTables",
    "RenameTo",
    "SelectItem",
    "SelectList",
    "Statement",
    "TableCharset",
    "TableDef",
    "TruncateTables",
    "UseDatabase",
    "Versioning",
    "Visibility",
    "alter_table",
    "select_columns",
    "split_name",
    "table_key",
    "versioned_key",
]

#: (database, table); the database None: the statement's default database was not known
Name = tuple[str | None, str]


@dataclass(frozen=True)
class TableDef:
    """A table as of some point: its columns in order, primary key, default charset."""

    database: str | None  #: None: a table of a user schema that did not name its database
    table: str
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...] | None = None
    charset: str | None = None  #: the table's default, for columns added later
    collation: str | None = None

    @property
    def name(self) -> str:
        return self.table if self.database is None else f"{self.database}.{self.table}"

    def index_of(self, column: str) -> int | None:
        """Position of ``column`` (column names are case-insensitive in MySQL), or None."""
        low = column.lower()
        return next((i for i, c in enumerate(self.columns) if c.name.lower() == low), None)


def split_name(name: str) -> tuple[str | None, str]:
    """``"db.table"`` -> ``("db", "table")``; ``"table"`` -> ``(None, "table")``."""
    db, dot, table = name.partition(".")
    return (db, table) if dot else (None, name)


def table_key(name: Name) -> str:
    """``(db, table)`` -> the catalog's key ``"db.table"`` (``"table"`` without a database)."""
    db, table = name
    return table if db is None else f"{db}.{table}"


# -- statements --------------------------------------------------------------------------
@dataclass(frozen=True)
class SelectItem:
    """One item of the select list of a ``CREATE TABLE ... SELECT``."""

    name: str | None  #: the column it makes: its alias, the column's name or the expression's text
    table: str | None = None  #: the table (or alias) of a column reference or of ``t.*``
    column: str | None = None  #: the column referred to; None: an expression
    star: bool = False  #: ``*`` or ``t.*``


@dataclass(frozen=True)
class SelectList:
    """The select list of a ``CREATE TABLE ... SELECT`` and the tables of its FROM clause."""

    items: tuple[SelectItem, ...]
    tables: tuple[tuple[str, Name], ...] = ()  #: (alias or name, table), in FROM order
    problem: str | None = None  #: what of it could not be read


@dataclass(frozen=True)
class FunctionalIndex:
    """An index with functional key parts (MySQL): the parts' numbers; the name None: not given."""

    name: str | None
    parts: tuple[int, ...]


@dataclass(frozen=True)
class CreateTable:
    """``CREATE [OR REPLACE] TABLE``, ``CREATE TABLE ... LIKE / SELECT``, ``CREATE SEQUENCE``."""

    name: Name
    columns: tuple[ColumnDecl, ...] = ()
    primary_key: tuple[str, ...] | None = None
    charset: str | None = None
    collation: str | None = None
    versioned: bool = False  #: WITH SYSTEM VERSIONING (on the table or a column)
    if_not_exists: bool = False
    temporary: bool = False
    like: Name | None = None
    select: SelectList | None = None
    functional: tuple[FunctionalIndex, ...] = ()
    or_replace: bool = False


@dataclass(frozen=True)
class AddColumn:
    decl: ColumnDecl
    first: bool = False
    after: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class ChangeColumn:
    """CHANGE (``old`` renamed to ``decl.name``) or MODIFY (the same name)."""

    old: str
    decl: ColumnDecl
    first: bool = False
    after: str | None = None
    if_exists: bool = False


@dataclass(frozen=True)
class DropColumn:
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class RenameColumn:
    old: str
    new: str


@dataclass(frozen=True)
class PrimaryKey:
    """ADD PRIMARY KEY (columns), or DROP PRIMARY KEY (None)."""

    columns: tuple[str, ...] | None


@dataclass(frozen=True)
class IndexChange:
    """An index added (with functional key parts), dropped or renamed: only functional key
    parts change the columns (MySQL's hidden ones)."""

    name: str | None
    parts: tuple[int, ...] = ()
    drop: bool = False
    new_name: str | None = None


@dataclass(frozen=True)
class TableCharset:
    """``DEFAULT CHARSET=`` / ``COLLATE=`` (the default for columns defined later), or
    ``CONVERT TO CHARACTER SET`` (``convert``: every text column too; charset None: DEFAULT,
    the database's)."""

    charset: str | None
    collation: str | None
    convert: bool = False


@dataclass(frozen=True)
class Versioning:
    """ADD (True) or DROP (False) SYSTEM VERSIONING."""

    on: bool


@dataclass(frozen=True)
class Visibility:
    """MySQL's ``ALTER COLUMN c SET INVISIBLE`` / ``VISIBLE`` (what ``SELECT *`` takes)."""

    column: str
    invisible: bool


@dataclass(frozen=True)
class RenameTo:
    name: Name


Action = (AddColumn | ChangeColumn | DropColumn | RenameColumn | PrimaryKey | IndexChange | TableCharset
          | Versioning | Visibility | RenameTo)


@dataclass(frozen=True)
class AlterTable:
    """``ALTER TABLE`` (or ``ALTER SEQUENCE ... AS``): its actions, in order; none that change
    a column: keys, engine, options, partitions..."""

    name: Name
    actions: tuple[Action, ...] = ()


@dataclass(frozen=True)
class DropTables:
    names: tuple[Name, ...]
    temporary: bool = False


@dataclass(frozen=True)
class TruncateTables:
    names: tuple[Name, ...]


@dataclass(frozen=True)
class RenameTables:
    pairs: tuple[tuple[Name, Name], ...]


@dataclass(frozen=True)
class UseDatabase:
    name: str


@dataclass(frozen=True)
class DatabaseDef:
    """CREATE / ALTER / DROP DATABASE (or SCHEMA); name None: ALTER DATABASE of the default one."""

    verb: str
    name: str | None
    charset: str | None = None
    collation: str | None = None
    if_not_exists: bool = False


Statement = CreateTable | AlterTable | DropTables | TruncateTables | RenameTables | UseDatabase | DatabaseDef


# -- ALTER TABLE -------------------------------------------------------------------------
@dataclass
class _Entry:
    """A column of the list being built, and the CHANGE that made it (to move it later)."""

    info: ColumnInfo
    change: ChangeColumn | None = field(default=None)


def alter_table(d: TableDef, actions: tuple[Action, ...], database_charset: tuple[str | None, str | None],
                notes: list[str]) -> TableDef:
    """``d`` after the actions of one ALTER TABLE (a RENAME TO is the caller's)."""
    charset, collation = d.charset, d.collation
    convert: tuple[str | None, str | None] | None = None
    for a in actions:
        if not isinstance(a, TableCharset):
            continue
        cs, coll = charset_name(a.charset), a.collation
        if cs is None and coll is not None:
            cs = charset_of_collation(coll)
        if a.convert:
            cs, coll = (cs, coll) if cs is not None else database_charset
            convert = (cs, coll)
            if cs is None:
                notes.append(f"CONVERT TO CHARACTER SET DEFAULT of {d.name}: the default of its database (created "
                             "before the log) is not known; its text columns are read as bytes")
                charset = collation = None
        if cs is not None or coll is not None:
            charset, collation = cs or charset, coll if coll else (None if cs else collation)
    columns = alter_columns(d, actions, charset, collation, notes)
    if convert is not None:
        columns = [convert_column(c, *convert) for c in columns]
    for a in actions:
        if isinstance(a, Versioning) and not a.on:
            columns = [c for c in columns if not c.implicit]
        elif isinstance(a, Versioning) and not any(c.generated == "ROW START" for c in columns):
            columns += versioning_columns()
        elif isinstance(a, IndexChange):
            columns = _index_columns(columns, a)
        elif isinstance(a, Visibility):
            columns = [replace(c, invisible=a.invisible) if c.name.lower() == a.column.lower() else c for c in columns]
    return replace(d, columns=tuple(columns), primary_key=versioned_key(columns, _primary_key(d, actions)),
                   charset=charset, collation=collation)


def versioned_key(columns: list[ColumnInfo], pk: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The primary key as MariaDB keeps it: a system-versioned table's has its ROW END column
    last (added with the versioning, gone with it)."""
    if pk is None:
        return None
    names = {c.name.lower() for c in columns}
    pk = tuple(k for k in pk if k.lower() in names) or None
    end = next((c.name for c in columns if c.generated == "ROW END"), None)
    if pk and end is not None and end.lower() not in {k.lower() for k in pk}:
        pk += (end,)
    return pk


def alter_columns(d: TableDef, actions: tuple[Action, ...], charset: str | None, collation: str | None,
                  notes: list[str]) -> list[ColumnInfo]:
    """The column list after the ADD / CHANGE / MODIFY / DROP / RENAME COLUMN actions, built as
    the server builds it (see the module docstring)."""
    have = {c.name.lower() for c in d.columns}
    drops = set()
    for a in actions:
        if isinstance(a, DropColumn) and a.name.lower() not in have and not a.if_exists:
            raise DdlError(f"DROP COLUMN {a.name!r}: no such column in {d.name}")
        if isinstance(a, DropColumn):
            drops.add(a.name.lower())
    renames = {a.old.lower(): a.new for a in actions if isinstance(a, RenameColumn)}
    for old in renames:
        if old not in have:
            raise DdlError(f"RENAME COLUMN {old!r}: no such column in {d.name}")
    pending = [a for a in actions if isinstance(a, (AddColumn, ChangeColumn)) and _defines(a, have - drops)]
    new: list[_Entry] = []
    matched: set[int] = set()
    for col in d.columns:
        key = col.name.lower()
        if key in drops:
            continue
        ch = next((a for a in pending if isinstance(a, ChangeColumn) and a.old.lower() == key
                   and id(a) not in matched), None)
        if ch is None:
            new.append(_Entry(replace(col, name=renames[key]) if key in renames else col))
            continue
        matched.add(id(ch))
        new.append(_Entry(column_info(ch.decl, charset, collation, notes), ch))
        if not ch.first and ch.after is None:
            pending.remove(ch)
    for a in pending:
        _place(new, a, d, matched, charset, collation, notes)
    return [e.info for e in new]


def _defines(a: AddColumn | ChangeColumn, have: set[str]) -> bool:
    """Whether ``a`` adds or redefines a column (ADD IF NOT EXISTS of a column the table has,
    and CHANGE IF EXISTS of one it lacks, do nothing)."""
    if isinstance(a, AddColumn):
        return not (a.if_not_exists and a.decl.name.lower() in have)
    return not (a.if_exists and a.old.lower() not in have)


def _place(new: list[_Entry], a: AddColumn | ChangeColumn, d: TableDef, matched: set[int], charset: str | None,
           collation: str | None, notes: list[str]) -> None:
    """An added column, or a changed one given FIRST/AFTER, put where it goes."""
    if isinstance(a, ChangeColumn):
        if id(a) not in matched:
            raise DdlError(f"CHANGE/MODIFY {a.old!r}: no such column in {d.name}")
        k = next(i for i, e in enumerate(new) if e.change is a)
        entry = new.pop(k)
    else:
        entry = _Entry(column_info(a.decl, charset, collation, notes))
    if a.first:
        new.insert(0, entry)
    elif a.after is not None:
        after = a.after.lower()
        at = next((i for i, e in enumerate(new) if e.info.name.lower() == after), None)
        if at is None:
            raise DdlError(f"AFTER {a.after!r}: no such column in {d.name}")
        new.insert(at + 1, entry)
    else:
        k = len(new)
        while k > 0 and new[k - 1].info.implicit:
            k -= 1
        new.insert(k, entry)


def _primary_key(d: TableDef, actions: tuple[Action, ...]) -> tuple[str, ...] | None:
    """The primary key after the actions: columns dropped leave it, renamed ones are renamed."""
    pk = d.primary_key
    for a in actions:
        if pk is not None and isinstance(a, DropColumn):
            pk = tuple(c for c in pk if c.lower() != a.name.lower()) or None
        elif pk is not None and isinstance(a, (ChangeColumn, RenameColumn)):
            old, new = (a.old, a.decl.name) if isinstance(a, ChangeColumn) else (a.old, a.new)
            pk = tuple(new if c.lower() == old.lower() else c for c in pk)
    for a in actions:
        if isinstance(a, PrimaryKey):
            pk = a.columns
        elif isinstance(a, (AddColumn, ChangeColumn)) and a.decl.primary_key:
            pk = (a.decl.name,)
    return pk


def _index_columns(columns: list[ColumnInfo], a: IndexChange) -> list[ColumnInfo]:
    """MySQL's hidden columns of functional key parts, after an index is added, dropped or
    renamed (appended at the end, as mysql_prepare_create_table adds them)."""
    if a.drop or a.new_name is not None:
        prefix = f"!hidden!{a.name}!".lower()
        if a.drop:
            return [c for c in columns if not (c.hidden and c.name.lower().startswith(prefix))]
        return [replace(c, name=f"!hidden!{a.new_name}!{c.name[len(prefix):]}")
                if c.hidden and c.name.lower().startswith(prefix) else c for c in columns]
    return columns + functional_columns(columns, (FunctionalIndex(a.name, a.parts),))


def functional_columns(columns: list[ColumnInfo], indexes: tuple[FunctionalIndex, ...]) -> list[ColumnInfo]:
    """The hidden columns of functional indexes (``functional_index``, ``_2``... when unnamed)."""
    taken = {c.name.lower() for c in columns}
    out = []
    for index in indexes:
        name = index.name
        if name is None:
            name, n = "functional_index", 2
            while any(t.startswith(f"!hidden!{name}!") for t in taken):
                name, n = f"functional_index_{n}", n + 1
        for part in index.parts:
            c = functional_column(name, part, taken)
            taken.add(c.name.lower())
            out.append(c)
    return out


# -- CREATE TABLE ... SELECT -------------------------------------------------------------
def select_columns(select: SelectList, explicit: list[ColumnInfo], tables: dict[str, TableDef],
                   notes: list[str], statement: str) -> list[ColumnInfo] | None:
    """The columns of a ``CREATE TABLE ... SELECT``: the defined columns the select list does
    not name, then the select list's (a defined column of the same name gives its type);
    None when a ``*`` is of a table not known (the column count itself is then unknown).
    A column of another table keeps that column's type; an expression's type is the
    TABLE_MAP's alone (said in ``notes``)."""
    by_alias = {alias.lower(): tables.get(table_key(name)) for alias, name in select.tables}
    picked: list[ColumnInfo] = []
    untyped: list[str] = []
    for item in select.items:
        if item.star:
            sources = [by_alias.get(item.table.lower())] if item.table else list(by_alias.values())
            if not sources or any(s is None for s in sources) or select.problem:
                notes.append(f"{statement}: the columns of {item.table + '.*' if item.table else '*'} are not known "
                             f"({select.problem or 'a table created before the log'}); the table is not tracked")
                return None
            picked += [_selected(c, c.name) for s in sources if s is not None for c in s.columns if not c.invisible]
            continue
        source = _referred(item, by_alias)
        if source is not None:
            picked.append(_selected(source, item.name or source.name))
        else:
            picked.append(ColumnInfo(item.name or "?"))
            untyped.append(item.name or "?")
    named = {c.name.lower(): c for c in explicit}
    untyped = [n for n in untyped if n.lower() not in named]  # a defined column gives it its type
    if untyped:
        notes.append(f"{statement}: no type is known for {', '.join(map(repr, untyped))} (expressions): "
                     "their values are read as the TABLE_MAP types them (integers signed, text as bytes)")
    chosen = {c.name.lower() for c in picked}
    return [c for c in explicit if c.name.lower() not in chosen] + [named.get(c.name.lower(), c) for c in picked]


def _selected(c: ColumnInfo, name: str) -> ColumnInfo:
    """A column of another table as ``CREATE TABLE ... SELECT`` makes it: its type, not its
    generation, visibility or CHECK (MariaDB's JSON, a LONGTEXT with a json_valid CHECK, is
    then a LONGTEXT)."""
    return replace(c, name=name, type="LONGTEXT" if c.type == "JSON" else c.type, generated=None, implicit=False,
                   invisible=False)


def _referred(item: SelectItem, by_alias: dict[str, TableDef | None]) -> ColumnInfo | None:
    """The column a select item refers to, when its table is known."""
    if item.column is None:
        return None
    sources = [by_alias.get(item.table.lower())] if item.table else list(by_alias.values())
    for s in sources:
        k = s.index_of(item.column) if s is not None else None
        if s is not None and k is not None:
            return s.columns[k]
    return None
