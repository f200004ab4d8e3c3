"""The tolerant reading of a table's element list: columns (type and attributes), keys,
constraints and periods, as MariaDB's sql/sql_yacc.yy lays them out (``field_list_item``,
``field_spec``, ``field_type``, ``attribute``, ``key_def``) and MySQL's grammar agrees.

What changes what is decoded is kept: the type (its synonyms read as the type they name),
UNSIGNED/ZEROFILL, the character set (``CHARACTER SET``, ``CHARSET``, ``ASCII``,
``UNICODE``, ``BYTE``), COLLATE, BINARY, the ENUM/SET members, ``AS ROW START/END``, ``WITH
/ WITHOUT SYSTEM VERSIONING``, a column's PRIMARY KEY, a table's primary key and MySQL's
functional key parts. Every other attribute (NULL, DEFAULT and ON UPDATE values,
AUTO_INCREMENT, COMMENT, COMPRESSED, CHECK, REFERENCES, COLUMN_FORMAT, SRID,
engine attributes...) is passed over, a parenthesised expression as a balanced group.
"""

from __future__ import annotations

from ...collations import decode_text
from .columns import TYPE_WORDS, ColumnDecl
from .statements import FunctionalIndex
from .tokens import Cursor, Tok

__all__ = [
    "KEY_WORDS",
    "Elements",
    "charset_option",
    "charset_options",
    "charset_words",
    "position",
    "read_column",
    "read_element",
    "read_key",
]

