"""SQL text as the DDL tracker reads it: sqlglot's MySQL dialect (imported at first use, with
the column types it lacks), executable comments unwrapped as the server runs them.

sqlglot is imported lazily, so that ``import vecbinlog`` does not import it (~70 ms): a log
without DDL never needs it.
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
import threading
from typing import Any

__all__ = ["LazyModule", "dialect", "exp", "parse_one", "sql_errors", "sqltokens", "strip_leading_comments",
           "unwrap_versioned_comments"]


class LazyModule:
    """A module imported at its first use (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:  # called only for what is not set here yet
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)  # the next look-up is an attribute's (the DDL of mixed: 1 368 of them)
        return value


exp: Any = LazyModule("sqlglot.expressions")
sqltokens: Any = LazyModule("sqlglot.tokens")
sql_errors: Any = LazyModule("sqlglot.errors")


@functools.cache
def dialect() -> Any:
    """sqlglot's MySQL dialect, with MySQL's type synonyms read as the server reads them."""
    from sqlglot.dialects.mysql import MySQL

    TokenType = sqltokens.TokenType

    class _Dialect(MySQL):
        class Tokenizer(MySQL.Tokenizer):
            # MySQL's synonyms as the server reads them (sqlglot reads REAL as FLOAT, INT8 as
            # TINYINT and LONG as BIGINT); the types it does not know (POINT, INET6...) make
            # the statement one for the tolerant reader (ddlscan), which names them exactly
            KEYWORDS = {
                **MySQL.Tokenizer.KEYWORDS,
                "MIDDLEINT": TokenType.MEDIUMINT,
                "INT3": TokenType.MEDIUMINT,
                "INT8": TokenType.BIGINT,
                "REAL": TokenType.DOUBLE,
                "LONG": TokenType.MEDIUMTEXT,
            }

    return _Dialect


class _Quiet(logging.Filter):
    """Drops sqlglot's "falling back to a Command" log records while we parse (we warn ourselves)."""

    active = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self.active, "on", False)


_QUIET = _Quiet()
logging.getLogger("sqlglot").addFilter(_QUIET)


def parse_one(text: str) -> Any:
    """``text`` parsed with :func:`dialect` (sqlglot's logged complaints silenced: the caller
    warns itself); raises ``sqlglot.errors.SqlglotError``."""
    _Quiet.active.on = True
    try:
        return importlib.import_module("sqlglot").parse_one(text, read=dialect())
    finally:
        _Quiet.active.on = False


def unwrap_versioned_comments(sql: str) -> str:
    """The statement as the server runs it: the content of ``/*!NNNNN ... */`` and MariaDB's
    ``/*M!NNNNNN ... */`` executable comments kept, their markers dropped.

    sqlglot (like any SQL parser) takes them for comments, but mysqldump writes e.g.
    ``CREATE DATABASE d /*!40100 DEFAULT CHARACTER SET latin1 */``. Quotes are followed so
    that a ``/*!`` inside a string literal or a quoted identifier is left alone.
    """
    if "/*" not in sql:
        return sql
    out: list[str] = []
    i, n, quote, depth = 0, len(sql), "", 0
    while i < n:
        ch = sql[i]
        if quote:
            out.append(ch)
            if ch == "\\" and quote != "`" and i + 1 < n:
                out.append(sql[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = ""
            i += 1
            continue
        if ch in "'\"`":
            quote = ch
            out.append(ch)
            i += 1
        elif (sql.startswith("/*!", i) or sql.startswith("/*M!", i)) and not _client_only(sql, i):
            j = i + (3 if sql[i + 2] == "!" else 4)
            while j < n and sql[j].isdigit():
                j += 1
            out.append(" ")
            depth += 1
            i = j
        elif depth and sql.startswith("*/", i):
            out.append(" ")
            depth -= 1
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _client_only(sql: str, i: int) -> bool:
    """``/*M!999999\\- enable the sandbox mode */`` (mariadb-dump 10.11+): a command for the
    client, not SQL; left as a comment."""
    j = i + 4
    while j < len(sql) and sql[j].isdigit():
        j += 1
    return sql.startswith("/*M!", i) and sql.startswith("\\", j)


_LEADING_COMMENTS = re.compile(r"\s*(?:(?:/\*.*?\*/|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$))\s*)*", re.DOTALL)


def strip_leading_comments(sql: str) -> str:
    """The statement without the comments a client wrote before it (``/* app */ CREATE ...``:
    the log keeps them); its executable comments are to be unwrapped first."""
    return sql[_LEADING_COMMENTS.match(sql).end():]  # type: ignore[union-attr]
