"""CREATE and ALTER TABLE as sqlglot parses them, read into the statements of :mod:`.statements`.

Only the forms listed here are read from sqlglot's tree: the node types of a table's
elements, the column constraints, the table properties and the ALTER actions below, and
the types whose sqlglot name is the server's. Anything else raises :class:`Unreadable`,
and the statement is read by :mod:`.scan` instead: sqlglot may parse a statement it
does not understand as MySQL does (``ALTER TABLE t DROP SYSTEM VERSIONING`` as a command
of the ALTER, ``START TRANSACTION`` as sequence options), and its reading is used only
where it is the server's.
"""

from __future__ import annotations

from typing import Any

from ...collations import decode_text
from .columns import ColumnDecl
from .sqltext import exp, parse_one, sql_errors
from .statements import (
    Action,
    AddColumn,
    AlterTable,
    ChangeColumn,
    CreateTable,
    DropColumn,
    IndexChange,
    Name,
    PrimaryKey,
    RenameColumn,
    RenameTo,
    Statement,
    TableCharset,
    Visibility,
)

__all__ = ["Unreadable", "read_tree"]


class Unreadable(Exception):
    """The statement is not one of the forms read from sqlglot's tree here."""


#: sqlglot's type name -> (the server's type, unsigned); sqlglot's names for MySQL's
#: synonyms agree with the server's except REAL, INT8 and LONG (see sqltext.dialect)
_TYPES: dict[str, tuple[str, bool]] = {
    **{t: (t, False) for t in (
        "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "BIT", "DATE", "TIME",
        "DATETIME", "YEAR", "CHAR", "VARCHAR", "BINARY", "VARBINARY", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT",
        "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "JSON", "ENUM", "SET", "UUID", "VECTOR", "GEOMETRY")},
    **{f"U{t}": (t, True) for t in ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")},
    "BOOLEAN": ("TINYINT", False), "SERIAL": ("BIGINT", True), "TIMESTAMPTZ": ("TIMESTAMP", False),
    "TIMESTAMP": ("TIMESTAMP", False), "NCHAR": ("CHAR", False), "NVARCHAR": ("VARCHAR", False),
}
#: column constraints that change nothing decoded
_PASSED = ("NotNullColumnConstraint", "DefaultColumnConstraint", "CommentColumnConstraint",
           "AutoIncrementColumnConstraint", "UniqueColumnConstraint", "OnUpdateColumnConstraint",
           "CheckColumnConstraint", "Reference")
#: table properties that change nothing decoded
_PROPERTIES = ("EngineProperty", "AutoIncrementProperty", "SchemaCommentProperty", "RowFormatProperty",
               "CharacterSetProperty", "CollateProperty", "AlgorithmProperty", "LockProperty")


def read_tree(text: str, default_db: str | None) -> Statement:
    """``text``, a CREATE or ALTER TABLE, as sqlglot reads it; :class:`Unreadable` otherwise."""
    try:
        tree = parse_one(text)
    except sql_errors.SqlglotError as exc:
        raise Unreadable(str(exc).splitlines()[0]) from exc
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:  # sqlglot's own slips
        raise Unreadable(f"sqlglot failed: {exc!r}") from exc
    kind = str(tree.args.get("kind") or "").upper()
    if isinstance(tree, exp.Create) and kind == "TABLE":
        return _create(tree, default_db)
    if isinstance(tree, exp.Alter) and kind == "TABLE":
        return _alter(tree, default_db)
    raise Unreadable(type(tree).__name__)


def _name(node: exp.Expression, default_db: str | None) -> Name:
    table = node if isinstance(node, exp.Table) else node.find(exp.Table)
    if table is None:
        raise Unreadable("no table name")
    return (table.db or default_db or None), table.name


def _ident(node: Any) -> str:
    if isinstance(node, (exp.Identifier, exp.Var, exp.Literal)):
        return str(node.this)
    if isinstance(node, exp.Column):
        return node.name
    raise Unreadable(f"a name was expected, not {type(node).__name__}")


def _create(tree: exp.Create, default_db: str | None) -> CreateTable:
    if tree.expression is not None:
        raise Unreadable("CREATE TABLE ... SELECT")
    props = tree.args.get("properties")
    charset = collation = None
    temporary = False
    like: Name | None = None
    for p in props.expressions if props is not None else []:
        if isinstance(p, exp.LikeProperty):
            like = _name(p.this, default_db)
        elif isinstance(p, exp.TemporaryProperty):
            temporary = True
        elif type(p).__name__ not in _PROPERTIES:
            raise Unreadable(type(p).__name__)
        elif isinstance(p, exp.CharacterSetProperty):
            charset = _ident(p.this)
        elif isinstance(p, exp.CollateProperty):
            collation = _ident(p.this)
    name = _name(tree.this, default_db)
    exists = bool(tree.args.get("exists"))
    or_replace = bool(tree.args.get("replace"))
    if like is not None:
        return CreateTable(name, if_not_exists=exists, temporary=temporary, like=like, or_replace=or_replace)
    schema = tree.this if isinstance(tree.this, exp.Schema) else None
    if schema is None:
        raise Unreadable("no column list")
    columns, pk = [], None
    for e in schema.expressions:
        if isinstance(e, exp.ColumnDef):
            columns.append(_column(e))
        else:
            pk = _element(e) or pk
    return CreateTable(name, tuple(columns), pk, charset, collation, if_not_exists=exists, temporary=temporary,
                       or_replace=or_replace)


def _element(e: exp.Expression) -> tuple[str, ...] | None:
    """A key or constraint of a table's list: the primary key's columns, else None."""
    if isinstance(e, exp.Constraint) and len(e.expressions) == 1:
        e = e.expressions[0]
    if isinstance(e, exp.PrimaryKey):
        return tuple(_ident(x) for x in e.expressions)
    if isinstance(e, exp.IndexColumnConstraint) and all(isinstance(x, exp.Column) for x in e.expressions):
        return None
    if isinstance(e, (exp.UniqueColumnConstraint, exp.ForeignKey, exp.CheckColumnConstraint)):
        return None
    raise Unreadable(type(e).__name__)  # functional key parts, periods...


def _column(col: exp.ColumnDef) -> ColumnDecl:
    kind = col.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise Unreadable(f"column {col.name!r} has no type")
    tname = kind.this.value if hasattr(kind.this, "value") else str(kind.this)
    if tname not in _TYPES:
        raise Unreadable(tname)
    fields: dict[str, Any] = {"name": col.name, "type": _TYPES[tname][0], "unsigned": _TYPES[tname][1],
                              "national": tname in ("NCHAR", "NVARCHAR")}
    if tname in ("ENUM", "SET"):
        fields["labels"] = _labels(kind)
        if fields["labels"] is None:
            fields["labels_text"] = kind.sql(dialect="mysql")
    elif len(kind.expressions) == 1 and str(kind.expressions[0].this).isdigit():
        fields["length"] = int(str(kind.expressions[0].this))
    for c in col.constraints:
        k = c.kind
        if isinstance(k, exp.CharacterSetColumnConstraint):
            fields["charset"] = _ident(k.this)
        elif isinstance(k, exp.CollateColumnConstraint):
            fields["collation"] = _ident(k.this)
        elif isinstance(k, exp.BinaryColumnConstraint):
            fields["binary"] = True
        elif isinstance(k, exp.ZeroFillColumnConstraint):
            fields["unsigned"] = True
        elif isinstance(k, exp.PrimaryKeyColumnConstraint):
            fields["primary_key"] = True
        elif isinstance(k, exp.InvisibleColumnConstraint):
            fields["invisible"] = True
        elif isinstance(k, exp.ComputedColumnConstraint):
            fields["generated"] = "STORED" if k.args.get("persisted") else "VIRTUAL"
        elif type(k).__name__ not in _PASSED:
            raise Unreadable(type(k).__name__)
    return ColumnDecl(**fields)


def _labels(kind: exp.DataType) -> tuple[str | bytes, ...] | None:
    """ENUM/SET members: strings, or hex/bit literals as bytes (decoded by an introducer's charset)."""
    out = []
    for e in kind.expressions:
        label = _label(e, None)
        if label is None:
            return None
        out.append(label)
    return tuple(out)


def _label(e: exp.Expression, intro: str | None) -> str | bytes | None:
    if isinstance(e, exp.Introducer):  # _charset'...' / _charset 0x...
        return _label(e.expression, str(e.this).lstrip("_"))
    if isinstance(e, (exp.Literal, exp.National)) and (isinstance(e, exp.National) or e.is_string):
        return str(e.this)
    if isinstance(e, exp.Concat) and e.expressions:
        parts = [_label(x, intro) for x in e.expressions]
        return "".join(parts) if all(isinstance(p, str) for p in parts) else None  # type: ignore[arg-type]
    if isinstance(e, exp.HexString):
        digits = str(e.this or "")
        raw = bytes.fromhex(digits.rjust(len(digits) + len(digits) % 2, "0"))
    elif isinstance(e, exp.BitString):
        bits = str(e.this or "")
        raw = int(bits or "0", 2).to_bytes((len(bits) + 7) // 8, "big")
    else:
        return None
    if intro is None:
        return raw
    try:
        return decode_text(raw, intro)
    except (UnicodeDecodeError, LookupError):
        return None


def _alter(tree: exp.Alter, default_db: str | None) -> AlterTable:
    name = _name(tree.this, default_db)
    actions: list[Action] = []
    for option in tree.args.get("options") or []:
        if isinstance(option, exp.CharacterSetProperty):
            actions.append(TableCharset(_ident(option.this), None))
        elif isinstance(option, exp.CollateProperty):
            actions.append(TableCharset(None, _ident(option.this)))
        elif type(option).__name__ not in _PROPERTIES + ("Order",):
            raise Unreadable(type(option).__name__)
    for action in tree.args.get("actions") or []:
        actions += _action(action, default_db)
    return AlterTable(name, tuple(actions))


def _action(a: exp.Expression, default_db: str | None) -> list[Action]:
    """One action of an ALTER TABLE (a new name without a database is in the default one)."""
    if isinstance(a, exp.ColumnDef):  # ADD [COLUMN]
        first, after = _position(a)
        return [AddColumn(_column(a), first, after, bool(a.args.get("exists")))]
    if isinstance(a, exp.ModifyColumn):  # MODIFY / CHANGE
        new = a.this
        old = a.args.get("rename_from")
        first, after = _position(new)
        return [ChangeColumn(_ident(old) if old is not None else new.name, _column(new), first, after)]
    if isinstance(a, exp.RenameColumn):
        return [RenameColumn(_ident(a.this), _ident(a.args.get("to")))]
    if isinstance(a, exp.Drop):
        what = str(a.args.get("kind") or "").upper()
        names = [t.name for t in a.args.get("tables") or []]
        if what == "COLUMN":
            return [DropColumn(n, bool(a.args.get("exists"))) for n in names]
        if what == "INDEX":
            return [IndexChange(n, drop=True) for n in names]
        if what in ("FOREIGN KEY", "CHECK", "CONSTRAINT"):
            return []
        raise Unreadable(f"DROP {what}")
    if isinstance(a, exp.DropPrimaryKey):
        return [PrimaryKey(None)]
    if isinstance(a, exp.AddConstraint):
        pks = [_element(e) for e in a.expressions]
        return [PrimaryKey(pk) for pk in pks if pk]
    if isinstance(a, exp.RenameIndex):
        return [IndexChange(_ident(a.this), new_name=_ident(a.args.get("to")))]
    if isinstance(a, exp.AlterRename):
        return [RenameTo(_name(a.this, default_db))]
    if isinstance(a, exp.AlterColumn) and a.args.get("visible") is not None:
        return [Visibility(_ident(a.this), str(a.args["visible"]).upper() == "INVISIBLE")]
    if isinstance(a, (exp.AlterColumn, exp.AlterIndex, exp.ForceProperty)):
        return []  # SET / DROP DEFAULT, an index's visibility, FORCE: nothing decoded changes
    raise Unreadable(type(a).__name__)


def _position(node: exp.Expression) -> tuple[bool, str | None]:
    pos = node.args.get("position")
    if not isinstance(pos, exp.ColumnPosition):
        return False, None
    if str(pos.args.get("position") or "").upper() == "FIRST":
        return True, None
    return False, _ident(pos.this)
