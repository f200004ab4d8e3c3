"""The library's messages in the command line's words.

Errors and warnings come from the Python API and name its options (``strict=True``,
``tables=['shop.c*']``, ``snapshot(table, key=[...])``); on the command line the same thing is
a flag (``--strict``, ``--tables shop.c*``, ``--key COLUMNS``). The library keeps its words;
the command line translates them, by the table :data:`API_WORDS`, before printing a message.
"""

from __future__ import annotations

import ast
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


#: (a pattern of the API's words, the command line's words for it), applied in order.
API_WORDS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(pattern), words) for pattern, words in (
        (r"tables=(\[[^\]]*\])", _tables_flag),
        (r"snapshot\(table, key=\[\.\.\.\]\)", "--key COLUMNS"),
        (r"\bkey=\[\.\.\.\]", "--key COLUMNS"),
        (r"\bstrict=True\b", "--strict"),
        (r"\bverify_checksums=False\b", "--no-verify-checksums"),
        (r"""\binvalid_dates=["']string["']""", "--invalid-dates string"),
        (r"""\brolled_back=["']keep["']""", "--rolled-back keep"),
        (r"""\brolled_back=["']exclude["']""", "--rolled-back exclude"),
        (r"\bqueries=True\b", "--queries"),
        (r"^(until|since|start|stop|gtids|change_types): ", lambda m: "--" + m.group(1).replace("_", "-") + ": "),
        (r"read it with iter_batches\(\) or name its charset with charsets=",
         "read it with the Python API: iter_batches(), or vecbinlog.open(..., charsets=) naming its charset"),
    )
)


def cli_words(message: str) -> str:
    """``message`` (an error's or a warning's) with the API's option names as the flags that set them."""
    for pattern, words in API_WORDS:
        message = pattern.sub(words, message)
    return message
