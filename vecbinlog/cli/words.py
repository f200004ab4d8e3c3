"""The library's messages in the command line's words.

Errors and warnings come from the Python API and name its options (``strict=True``,
``tables=['shop.c*']``, ``snapshot(table, key=[...])``); on the command line the same thing is
a flag (``--strict``, ``--tables shop.c*``, ``--key COLUMNS``). The library keeps its words;
the command line translates them, by the table :data:`API_WORDS`, before printing a message.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable

__all__ = ["API_WORDS", "cli_words"]


def _tables_flag(match: re.Match[str]) -> str:
    """``tables=['a.*', 'b.c']`` -> ``--tables a.*,b.c``."""
    try:
        patterns = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return "--tables " + match.group(1)
    return "--tables " + ",".join(str(p) for p in patterns)


def _charsets_flag(match: re.Match[str]) -> str:
    """``charsets={'db.t': {'c': 'binary'}}`` as the flag that sets it (JSON, quoted for a shell)."""
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return "--charsets " + match.group(1)
    return "--charsets '" + json.dumps(value) + "'"


#: (a pattern of the API's words, the command line's words for it), applied in order: the
#: options named by the messages that reach the command line (``tests/cli/test_cli_outputs.py``
#: makes each but the last from real binlogs).
API_WORDS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(pattern), words) for pattern, words in (
        (r"tables=(\[[^\]]*\])", _tables_flag),  # TableNotFoundError
        (r"snapshot\(table, key=\[\.\.\.\]\)", "--key COLUMNS"),  # a table without a primary key
        (r"\bstrict=True\b", "--strict"),  # TruncatedWarning
        (r"\bverify_checksums=False\b", "--no-verify-checksums"),  # ChecksumError
        (r"""\binvalid_dates=["']string["']""", "--invalid-dates string"),  # zero dates
        (r"""\brolled_back=["']keep["']""", "--rolled-back keep"),  # rows left out
        (r"^until: ", "--until: "),  # snapshot's point not in the files
        (r"charsets=(\{'[^{}]*': \{[^{}]*\}\})", _charsets_flag),  # text invalid in its charset (last: no binlog here)
    )
)


def cli_words(message: str) -> str:
    """``message`` (an error's or a warning's) with the API's option names as the flags that set them."""
    for pattern, words in API_WORDS:
        message = pattern.sub(words, message)
    return message
