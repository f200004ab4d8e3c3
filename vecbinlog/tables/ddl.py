"""DDL tracking: what CREATE / ALTER / RENAME / DROP statements say about tables.

Binlogs written with MariaDB's default ``binlog_row_metadata=NO_LOG`` (and MySQL's
``MINIMAL``, and every MySQL 5.x) carry column types but no column names, and MariaDB's no
signedness or character sets either. The DDL statements in QUERY events do: this module
replays them, statement by statement, into a :class:`Catalog` of :class:`TableDef`.

Statements are parsed with sqlglot's MySQL dialect (a real SQL parser), extended with the
type names it lacks (POINT and the other geometries, MariaDB's INET4/INET6: :mod:`vecbinlog.tables.sqltext`). What is kept
per column is what decoding needs: the name, UNSIGNED, the character set and collation
(column, else table default, else database default, resolved when the column is defined,
as the server does), ENUM/SET labels, and the SQL type to check against the TABLE_MAP. The
primary key is kept per table.

Statements sqlglot cannot parse, or that this module cannot interpret (``ALTER TABLE ...
CONVERT TO CHARACTER SET``, ``ADD COLUMN (a INT, b INT)``, ``CREATE TABLE ... SELECT``
without columns, partitioned tables...), raise :class:`DdlError`; the table they name is
then *forgotten* (its definition is no longer trusted), so that a stale definition is never
applied to later rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

from ..collations import decode_text
from .sqltext import dialect, exp, parse_one, sql_errors, sqltokens, unwrap_versioned_comments

__all__ = ["ColumnInfo", "TableDef", "Catalog", "DdlError", "split_name", "unwrap_versioned_comments"]


class DdlError(ValueError):
    """A DDL statement that could not be parsed or interpreted.

    ``table`` is the ``db.table`` it names when that much could be read (it is then
    forgotten), else None.
    """

    def __init__(self, message: str, table: str | None = None) -> None:
        super().__init__(message)
        self.table = table


#: sqlglot's signed type for each unsigned one it makes of ``<type> UNSIGNED``.
_UNSIGNED_OF = {
    "UTINYINT": "TINYINT", "USMALLINT": "SMALLINT", "UMEDIUMINT": "MEDIUMINT", "UINT": "INT",
    "UBIGINT": "BIGINT", "UDECIMAL": "DECIMAL", "UDOUBLE": "DOUBLE", "UFLOAT": "FLOAT",
}
#: Types whose values have no character set (their collation is ``binary``).
_BINARY_TYPES = frozenset({
    "BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "INET", "UUID", "GEOMETRY",
})
#: Types whose values are text in a character set.
_TEXT_TYPES = frozenset({
    "CHAR", "NCHAR", "VARCHAR", "NVARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET",
})
#: MySQL's NATIONAL types are utf8mb3.
_NATIONAL = frozenset({"NCHAR", "NVARCHAR"})


@dataclass(frozen=True)
class ColumnInfo:
    """One column as the DDL (or a user schema) defines it."""

    name: str
    type: str | None = None  #: SQL type (sqlglot's name, signed form: "INT", "VARCHAR"...); None: not given
    unsigned: bool | None = None
    charset: str | None = None  #: resolved: the column's, else the table's, else the database's
    collation: str | None = None
    enum_values: tuple[str, ...] | None = None
    set_values: tuple[str, ...] | None = None


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


def _ident(node: exp.Expression | None) -> str | None:
    """The name of an Identifier / Column / Var / Literal node."""
    if node is None:
        return None
    if isinstance(node, (exp.Identifier, exp.Var, exp.Literal)):
        return str(node.this)
    if isinstance(node, exp.Column):
        return node.name
    ident = node.find(exp.Identifier)
    return str(ident.this) if ident is not None else node.name


def _table_name(node: exp.Expression, default_db: str | None) -> tuple[str | None, str]:
    table = node if isinstance(node, exp.Table) else node.find(exp.Table)
    if table is None:
        raise DdlError("no table name")
    return (table.db or default_db or None), table.name


def _labels(kind: exp.DataType, charset: str | None) -> tuple[str, ...] | None:
    """The members of an ENUM/SET type as text, or None when one of them is not understood.

    Members are string literals (``'a'``, ``N'a'``, ``'a' 'b'``, ``_latin1'a'``) or binary
    strings, whose bytes are the member in the column's character set (``0x00``, ``x'41'``,
    ``b'01000001'``: Item_hex_string and Item_bin_string in sql/item.cc)."""
    out = []
    for e in kind.expressions:
        label = _label(e, charset)
        if label is None:
            return None
        out.append(label)
    return tuple(out)


def _label(e: exp.Expression, charset: str | None) -> str | None:
    if isinstance(e, exp.Introducer):  # _charset'...' / _charset 0x...: bytes in that charset
        return _label(e.expression, str(e.this).lstrip("_"))
    if isinstance(e, (exp.Literal, exp.National)) and (isinstance(e, exp.National) or e.is_string):
        return str(e.this)
    if isinstance(e, exp.Concat) and e.expressions:
        parts = [_label(x, charset) for x in e.expressions]
        return None if any(x is None for x in parts) else "".join(parts)  # type: ignore[arg-type]
    if isinstance(e, exp.HexString):
        digits = str(e.this or "")
        raw = bytes.fromhex(digits.rjust(len(digits) + len(digits) % 2, "0"))
    elif isinstance(e, exp.BitString):
        bits = str(e.this or "")
        raw = int(bits or "0", 2).to_bytes((len(bits) + 7) // 8, "big")
    else:
        return None
    try:
        return decode_text(raw, charset or "utf8mb4")
    except (UnicodeDecodeError, LookupError):
        return None


class Catalog:
    """The databases and tables a sequence of DDL statements defines.

    :meth:`apply` replays one statement; it returns the ``db.table`` names whose definition
    changed (a dropped or forgotten table maps to no definition).

    ``lifetimes`` counts, per ``db.table`` name, the statements that ended a table of that
    name or started a new one (CREATE TABLE in any form, DROP TABLE, TRUNCATE TABLE, RENAME
    TABLE to or from it, DROP DATABASE of a tracked table): rows written under different counts
    belong to different *incarnations* of the name (see :mod:`vecbinlog.decode.tableplan`), whether
    or not the statement was understood. ``notes`` says what the last statement applied had
    that was not understood without making the table untracked (ENUM/SET members).
    """

    def __init__(self) -> None:
        self.databases: dict[str, tuple[str | None, str | None]] = {}  #: name -> (charset, collation)
        self.tables: dict[str, TableDef] = {}
        self.lifetimes: dict[str, int] = {}
        self.notes: list[str] = []

    def _new_lifetime(self, key: str) -> None:
        self.lifetimes[key] = self.lifetimes.get(key, 0) + 1

    # -- statements ------------------------------------------------------------------
    def apply(self, sql: str, default_db: str | None) -> tuple[list[str], str | None]:
        """Replay ``sql`` run in database ``default_db``; returns (tables changed, new default database).

        Raises :class:`DdlError` for a statement that cannot be parsed or interpreted.
        """
        text = unwrap_versioned_comments(sql)
        self.notes = []
        if _object_of(text) in NOT_TABLES:
            return [], default_db  # a routine, trigger, view, event, user, index...: no table changes
        try:
            tree = parse_one(text)
        except sql_errors.SqlglotError as exc:
            raise self._not_understood(f"not parsed: {str(exc).splitlines()[0]}", text, default_db) from exc
        if isinstance(tree, exp.Use):
            return [], _ident(tree.this) or default_db
        if isinstance(tree, exp.Command):
            return self._command(tree, text, default_db), default_db
        if isinstance(tree, exp.Create):
            return self._create(tree, default_db), default_db
        if isinstance(tree, exp.Alter):
            return self._alter(tree, default_db), default_db
        if isinstance(tree, exp.Drop):
            return self._drop(tree, default_db), default_db
        if isinstance(tree, exp.TruncateTable):
            return self._truncate(tree, default_db), default_db
        return [], default_db

    def _not_understood(self, message: str, text: str, default_db: str | None) -> DdlError:
        """The DdlError of a statement that could not be read; a CREATE, DROP or TRUNCATE of a
        table still starts a new lifetime of the table it names."""
        target = _target(text, default_db)
        head = text.lstrip().split(None, 1)[:1]
        if target is not None and head and head[0].upper() in ("CREATE", "DROP", "TRUNCATE"):
            self._new_lifetime(target)
        return DdlError(message, target)

    def _command(self, tree: exp.Command, text: str, default_db: str | None) -> list[str]:
        head = str(tree.this).upper()
        body = tree.expression
        if isinstance(body, exp.Literal):
            rest = str(body.this)
        else:
            rest = body.sql() if isinstance(body, exp.Expression) else str(body or "")
        if head == "RENAME":
            return self._rename_tables(rest, default_db)
        if head in ("CREATE", "ALTER"):
            rest = rest.lstrip().upper()
            if rest.startswith(("TABLE", "OR REPLACE TABLE", "TEMPORARY", "DATABASE", "SCHEMA", "ONLINE", "IGNORE")):
                raise self._not_understood("not understood by the SQL parser", text, default_db)
        return []

    def _truncate(self, tree: exp.TruncateTable, default_db: str | None) -> list[str]:
        """TRUNCATE TABLE: the same columns, no rows (a new lifetime: its deletes are not logged)."""
        if tree.args.get("is_database"):
            return []
        changed = [_key(*_table_name(t, default_db)) for t in tree.expressions]
        for key in changed:
            self._new_lifetime(key)
        return changed

    def _rename_tables(self, rest: str, default_db: str | None) -> list[str]:
        """``RENAME TABLE a TO b, c TO d``: sqlglot leaves it unparsed, so its tokens are read here."""
        tokens = [t for t in dialect()().tokenize(rest)]
        if not tokens or tokens[0].text.upper() != "TABLE":
            return []  # RENAME USER ...
        pairs: list[list[list[str]]] = [[[]]]
        for tok in tokens[1:]:
            if tok.token_type == sqltokens.TokenType.COMMA:
                pairs.append([[]])
            elif tok.text.upper() == "TO" and tok.token_type != sqltokens.TokenType.IDENTIFIER:
                pairs[-1].append([])
            elif tok.token_type != sqltokens.TokenType.DOT:
                pairs[-1][-1].append(tok.text)
        changed: list[str] = []
        for pair in pairs:
            if len(pair) != 2 or not 1 <= len(pair[0]) <= 2 or not 1 <= len(pair[1]) <= 2:
                raise DdlError("RENAME TABLE not understood")
            old = _qualified(pair[0], default_db)
            new = _qualified(pair[1], default_db)
            changed += self._move(old, new)
        return changed

    def _move(self, old: tuple[str | None, str], new: tuple[str | None, str]) -> list[str]:
        old_key, new_key = _key(*old), _key(*new)
        self._new_lifetime(old_key)
        self._new_lifetime(new_key)
        d = self.tables.pop(old_key, None)
        if d is not None:
            self.tables[new_key] = replace(d, database=new[0], table=new[1])
        else:
            self.tables.pop(new_key, None)
        return [old_key, new_key]

    def _create(self, tree: exp.Create, default_db: str | None) -> list[str]:
        kind = str(tree.args.get("kind") or "").upper()
        if kind in ("DATABASE", "SCHEMA"):
            name = _ident(tree.this)
            if name is None or (tree.args.get("exists") and name in self.databases):
                return []
            self.databases[name] = _charset_of(tree.args.get("properties"))
            return []
        if kind != "TABLE":
            return []  # indexes, views, triggers, procedures...
        if _is_temporary(tree):
            return []
        db, table = _table_name(tree.this, default_db)
        key = _key(db, table)
        if tree.args.get("exists") and key in self.tables:
            return []
        self._new_lifetime(key)  # CREATE [OR REPLACE] TABLE: a new table of that name
        props = tree.args.get("properties")
        like = props.find(exp.LikeProperty) if props is not None else None
        if like is not None:
            src = self.tables.get(_key(*_table_name(like.this, default_db)))
            if src is None:
                self.tables.pop(key, None)
            else:
                self.tables[key] = replace(src, database=db, table=table)
            return [key]
        schema = tree.this if isinstance(tree.this, exp.Schema) else None
        if schema is None or not any(isinstance(e, exp.ColumnDef) for e in schema.expressions):
            raise DdlError("CREATE TABLE without a column list (CREATE TABLE ... SELECT?)", key)
        charset, collation = _charset_of(props)
        if charset is None and collation is None:
            charset, collation = self.databases.get(db or "", (None, None))
        columns: list[ColumnInfo] = []
        pk: tuple[str, ...] | None = None
        for e in schema.expressions:
            if isinstance(e, exp.ColumnDef):
                columns.append(_column(e, charset, collation, self.notes))
                if _has_constraint(e, exp.PrimaryKeyColumnConstraint):
                    pk = (e.name,)
            else:
                pk = _primary_key(e) or pk
        self.tables[key] = TableDef(db, table, tuple(columns), pk, charset, collation)
        return [key]

    def _alter(self, tree: exp.Alter, default_db: str | None) -> list[str]:
        kind = str(tree.args.get("kind") or "").upper()
        if kind in ("DATABASE", "SCHEMA"):
            name = _ident(tree.this) or default_db
            if name is not None:
                self.databases[name] = _charset_of(exp.Properties(expressions=tree.args.get("options") or []))
            return []
        if kind != "TABLE":
            return []
        db, table = _table_name(tree.this, default_db)
        key = _key(db, table)
        d = self.tables.get(key)
        if d is None:
            return []  # a table created before the log: nothing known to change
        for option in tree.args.get("options") or []:
            if isinstance(option, (exp.CharacterSetProperty, exp.CollateProperty)):
                cs, coll = _charset_of(exp.Properties(expressions=[option]))
                d = replace(d, charset=cs or d.charset, collation=coll if coll else (None if cs else d.collation))
        renamed_to: tuple[str | None, str] | None = None
        try:
            for action in tree.args.get("actions") or []:
                if isinstance(action, exp.AlterRename):
                    renamed_to = _table_name(action.this, db)
                else:
                    d = _alter_action(d, action, self.notes)
        except DdlError as exc:
            self.tables.pop(key, None)
            raise DdlError(str(exc), key) from exc
        self.tables[key] = d
        if renamed_to is not None:
            return [key, *self._move((db, table), renamed_to)]
        return [key]

    def _drop(self, tree: exp.Drop, default_db: str | None) -> list[str]:
        kind = str(tree.args.get("kind") or "").upper()
        if kind in ("DATABASE", "SCHEMA"):
            for t in tree.args.get("tables") or []:
                name = t.name
                self.databases.pop(name, None)
                gone = [k for k, d in self.tables.items() if d.database == name]
                for k in gone:
                    del self.tables[k]
                    self._new_lifetime(k)
                return gone
            return []
        if kind != "TABLE" or tree.args.get("temporary"):
            return []
        changed = []
        for t in tree.args.get("tables") or []:
            key = _key(*_table_name(t, default_db))
            self.tables.pop(key, None)
            self._new_lifetime(key)
            changed.append(key)
        return changed

    # -- user schemas ----------------------------------------------------------------
    def apply_script(self, text: str, default_db: str | None = None) -> list[str]:
        """Replay every statement of a script (``mysqldump --no-data`` output); returns the
        messages of the statements that could not be used."""
        problems: list[str] = []
        for statement in _statements(text):
            try:
                _, default_db = self.apply(statement, default_db)
            except DdlError as exc:
                problems.append(f"{statement[:80]!r}: {exc}")
            problems += [f"{statement[:80]!r}: {note}" for note in self.notes]
        return problems


#: What a CREATE / ALTER / DROP / RENAME may name besides tables and databases: statements
#: about these define no table, and are passed over without parsing (or warning).
NOT_TABLES = frozenset({
    "PROCEDURE", "FUNCTION", "AGGREGATE", "PACKAGE", "TRIGGER", "VIEW", "EVENT", "USER", "ROLE", "INDEX",
    "UNIQUE", "FULLTEXT", "SPATIAL", "SERVER", "TABLESPACE", "LOGFILE", "RESOURCE", "SYNONYM",
})
#: the object words that decide: the first of these after the verb names what the statement is about
_OBJECTS = NOT_TABLES | {"TABLE", "TABLES", "DATABASE", "SCHEMA", "SEQUENCE"}
_VERBS = frozenset({"CREATE", "ALTER", "DROP", "RENAME"})
#: the usual statements, told without sqlglot's tokenizer (a third of the time a CREATE TABLE
#: takes to replay): the verb, an optional TEMPORARY, then TABLE as a word of its own
_PLAIN_TABLE = re.compile(r"(?:CREATE|ALTER|DROP|RENAME)\s+(?:TEMPORARY\s+)?TABLE\s", re.IGNORECASE)


def _object_of(text: str) -> str | None:
    """What a CREATE/ALTER/DROP/RENAME statement is about: the first object word (``TABLE``,
    ``PROCEDURE``, ``VIEW``...) among its first tokens, past ``OR REPLACE``, ``DEFINER=...``,
    ``SQL SECURITY ...``, ``ALGORITHM=...``, ``TEMPORARY`` and the like (quoted names and
    strings are not words); None when there is none, or for other statements."""
    head = text.lstrip()[:400]
    if head.split(None, 1)[0].upper() not in _VERBS if head else True:
        return None
    if _PLAIN_TABLE.match(head):
        return "TABLE"
    try:
        tokens = dialect()().tokenize(head)
    except sql_errors.SqlglotError:
        return None
    plain = (sqltokens.TokenType.IDENTIFIER, sqltokens.TokenType.STRING)
    for tok in tokens[1:16]:
        word = tok.text.upper()
        if tok.token_type not in plain and word in _OBJECTS:
            return word
    return None


def _key(db: str | None, table: str) -> str:
    return table if db is None else f"{db}.{table}"


def _qualified(parts: list[str], default_db: str | None) -> tuple[str | None, str]:
    return (parts[0], parts[1]) if len(parts) == 2 else (default_db, parts[0])


def _is_temporary(tree: exp.Create) -> bool:
    props = tree.args.get("properties")
    return props is not None and props.find(exp.TemporaryProperty) is not None


def _target(text: str, default_db: str | None) -> str | None:
    """The table an ``ALTER TABLE`` / ``CREATE TABLE`` statement names, from its tokens alone."""
    try:
        tokens = dialect()().tokenize(text)
    except sql_errors.SqlglotError:
        return None
    words = [t for t in tokens]
    i = next((k for k, t in enumerate(words[:8]) if t.text.upper() == "TABLE"), None)
    if i is None:
        return None
    i += 1
    if i + 2 < len(words) and [w.text.upper() for w in words[i : i + 3]] == ["IF", "NOT", "EXISTS"]:
        i += 3
    elif i + 1 < len(words) and [w.text.upper() for w in words[i : i + 2]] == ["IF", "EXISTS"]:
        i += 2
    if i >= len(words):
        return None
    if i + 2 < len(words) and words[i + 1].token_type == sqltokens.TokenType.DOT:
        return _key(words[i].text, words[i + 2].text)
    return _key(default_db, words[i].text)


def _charset_of(props: exp.Expression | None) -> tuple[str | None, str | None]:
    """(charset, collation) of table or database options."""
    charset = collation = None
    if props is not None:
        for p in props.find_all(exp.CharacterSetProperty):
            charset = _ident(p.this)
        for p in props.find_all(exp.CollateProperty):
            collation = _ident(p.this)
    if charset is not None and charset.upper() == "DEFAULT":
        charset = None
    return charset, collation


def _has_constraint(col: exp.ColumnDef, kind: type) -> bool:
    return any(isinstance(c.kind, kind) for c in col.constraints)


def _primary_key(e: exp.Expression) -> tuple[str, ...] | None:
    pk = e if isinstance(e, exp.PrimaryKey) else e.find(exp.PrimaryKey)
    if pk is None:
        return None
    return tuple(n for n in (_ident(x) for x in pk.expressions) if n)


def _column(col: exp.ColumnDef, table_charset: str | None, table_collation: str | None,
            notes: list[str]) -> ColumnInfo:
    """A ColumnInfo from a column definition, its charset resolved against the table's default;
    what is not understood in it (ENUM/SET members) is said in ``notes``."""
    kind = col.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise DdlError(f"column {col.name!r} has no type")
    tname = kind.this.value if hasattr(kind.this, "value") else str(kind.this)
    unsigned = tname in _UNSIGNED_OF or tname == "SERIAL"
    tname = _UNSIGNED_OF.get(tname, "BIGINT" if tname == "SERIAL" else tname)
    charset = collation = None
    for c in col.constraints:
        if isinstance(c.kind, exp.CharacterSetColumnConstraint):
            charset = _ident(c.kind.this)
        elif isinstance(c.kind, exp.CollateColumnConstraint):
            collation = _ident(c.kind.this)
    binary_flag = _has_constraint(col, exp.BinaryColumnConstraint)
    if tname in _BINARY_TYPES:
        charset, collation = "binary", None
    elif tname == "JSON":  # MariaDB: LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_bin (MySQL: binary JSON)
        charset, collation = charset or "utf8mb4", collation or "utf8mb4_bin"
    elif tname in _TEXT_TYPES:
        if tname in _NATIONAL and charset is None:
            charset = "utf8mb3"
        if charset is None and collation is None:
            charset, collation = table_charset, table_collation
        if binary_flag and charset is not None and collation is None:
            collation = f"{charset}_bin"
    else:
        charset = collation = None
    enum_values = set_values = None
    if tname in ("ENUM", "SET"):
        labels = _labels(kind, charset)
        if labels is None:
            notes.append(f"the {tname} members of column {col.name!r} are not all understood: "
                         f"{kind.sql(dialect=dialect())[:80]!r}; its values are read as their {tname} numbers")
        enum_values, set_values = (labels, None) if tname == "ENUM" else (None, labels)
    return ColumnInfo(col.name, tname, unsigned, charset, collation, enum_values, set_values)


def _position(action: exp.Expression) -> exp.ColumnPosition | None:
    pos = action.args.get("position")
    return pos if isinstance(pos, exp.ColumnPosition) else None


def _place(columns: list[ColumnInfo], info: ColumnInfo, pos: exp.ColumnPosition | None, d: TableDef, at: int) -> None:
    """Insert ``info`` FIRST, AFTER a column, or at ``at`` (the end for ADD, in place for MODIFY)."""
    if pos is not None and str(pos.args.get("position") or "").upper() == "FIRST":
        columns.insert(0, info)
        return
    if pos is not None and pos.this is not None:
        after = _ident(pos.this) or ""
        k = next((i for i, c in enumerate(columns) if c.name.lower() == after.lower()), None)
        if k is None:
            raise DdlError(f"AFTER {after!r}: no such column in {d.name}")
        columns.insert(k + 1, info)
        return
    columns.insert(min(at, len(columns)), info)


def _alter_action(d: TableDef, action: exp.Expression, notes: list[str]) -> TableDef:
    """``d`` after one action of an ALTER TABLE."""
    columns = list(d.columns)
    pk = d.primary_key
    if isinstance(action, exp.ColumnDef):  # ADD [COLUMN]
        if d.index_of(action.name) is not None:
            if action.args.get("exists"):
                return d
            raise DdlError(f"ADD COLUMN {action.name!r}: {d.name} has it already")
        _place(columns, _column(action, d.charset, d.collation, notes), _position(action), d, len(columns))
        if _has_constraint(action, exp.PrimaryKeyColumnConstraint):
            pk = (action.name,)
    elif isinstance(action, exp.ModifyColumn):  # MODIFY / CHANGE
        new = action.this
        old_name = _ident(action.args.get("rename_from")) or new.name
        k = d.index_of(old_name)
        if k is None:
            raise DdlError(f"MODIFY/CHANGE {old_name!r}: no such column in {d.name}")
        del columns[k]
        _place(columns, _column(new, d.charset, d.collation, notes), _position(new), d, k)
        if pk is not None:
            pk = tuple(new.name if c.lower() == old_name.lower() else c for c in pk)
    elif isinstance(action, exp.RenameColumn):
        old_name, new_name = _ident(action.this) or "", _ident(action.args.get("to")) or ""
        k = d.index_of(old_name)
        if k is None:
            raise DdlError(f"RENAME COLUMN {old_name!r}: no such column in {d.name}")
        columns[k] = replace(columns[k], name=new_name)
        if pk is not None:
            pk = tuple(new_name if c.lower() == old_name.lower() else c for c in pk)
    elif isinstance(action, exp.Drop):
        what = str(action.args.get("kind") or "").upper()
        if what == "COLUMN":
            for t in action.args.get("tables") or []:
                k = d.index_of(t.name)
                if k is None:
                    if action.args.get("exists"):
                        continue
                    raise DdlError(f"DROP COLUMN {t.name!r}: no such column in {d.name}")
                del columns[k]
                if pk is not None:
                    pk = tuple(c for c in pk if c.lower() != t.name.lower()) or None
        # DROP INDEX / KEY / FOREIGN KEY / CONSTRAINT: the columns stay
    elif isinstance(action, exp.DropPrimaryKey):
        pk = None
    elif isinstance(action, exp.AddConstraint):
        pk = _primary_key(action) or pk
    elif isinstance(action, (exp.AlterColumn, exp.AlterIndex)):
        pass  # SET/DROP DEFAULT, visibility: no change to what is decoded
    else:
        raise DdlError(f"ALTER TABLE action {action.sql(dialect=dialect())!r} not understood")
    return replace(d, columns=tuple(columns), primary_key=pk)


def _statements(text: str) -> Iterable[str]:
    """The statements of a script, split by sqlglot's tokenizer at top-level semicolons."""
    text = unwrap_versioned_comments(text)
    try:
        tokens = dialect()().tokenize(text)
    except sql_errors.SqlglotError as exc:
        raise DdlError(f"the schema text cannot be read as SQL: {exc}") from exc
    start, has_tokens = 0, False  # a chunk of comments only is no statement
    for tok in tokens:
        if tok.token_type == sqltokens.TokenType.SEMICOLON:
            if has_tokens:
                yield text[start : tok.start].strip()
            start, has_tokens = tok.end + 1, False
        else:
            has_tokens = True
    if has_tokens:
        yield text[start:].strip()
