"""A tolerant reading of the DDL statements about tables, from their tokens.

sqlglot's MySQL dialect parses most CREATE and ALTER TABLE statements, but not everything
the servers write and run: MariaDB's COMPRESSED columns (also as ``/*M!100301
COMPRESSED*/``, as SHOW CREATE TABLE writes them), ``WITH SYSTEM VERSIONING``, ``PERIOD
FOR``, sequences, partitioned tables, ``ALTER TABLE ... CONVERT TO CHARACTER SET``, ``ADD
COLUMN (a INT, b INT)``, ``ALTER IGNORE TABLE``, MySQL's type synonyms... This module reads
every statement about tables the way the server's grammar lays it out (MariaDB's
sql/sql_yacc.yy: ``create_body``, ``alter_list_item``, ``alter_commands``, ``rename``,
``drop``; the element list in :mod:`.scancolumns`, the select list in :mod:`.select`):
it keeps what changes the columns and passes over every key, option, partitioning clause
and management command that does not.

:func:`read_statement` returns a statement of :mod:`.statements`, None for a statement about
no table, and raises :class:`~.columndef.DdlError` only for what cannot be read at all (it
names the table when it got that far). :func:`read_head` reads, by the same grammar, only
what a statement does to the names of tables (see its docstring), without sqlglot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .columns import TYPE_WORDS, DdlError, sequence_decls
from .scancolumns import (
    KEY_WORDS,
    Elements,
    charset_option,
    charset_options,
    charset_words,
    position,
    read_column,
    read_element,
    read_key,
)
from .select import read_select, select_starts
from .statements import (
    Action,
    AddColumn,
    AlterTable,
    ChangeColumn,
    CreateTable,
    DatabaseDef,
    DropColumn,
    DropTables,
    IndexChange,
    PrimaryKey,
    RenameColumn,
    RenameTables,
    RenameTo,
    Statement,
    TableCharset,
    TruncateTables,
    UseDatabase,
    Versioning,
    Visibility,
    table_key,
)
from .tokens import Cursor, End, Tok, plain_tokens

__all__ = ["read_head", "read_statement"]


def read_statement(text: str, default_db: str | None) -> Statement | None:
    """The statement ``text`` (run in database ``default_db``), or None when it is about no table."""
    r = Cursor(text)
    reader = _VERBS.get(r.word())
    if reader is None:
        return None
    r.next()
    try:
        return reader(r, default_db)
    except End:
        raise DdlError("the statement ends early", _named(r, default_db)) from None
    except DdlError as exc:
        if exc.table is not None:
            raise
        raise DdlError(str(exc), _named(r, default_db)) from exc


def read_head(text: str, default_db: str | None,
              lexer: Callable[[str], list[Tok] | None] = plain_tokens) -> Statement | None:
    """The statement ``text`` as far as it names tables, read without sqlglot (by
    :func:`~.tokens.plain_tokens`): DROP, TRUNCATE and RENAME whole (they are names); of a
    CREATE TABLE or SEQUENCE, its head only (a :class:`CreateTable` with its name, IF NOT
    EXISTS, TEMPORARY and OR REPLACE, no columns); of an ALTER TABLE or SEQUENCE, its name
    (no actions); a database's statement; None for a statement about no table. Raises
    :class:`DdlError` when the text is not plain, its head is not read, or an ALTER may
    rename its table (the word RENAME anywhere in it: a name then moves, which only the
    whole statement says). ``lexer``: :func:`~.tokens.tokens` reads the head from sqlglot's
    tokens (the tests check that both read the same)."""
    toks = lexer(text)
    if toks is None:
        raise DdlError("not plain enough to be read without sqlglot")
    r = Cursor(text, toks, head=True)
    reader = _VERBS.get(r.word())
    if reader is None:
        return None
    if r.word() == "ALTER" and any(t.kind == "word" and t.text.upper() == "RENAME" for t in toks):
        raise DdlError("an ALTER that may rename its table")
    r.next()
    try:
        return reader(r, default_db)
    except End:
        raise DdlError("the statement ends early") from None


def _named(r: Cursor, default_db: str | None) -> str | None:
    """The table a CREATE / ALTER / DROP / TRUNCATE statement names, from its first tokens."""
    r.i = 1
    while r.word() in ("OR", "REPLACE", "TEMPORARY", "ONLINE", "IGNORE", "TABLE", "SEQUENCE", "IF", "NOT", "EXISTS"):
        r.i += 1
    try:
        return table_key(r.qualified(default_db)) if r.i > 1 else None
    except (DdlError, End):
        return None


# -- CREATE ------------------------------------------------------------------------------
def _create(r: Cursor, default_db: str | None) -> Statement | None:
    or_replace = r.take("OR", "REPLACE")
    temporary = r.take("TEMPORARY")
    if r.take("TABLE"):
        return replace(_create_table(r, default_db, temporary), or_replace=or_replace)
    if r.take("SEQUENCE"):
        exists = r.take("IF", "NOT", "EXISTS")
        name = r.qualified(default_db)
        if r.head:
            return CreateTable(name, if_not_exists=exists, temporary=temporary, or_replace=or_replace)
        value_type, unsigned = _sequence_type(r)
        return CreateTable(name, sequence_decls(value_type or "BIGINT", unsigned), if_not_exists=exists,
                           temporary=temporary, or_replace=or_replace)
    if r.word() in ("DATABASE", "SCHEMA"):
        r.next()
        exists = r.take("IF", "NOT", "EXISTS")
        db = r.name()
        return DatabaseDef("CREATE", db, *charset_options(r), if_not_exists=exists)
    return None


def _create_table(r: Cursor, default_db: str | None, temporary: bool) -> CreateTable:
    """CREATE TABLE: LIKE, or an element list, table options, partitioning and a query, in
    that order (MariaDB's ``create_body``)."""
    exists = r.take("IF", "NOT", "EXISTS")
    name = r.qualified(default_db)
    if r.head:
        return CreateTable(name, if_not_exists=exists, temporary=temporary)
    if r.punct() == "(" and r.word(1) == "LIKE":
        r.next()
    if r.take("LIKE"):
        return CreateTable(name, if_not_exists=exists, temporary=temporary, like=r.qualified(default_db))
    body = Elements()
    if r.punct() == "(" and not select_starts(r):
        r.next()
        while not r.closes():
            read_element(r, body)
            r.take_punct(",")
    charset = collation = None
    versioned = any(c.versioning for c in body.columns)
    select = None
    while not r.done():
        if r.take("WITH", "SYSTEM", "VERSIONING"):
            versioned = True
        elif r.at("PARTITION", "BY"):
            r.i += 2
            while not r.done() and not select_starts(r) and not r.at("WITH", "SYSTEM", "VERSIONING"):
                r.skip_one()  # partitions change no column
        elif select_starts(r):
            tail = [t.text.upper() for t in r.toks[-3:]]
            versioned = versioned or tail == ["WITH", "SYSTEM", "VERSIONING"]
            select = read_select(r, default_db)
        elif charset_option(r):
            cs, coll = charset_options(r)
            charset, collation = cs or charset, coll or (None if cs else collation)
        else:
            r.skip_one()  # ENGINE=, ROW_FORMAT=, COMMENT=, START TRANSACTION (MySQL 8.0.21+)...
    return CreateTable(name, tuple(body.columns), body.primary_key, charset, collation, versioned, exists,
                       temporary, select=select, functional=tuple(body.functional))


def _sequence_type(r: Cursor) -> tuple[str | None, bool]:
    """The ``AS`` type of CREATE / ALTER SEQUENCE (MariaDB 11.5+), None when not given."""
    value_type, unsigned = None, False
    while not r.done():
        if r.take("AS"):
            value_type = TYPE_WORDS.get(r.word(), "BIGINT")
            r.next()
            unsigned = r.take("UNSIGNED")
        else:
            r.skip_one()
    return value_type, unsigned


# -- ALTER -------------------------------------------------------------------------------
def _alter(r: Cursor, default_db: str | None) -> Statement | None:
    while r.word() in ("ONLINE", "IGNORE"):
        r.next()
    if r.take("TABLE"):
        return _alter_table(r, default_db)
    if r.take("SEQUENCE"):
        r.take("IF", "EXISTS")
        name = r.qualified(default_db)
        value_type, unsigned = (None, False) if r.head else _sequence_type(r)
        if value_type is None:
            return AlterTable(name)  # RESTART, INCREMENT...: the same columns
        return AlterTable(name, tuple(ChangeColumn(d.name, d) for d in sequence_decls(value_type, unsigned)[:4]))
    if r.word() in ("DATABASE", "SCHEMA"):
        r.next()
        db = None if charset_option(r) or r.word() in ("COMMENT", "READ") else r.name()
        return DatabaseDef("ALTER", db, *charset_options(r))
    return None


def _alter_table(r: Cursor, default_db: str | None) -> AlterTable:
    """ALTER TABLE: its comma-separated items; a partitioning clause after them changes no column."""
    r.take("IF", "EXISTS")
    name = r.qualified(default_db)
    if r.head:
        return AlterTable(name)
    _wait(r)
    actions: list[Action] = []
    while not r.done():
        if r.at("PARTITION", "BY") or r.at("REMOVE", "PARTITIONING"):
            break
        start = r.i
        actions += _alter_item(r, default_db)
        if not r.take_punct(",") and r.i == start:
            r.skip_one()
    return AlterTable(name, tuple(actions))


def _alter_item(r: Cursor, default_db: str | None) -> list[Action]:
    """One item of an ALTER TABLE (MariaDB's ``alter_list_item``); a new name without a
    database is in the statement's default one (not the table's), as the server does."""
    w = r.word()
    if r.take("ADD"):
        return _add(r)
    if w in ("CHANGE", "MODIFY"):
        r.next()
        r.take("COLUMN")
        exists = r.take("IF", "EXISTS")
        old = r.name() if w == "CHANGE" else None
        decl = read_column(r, r.name())
        first, after = position(r)
        return [ChangeColumn(old or decl.name, decl, first, after, exists)]
    if r.take("DROP"):
        return _drop_item(r)
    if r.take("RENAME"):
        if r.take("COLUMN"):
            old = r.name()
            r.take("TO")
            return [RenameColumn(old, r.name())]
        if r.take("INDEX") or r.take("KEY"):
            old = r.name()
            r.take("TO")
            return [IndexChange(old, new_name=r.name())]
        _ = r.take("TO") or r.take("AS") or r.take_punct("=")
        return [RenameTo(r.qualified(default_db))]
    if w == "ALTER" and r.word(1) not in ("INDEX", "KEY", "CHECK", "CONSTRAINT"):
        r.next()
        r.take("COLUMN")
        r.take("IF", "EXISTS")
        column = r.name()
        if r.take("SET", "INVISIBLE") or r.take("SET", "VISIBLE"):  # MySQL 8.0.23+
            return [Visibility(column, r.toks[r.i - 1].text.upper() == "INVISIBLE")]
        return _options(r)  # SET DEFAULT, DROP DEFAULT
    if r.take("CONVERT", "TO"):
        if not charset_words(r):
            raise DdlError("CONVERT TO: CHARACTER SET expected")
        charset = r.name()
        return [TableCharset(charset, r.name() if r.take("COLLATE") else None, convert=True)]
    return _options(r)


def _add(r: Cursor) -> list[Action]:
    """ADD: a column, ``(a list)``, a key, a period, SYSTEM VERSIONING or a partition."""
    column = r.take("COLUMN")
    exists = r.take("IF", "NOT", "EXISTS")
    body = Elements()
    if r.punct() == "(":
        r.next()
        while not r.closes():
            read_element(r, body)
            r.take_punct(",")
        return [AddColumn(d, if_not_exists=exists) for d in body.columns] + _keys(body)
    if not column:
        if r.word() in KEY_WORDS:
            read_key(r, body)
            return _keys(body)
        if r.at("PERIOD", "FOR") or r.at("PERIOD", "IF") or r.word() == "PARTITION":
            r.skip_item()
            return []
        if r.take("SYSTEM", "VERSIONING"):
            return [Versioning(True)]
    decl = read_column(r, r.name())
    first, after = position(r)
    return [AddColumn(decl, first, after, exists)]


def _keys(body: Elements) -> list[Action]:
    out: list[Action] = [PrimaryKey(body.primary_key)] if body.primary_key else []
    return out + [IndexChange(f.name, f.parts) for f in body.functional]


def _drop_item(r: Cursor) -> list[Action]:
    """DROP: a column, the primary key, an index, SYSTEM VERSIONING; or a foreign key,
    constraint, check, period or partition (no column)."""
    if r.take("PRIMARY", "KEY"):
        return [PrimaryKey(None)]
    if r.take("INDEX") or r.take("KEY"):
        r.take("IF", "EXISTS")
        return [IndexChange(r.name(), drop=True)]
    if r.take("SYSTEM", "VERSIONING"):
        return [Versioning(False)]
    if r.word() in ("FOREIGN", "CONSTRAINT", "CHECK", "PARTITION") or r.at("PERIOD", "FOR") or r.at("PERIOD", "IF"):
        r.skip_item()
        return []
    r.take("COLUMN")
    exists = r.take("IF", "EXISTS")
    out: list[Action] = [DropColumn(r.name(), exists)]
    _ = r.take("RESTRICT") or r.take("CASCADE")
    return out


def _options(r: Cursor) -> list[Action]:
    """An item that changes no column (table options, ALTER COLUMN ... SET DEFAULT, DISABLE
    KEYS, FORCE, ORDER BY, ALGORITHM=, LOCK=, partition management...), read to its end; its
    ``[DEFAULT] CHARSET=`` / ``COLLATE=`` options set the table's default."""
    out: list[Action] = []
    while not r.done() and r.punct() != ",":
        if charset_option(r):
            out.append(TableCharset(*charset_options(r)))
        else:
            r.skip_one()
    return out


def _wait(r: Cursor) -> None:
    """Past ``WAIT n`` / ``NOWAIT`` (MariaDB's lock wait options)."""
    if r.take("WAIT"):
        r.next()
    r.take("NOWAIT")


# -- DROP, RENAME, TRUNCATE, USE ---------------------------------------------------------
def _drop(r: Cursor, default_db: str | None) -> Statement | None:
    temporary = r.take("TEMPORARY")
    if r.word() in ("TABLE", "TABLES", "SEQUENCE"):
        r.next()
        r.take("IF", "EXISTS")
        names = [r.qualified(default_db)]
        while r.take_punct(","):
            names.append(r.qualified(default_db))
        return DropTables(tuple(names), temporary)
    if r.word() in ("DATABASE", "SCHEMA"):
        r.next()
        r.take("IF", "EXISTS")
        return DatabaseDef("DROP", r.name())
    return None


def _rename(r: Cursor, default_db: str | None) -> Statement | None:
    """RENAME TABLE a TO b, c TO d (RENAME USER: None)."""
    if not (r.take("TABLE") or r.take("TABLES")):
        return None
    r.take("IF", "EXISTS")
    pairs = []
    while True:
        old = r.qualified(default_db)
        _wait(r)
        if not r.take("TO"):
            raise DdlError("RENAME TABLE: TO expected")
        pairs.append((old, r.qualified(default_db)))
        if not r.take_punct(","):
            return RenameTables(tuple(pairs))


def _truncate(r: Cursor, default_db: str | None) -> Statement | None:
    r.take("TABLE")
    return TruncateTables((r.qualified(default_db),))


def _use(r: Cursor, default_db: str | None) -> Statement | None:
    return UseDatabase(r.name())


_VERBS: dict[str, Callable[[Cursor, str | None], Statement | None]] = {
    "CREATE": _create, "ALTER": _alter, "DROP": _drop, "RENAME": _rename, "TRUNCATE": _truncate, "USE": _use,
}