#: words that start a key or constraint in a table's element list (not a column)
KEY_WORDS = frozenset({"PRIMARY", "KEY", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CONSTRAINT", "CHECK"})


class Elements:
    """What the elements of a CREATE TABLE's list (or of an ``ADD (...)``) define."""

    def __init__(self) -> None:
        self.columns: list[ColumnDecl] = []
        self.primary_key: tuple[str, ...] | None = None
        self.functional: list[FunctionalIndex] = []


def read_element(r: Cursor, out: Elements) -> None:
    """One element of a table's list: a column, a key, a constraint or a period."""
    if r.word() in KEY_WORDS:
        read_key(r, out)
    elif r.at("PERIOD", "FOR"):
        r.skip_item()  # PERIOD FOR SYSTEM_TIME (s, e), PERIOD FOR p (s, e): no column
    else:
        out.columns.append(read_column(r, r.name()))
        r.skip_item()


def read_key(r: Cursor, out: Elements) -> None:
    """A key or constraint: a PRIMARY KEY is the table's; functional key parts (MySQL's
    ``INDEX i ((a + 1))``) are kept; the rest is passed over."""
    if r.take("CONSTRAINT") and r.word() not in KEY_WORDS:
        r.next()  # the constraint's name
    primary = r.take("PRIMARY", "KEY")
    if not primary and r.word() in ("FOREIGN", "CHECK"):
        r.skip_item()
        return
    if not primary:
        r.take("UNIQUE")
        r.take("FULLTEXT") or r.take("SPATIAL")
        r.take("KEY") or r.take("INDEX")
    r.take("IF", "NOT", "EXISTS")
    name = None
    while not r.done() and r.punct() != "(":
        if r.take("USING") or r.take("TYPE"):
            r.next()  # the key's algorithm
        else:
            name = r.name()
    parts, functional = _key_parts(r)
    if primary:
        out.primary_key = tuple(parts)
    elif functional:
        out.functional.append(FunctionalIndex(name, tuple(functional)))
    r.skip_item()


def _key_parts(r: Cursor) -> tuple[list[str], list[int]]:
    """The columns of a key's ``(...)``, and the positions of its functional ``(expr)`` parts."""
    names: list[str] = []
    functional: list[int] = []
    if not r.take_punct("("):
        return names, functional
    k = 0
    while not r.closes():
        if r.punct() == "(":
            functional.append(k)
        else:
            names.append(r.name())
        r.skip_item()
        r.take_punct(",")
        k += 1
    return names, functional


def position(r: Cursor) -> tuple[bool, str | None]:
    """``FIRST`` -> (True, None); ``AFTER c`` -> (False, "c"); nothing -> (False, None)."""
    if r.take("FIRST"):
        return True, None
    if r.take("AFTER"):
        return False, r.name()
    return False, None


# -- a column ----------------------------------------------------------------------------
def read_column(r: Cursor, name: str) -> ColumnDecl:
    """A column's type and attributes, up to the ``,`` or ``)`` that ends it (or FIRST/AFTER)."""
    fields = _type(r)
    fields["name"] = name
    while not r.done() and r.punct() not in (",", ")") and r.word() not in ("FIRST", "AFTER"):
        _attribute(r, fields)
    return ColumnDecl(**fields)


def _type(r: Cursor) -> dict:
    """A column's type: its name (synonyms read as the type they name), NATIONAL, the number
    in parentheses, the ENUM/SET members (MariaDB's ``field_type``: NATIONAL CHAR, CHAR
    VARYING, NCHAR VARCHAR, DOUBLE PRECISION, LONG VARBINARY, LONG CHAR VARYING, LONG...)."""
    fields: dict = {"type": None}
    if r.take("NATIONAL"):
        fields["national"] = True
    w = r.word()
    if w in ("CHAR", "CHARACTER") and r.word(1) == "VARYING":
        r.i += 2
        fields["type"] = "VARCHAR"
    elif w == "NCHAR":
        r.next()
        fields["national"] = True
        fields["type"] = "VARCHAR" if (r.take("VARCHAR") or r.take("VARYING")) else "CHAR"
    elif w == "LONG":
        r.next()
        if r.take("VARBINARY"):
            fields["type"] = "MEDIUMBLOB"
        else:
            r.take("VARCHAR") or r.take("CHAR", "VARYING") or r.take("CHARACTER", "VARYING")
            fields["type"] = "MEDIUMTEXT"
    elif w in TYPE_WORDS:
        r.next()
        fields["type"] = TYPE_WORDS[w]
        r.take("PRECISION")  # DOUBLE PRECISION
        if w == "NVARCHAR":
            fields["national"] = True
        if w == "SERIAL":  # BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
            fields["unsigned"] = True
    else:
        r.next()  # a type of a plugin: only the TABLE_MAP says what it is
    if r.punct() == "(":
        if fields["type"] in ("ENUM", "SET"):
            start = r.peek()
            fields["labels"] = _labels(r)
            if fields["labels"] is None and start is not None:
                fields["labels_text"] = r.source(start, r.toks[r.i - 1])
        else:
            numbers = _numbers(r)
            fields["length"] = numbers[0] if len(numbers) == 1 else None
    return fields


def _numbers(r: Cursor) -> list[int]:
    """The numbers of a type's ``(M)`` or ``(M, D)``."""
    r.next()
    out = []
    while not r.closes():
        t = r.next()
        if t.kind == "num" and t.text.isdigit():
            out.append(int(t.text))
    return out


def _labels(r: Cursor) -> tuple[str | bytes, ...] | None:
    """The members of ENUM(...)/SET(...): strings (adjacent ones joined), or hex and bit
    literals: their bytes, in the column's charset, or decoded in an introducer's
    (Item_hex_string and Item_bin_string in sql/item.cc). None when one is something else."""
    r.next()
    out: list[str | bytes] = []
    ok = True
    while not r.closes():
        intro = r.next().text.lstrip("_") if r.kind() == "intro" else None
        parts: list[Tok] = []
        while not r.done() and r.punct() not in (",", ")"):
            parts.append(r.next())
        if parts and all(t.kind in ("str", "nstr") for t in parts):
            out.append("".join(t.text for t in parts))
        elif len(parts) == 1 and parts[0].kind in ("hex", "bit"):
            out.append(_literal_bytes(parts[0], intro))
        else:
            ok = False
        r.take_punct(",")
    return tuple(out) if ok else None


def _literal_bytes(t: Tok, intro: str | None) -> str | bytes:
    """The bytes of ``0x41`` / ``x'41'`` / ``b'01000001'``; text when an introducer says the charset."""
    if t.kind == "hex":
        raw = bytes.fromhex(t.text.rjust(len(t.text) + len(t.text) % 2, "0"))
    else:
        raw = int(t.text or "0", 2).to_bytes((len(t.text) + 7) // 8, "big")
    if intro is None:
        return raw
    try:
        return decode_text(raw, intro)
    except (UnicodeDecodeError, LookupError):
        return raw


def _attribute(r: Cursor, fields: dict) -> None:
    """One attribute of a column: those that change what is decoded are kept, the rest passed."""
    w = r.word()
    if w in ("UNSIGNED", "ZEROFILL"):
        r.next()
        fields["unsigned"] = True
    elif charset_words(r):
        fields["charset"] = r.name()
    elif w in ("ASCII", "UNICODE", "BYTE"):
        r.next()
        fields["charset"] = {"ASCII": "latin1", "UNICODE": "ucs2", "BYTE": "binary"}[w]
    elif r.take("BINARY"):
        fields["binary"] = True
    elif r.take("COLLATE"):
        fields["collation"] = r.name()
    elif r.take("DEFAULT") or r.take("ON", "UPDATE"):
        r.skip_value()
    elif r.take("COMMENT"):
        r.take_punct("=")
        r.skip_value()
    elif r.take("GENERATED", "ALWAYS", "AS") or r.take("AS"):
        if r.take("ROW", "START") or r.take("ROW", "END"):
            fields["generated"] = "ROW " + r.toks[r.i - 1].text.upper()
        else:
            r.skip_value()
            fields["generated"] = "VIRTUAL"
    elif w in ("VIRTUAL", "PERSISTENT", "STORED"):
        r.next()
        fields["generated"] = "VIRTUAL" if w == "VIRTUAL" else "STORED"
    elif r.take("WITH", "SYSTEM", "VERSIONING") or r.take("WITHOUT", "SYSTEM", "VERSIONING"):
        fields["versioning"] = r.toks[r.i - 3].text.upper() == "WITH"
    elif r.take("PRIMARY", "KEY") or r.take("KEY"):
        fields["primary_key"] = True
    elif r.take("UNIQUE"):
        r.take("KEY")
    elif r.take("INVISIBLE"):
        fields["invisible"] = True
    else:
        r.skip_one()  # NULL, NOT, AUTO_INCREMENT, COMPRESSED, VISIBLE, CHECK (...), REFERENCES...


def charset_words(r: Cursor) -> bool:
    """Past CHARACTER SET / CHARSET / CHAR SET (and an ``=``), when they come next."""
    if r.take("CHARACTER", "SET") or r.take("CHARSET") or r.take("CHAR", "SET"):
        r.take_punct("=")
        return True
    return False


def charset_option(r: Cursor) -> bool:
    """Whether a ``[DEFAULT] CHARACTER SET`` or ``[DEFAULT] COLLATE`` option comes next."""
    k = 1 if r.word() == "DEFAULT" else 0
    return r.word(k) in ("CHARACTER", "CHARSET", "COLLATE") or (r.word(k) == "CHAR" and r.word(k + 1) == "SET")


def charset_options(r: Cursor) -> tuple[str | None, str | None]:
    """``[DEFAULT] CHARACTER SET [=] x`` and ``[DEFAULT] COLLATE [=] y`` options in a row
    (and COMMENT, of a database), up to any other word."""
    charset = collation = None
    while not r.done():
        if not charset_option(r) and r.word() != "COMMENT":
            break
        r.take("DEFAULT")
        if charset_words(r):
            charset = r.name()
        elif r.take("COLLATE"):
            r.take_punct("=")
            collation = r.name()
        else:
            r.next()
            r.take_punct("=")
            r.skip_value()
    return charset, collation
