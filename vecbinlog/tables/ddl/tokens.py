"""A DDL statement's tokens, and the cursor the tolerant reader (:mod:`.scan`) walks them with.

The tokens are sqlglot's (its MySQL tokenizer: quoting, escapes, comments, hex and bit
literals, introducers), reduced to what a reading of the server's grammar needs: a kind
(a bare word, a quoted name, a string, a number, punctuation...), the text, and where it
is in the statement (the text of an expression is its column's name in ``CREATE TABLE ...
SELECT``).

:func:`plain_tokens` is a lexer of a few lines that reads the tokens of a statement's head
(its verb, words and names) without sqlglot, when the statement is plain enough that both
agree (quotes and comments closed, ASCII names): what the walk of a log reads of every DDL
statement it meets (:meth:`vecbinlog.tables.ddl.Catalog.apply_names`), sqlglot being
imported only for the statements whose columns are needed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .columns import DdlError
from .sqltext import dialect, sql_errors

if TYPE_CHECKING:
    from .statements import Name

__all__ = ["Cursor", "End", "Tok", "plain_tokens", "tokens"]


@dataclass(frozen=True)
class Tok:
    """One token: ``kind`` is word (a keyword or bare name), id (a quoted name), str, nstr,
    hex, bit, intro (``_latin1``), num or punct; ``start``/``end`` its first and last offset."""

    kind: str
    text: str
    start: int
    end: int


#: sqlglot's token types that are not words or punctuation
_KINDS = {"STRING": "str", "NATIONAL_STRING": "nstr", "HEX_STRING": "hex", "BIT_STRING": "bit",
          "INTRODUCER": "intro", "NUMBER": "num", "IDENTIFIER": "id"}


@functools.cache
def _tokenizer() -> Any:
    """sqlglot's MySQL tokenizer, with no statement read as a command (it keeps what follows
    RENAME as one string)."""

    class Tokenizer(dialect().Tokenizer):  # type: ignore[misc]  # a base made at run time (the dialect of sqltext)
        COMMANDS: ClassVar[set[Any]] = set()

    return Tokenizer


def tokens(text: str) -> list[Tok]:
    """The statement's tokens (comments dropped; sqlglot's keywords of two words, such as
    ``PRIMARY KEY`` or ``DOUBLE PRECISION``, split into words)."""
    try:
        raw = _tokenizer()().tokenize(text)
    except sql_errors.SqlglotError as exc:
        raise DdlError(f"not read as SQL: {str(exc).splitlines()[0]}") from exc
    out = []
    for t in raw:
        kind = _KINDS.get(t.token_type.name)
        if kind is None:
            kind = "word" if t.text[:1].isalnum() or t.text[:1] in "_$@" else "punct"
        words = t.text.split() if kind == "word" else ()
        if len(words) > 1:
            at = t.start
            for part in words:  # the token's text is the statement's, so each word is found in it
                at = max(text.find(part, at, t.end + 1), at)
                out.append(Tok("word", part, at, at + len(part) - 1))
                at += len(part)
        else:
            out.append(Tok(kind, t.text, t.start, t.end))
    return out


#: the lexemes of :func:`plain_tokens`, as MySQL (and sqlglot's MySQL tokenizer) reads them:
#: spaces and comments (``--`` then a space, ``#``, ``/* */``), a string ('' or a backslash
#: escape inside), a quoted name (`` inside), a bare word, a number (with what sticks to it:
#: 0x1F, 1e5), one punctuation character. Anything else ends the match (an unclosed quote,
#: a character outside ASCII, a backslash, ``$``): the text is then not plain.
_PLAIN = re.compile(r"""
    (?P<space>[ \t\r\n\f\v]+ | --(?=[ \t\r\n\f\v]|$)[^\n]* | \#[^\n]* | /\*.*?\*/)
  | '(?P<str>(?:[^'\\]|\\.|'')*)'
  | "(?P<dstr>(?:[^"\\]|\\.|"")*)"
  | `(?P<id>(?:[^`]|``)*)`
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_$])
  | (?P<num>[0-9][A-Za-z0-9_.]*)
  | (?P<punct>[(),.;=@*+<>!%&|^~:?{}\[\]/-])
""", re.VERBOSE | re.DOTALL)


def plain_tokens(text: str) -> list[Tok] | None:
    """The tokens of ``text`` read without sqlglot, where sqlglot's MySQL tokenizer reads the
    same words, quoted names and punctuation; None when the text holds anything else (see
    ``_PLAIN``; also ``--`` without a space after it, which sqlglot takes for a comment and
    MySQL does not, and an unclosed ``/*``). A string with an escape or a doubled quote is
    of kind ``estr`` (its text is not unescaped: it is never taken for a name); a number
    is ``num``."""
    out: list[Tok] = []
    at, n = 0, len(text)
    while at < n:
        m = _PLAIN.match(text, at)
        if m is None:
            return None
        kind, at = m.lastgroup or "space", m.end()
        if kind == "space":
            continue
        value = m.group(kind)
        if kind == "punct" and value in "-/" and text.startswith("-*"[value == "/"], at):
            return None  # --x (a comment to sqlglot), or /* not closed
        if kind == "id":
            value = value.replace("``", "`")
        elif kind in ("str", "dstr"):
            kind = "estr" if "\\" in value or "'" in value or '"' in value else "str"
        out.append(Tok(kind, value, m.start(), at - 1))
    return out


