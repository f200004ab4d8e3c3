"""The select list of a ``CREATE TABLE ... SELECT``, as the server names its columns.

Row-based logs hold such a statement as the plain CREATE TABLE the server made of it (its
columns written out); a statement-based or mixed log holds it as written, and then the
table's columns are the select list's. The server names each column after the item's alias,
else the column it refers to (``t.c`` and ``(c)`` are ``c``), else a string or number's
value, else the item's text as written (``a  +  1``: MariaDB 10.11 keeps its spaces). The
FROM clause says which table each column reference (and each ``*``) is of.
"""

from __future__ import annotations

from .statements import Name, SelectItem, SelectList
from .tokens import Cursor

__all__ = ["read_select", "select_starts"]

_OPTIONS = frozenset({"ALL", "DISTINCT", "DISTINCTROW", "HIGH_PRIORITY", "STRAIGHT_JOIN", "SQL_SMALL_RESULT",
                      "SQL_BIG_RESULT", "SQL_BUFFER_RESULT", "SQL_CACHE", "SQL_NO_CACHE", "SQL_CALC_FOUND_ROWS"})
_END = frozenset({"FROM", "INTO", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT",
                  "WINDOW", "FOR", "LOCK"})
_LITERALS = frozenset({"NULL", "TRUE", "FALSE", "CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_USER",
                       "LOCALTIME", "LOCALTIMESTAMP", "DEFAULT"})
_JOINS = frozenset({"JOIN", "INNER", "CROSS", "LEFT", "RIGHT", "OUTER", "STRAIGHT_JOIN", "NATURAL"})


def select_starts(r: Cursor) -> bool:
    """Whether the query of a CREATE TABLE ... SELECT starts here."""
    w = r.word()
    return (w in ("SELECT", "AS", "IGNORE", "REPLACE", "VALUES") or (w == "WITH" and r.word(1) != "SYSTEM")
            or (r.punct() == "(" and (r.word(1) in ("SELECT", "WITH") or r.punct(1) == "(")))


def read_select(r: Cursor, default_db: str | None) -> SelectList:
    """The select list and FROM tables of the query that starts here (read to the statement's end)."""
    while r.word() in ("IGNORE", "REPLACE", "AS") or r.punct() == "(":
        r.next()
    if not r.take("SELECT"):
        problem: str | None = "a query with a WITH clause" if r.word() == "WITH" else f"a {r.word() or 'query'} query"
        r.i = len(r.toks)
        return SelectList((), problem=problem)
    while r.word() in _OPTIONS:
        r.next()
    items = []
    while not r.done() and r.word() not in _END and r.punct() != ")":
        items.append(_item(r))
        r.take_punct(",")
    tables, problem = _from(r, default_db) if r.take("FROM") else ((), None)
    r.i = len(r.toks)
    return SelectList(tuple(items), tables, problem)


def _item(r: Cursor) -> SelectItem:
    """One item: ``*``, ``t.*``, a column (``t.c``, ``(c)``), or an expression; with its alias."""
    start = r.i
    while not r.done() and r.punct() not in (",", ")") and r.word() not in _END:
        r.skip_one()
    toks = r.toks[start:r.i]
    if not toks:
        return SelectItem("?")
    alias = None
    if len(toks) >= 2 and toks[-2].kind == "word" and toks[-2].text.upper() == "AS":
        alias, toks = toks[-1].text, toks[:-2]
    elif len(toks) >= 2 and _implicit_alias(toks[-2].kind, toks[-2].text, toks[-1].kind, toks[-1].text):
        alias, toks = toks[-1].text, toks[:-1]
    inner = toks
    while len(inner) >= 3 and inner[0].text == "(" and inner[-1].text == ")":
        inner = inner[1:-1]
    if not inner:  # ``AS a`` alone: not SQL, but named all the same
        return SelectItem(alias or "?")
    texts = [t.text for t in inner]
    if texts[-1] == "*" and (len(texts) == 1 or (len(texts) == 3 and texts[1] == ".")):
        return SelectItem(None, texts[0] if len(texts) == 3 else None, star=True)
    names = inner[::2]
    if (len(inner) in (1, 3, 5) and all(t.kind in ("word", "id") for t in names) and all(t == "." for t in texts[1::2])
            and (inner[0].kind == "id" or inner[0].text.upper() not in _LITERALS)):
        return SelectItem(alias or texts[-1], texts[-3] if len(texts) >= 3 else None, texts[-1])
    if len(toks) == 1 and toks[0].kind in ("str", "nstr", "num"):
        return SelectItem(alias or toks[0].text)
    return SelectItem(alias or r.source(toks[0], toks[-1]))


#: words an expression may end with, or that may come before its last word: no alias there
_NOT_ALIAS = frozenset({"NULL", "END", "TRUE", "FALSE", "UNKNOWN"})
_BEFORE_NOT_ALIAS = frozenset({"IS", "NOT", "COLLATE", "BINARY", "INTERVAL", "AND", "OR", "XOR", "LIKE", "IN",
                               "BETWEEN", "THEN", "ELSE", "WHEN", "CASE", "DIV", "MOD", "REGEXP", "RLIKE", "ESCAPE"})


def _implicit_alias(kind_before: str, before: str, kind: str, last: str) -> bool:
    """Whether an item's last token is an alias written without AS (``3 three``, ``t.a x``)."""
    if kind == "word" and last.upper() in _NOT_ALIAS or kind not in ("word", "id", "str"):
        return False
    if kind_before == "word":
        return before.upper() not in _BEFORE_NOT_ALIAS
    return kind_before in ("id", "str", "nstr", "num") or before == ")"


def _from(r: Cursor, default_db: str | None) -> tuple[tuple[tuple[str, Name], ...], str | None]:
    """The tables of a FROM clause with their aliases (the joins' conditions passed over);
    and what makes its ``*`` unknown (NATURAL and USING joins merge columns, subqueries)."""
    tables: list[tuple[str, Name]] = []
    problem = None
    while not r.done() and r.word() not in _END:
        if r.word() == "NATURAL" or r.word() == "USING":
            problem = "a join with NATURAL or USING"
            r.skip_one()
        elif r.punct() == "(":
            problem = "a subquery or a parenthesised join in FROM"
            r.skip_group()
        elif r.take("ON"):
            while not r.done() and r.word() not in _END | _JOINS and r.punct() != ",":
                r.skip_one()
        elif r.word() in _JOINS or r.take_punct(","):
            while r.word() in _JOINS:
                r.next()
        else:
            name = r.qualified(default_db)
            r.take("AS")
            alias = name[1]
            if r.kind() in ("word", "id") and r.word() not in _JOINS | _END | {"ON", "USING"}:
                alias = r.name()
            tables.append((alias, name))
    return tuple(tables), problem
