"""Whether the command line draws a progress bar: the library's (``open(progress=...)``, binlog
bytes done, rows and rows/s) on stderr, when stderr is a terminal and ``--quiet`` is not given."""

from __future__ import annotations

import sys


def stderr_isatty() -> bool:
    """Whether stderr is a terminal (False when it is closed or replaced)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