class End(Exception):
    """The statement ended where more was expected."""


class Cursor:
    """A position in a statement's tokens; ``word(k)`` is the k-th next token when it is a
    bare word (upper case), else ""."""

    def __init__(self, text: str, toks: list[Tok] | None = None, head: bool = False) -> None:
        self.text = text
        self.toks = tokens(text) if toks is None else toks
        self.i = 0
        #: read the statement's head only (verb, names, IF [NOT] EXISTS...): see :func:`~.scan.read_head`
        self.head = head

    def done(self) -> bool:
        return self.i >= len(self.toks) or self.toks[self.i].text == ";"

    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def kind(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.kind if t is not None else ""

    def word(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.text.upper() if t is not None and t.kind == "word" else ""

    def punct(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.text if t is not None and t.kind == "punct" else ""

    def at(self, *words: str) -> bool:
        return all(self.word(k) == w for k, w in enumerate(words))

    def take(self, *words: str) -> bool:
        """Past ``words`` when they come next."""
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def take_punct(self, p: str) -> bool:
        if self.punct() == p:
            self.i += 1
            return True
        return False

    def closes(self) -> bool:
        """Past the ``)`` that closes a list, when it comes next; :class:`End` at the statement's end."""
        if self.done():
            raise End()
        return self.take_punct(")")

    def next(self) -> Tok:
        if self.i >= len(self.toks):
            raise End()
        self.i += 1
        return self.toks[self.i - 1]

    def name(self) -> str:
        """A name: a quoted or bare identifier (or a string, as ANSI_QUOTES reads ``"a"``)."""
        t = self.next()
        if t.kind not in ("word", "id", "str"):
            raise DdlError(f"a name was expected at {t.text!r}")
        return t.text

    def qualified(self, default_db: str | None) -> Name:
        """``db.name`` or ``name`` (in ``default_db``)."""
        first = self.name()
        if self.take_punct("."):
            return first, self.name()
        return default_db, first

    def skip_group(self) -> None:
        """Past a parenthesised group (the cursor is at its ``(``)."""
        depth = 0
        while True:
            p = self.punct()
            self.next()
            depth += (p == "(") - (p == ")")
            if depth <= 0:
                return

    def skip_one(self) -> None:
        """Past one token, or one parenthesised group."""
        if self.punct() == "(":
            self.skip_group()
        else:
            self.next()

    def skip_item(self) -> None:
        """To the next ``,`` or ``)`` at this depth (not taken), or the end."""
        while not self.done() and self.punct() not in (",", ")"):
            self.skip_one()

    def skip_value(self) -> None:
        """Past one value of DEFAULT / ON UPDATE / COMMENT: a signed literal, adjacent strings,
        a parenthesised expression, or a name with its arguments (``CURRENT_TIMESTAMP(6)``)."""
        while self.punct() in ("-", "+", "~"):
            self.next()
        t = self.next()
        if t.kind in ("intro", "str", "nstr"):
            while self.kind() in ("str", "nstr"):
                self.next()
        elif t.kind == "punct" and t.text == "(":
            self.i -= 1
            self.skip_group()
        elif t.kind == "word" and self.punct() == "(":
            self.skip_group()

    def source(self, first: Tok, last: Tok) -> str:
        """The statement's text from ``first`` to ``last``, as written."""
        return self.text[first.start: last.end + 1]
