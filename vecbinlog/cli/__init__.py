"""The ``vecbinlog`` command line: look into binlogs and export their change logs.

Commands: ``info``, ``tables``, ``cat``, ``snapshot``, ``to-parquet``, ``events``, ``verify``.
Run ``vecbinlog COMMAND --help``; every command and option is in ``docs/cli.md``.

Exit codes: 0 success, 1 a file could not be read (a :class:`vecbinlog.BinlogError`, an
OS error such as a missing file, or an ``--index`` that does not hold the files as they are:
:class:`vecbinlog.ArchiveIndexError`), 2 bad usage. Errors are one line on stderr,
``vecbinlog: error: <file>, offset N, EVENT: message`` (a bad option: the argument and the
command's ``--help``); ``--debug`` adds the traceback.

The package: :mod:`~vecbinlog.cli.parser` (the arguments), :mod:`~vecbinlog.cli.commands` (one
function per command), :mod:`~vecbinlog.cli.writers` (output files),
:mod:`~vecbinlog.cli.progress` (the progress bar), :mod:`~vecbinlog.cli.words` (the library's
messages with the flags for its options), and how values are printed (``cat``,
``to-parquet --format csv``, ``snapshot OUT.csv``): :mod:`~vecbinlog.cli.text` (a whole column's
values as text), :mod:`~vecbinlog.cli.buffers` (string arrays as NumPy buffers),
:mod:`~vecbinlog.cli.widths` (terminal widths of table cells) and :mod:`~vecbinlog.cli.lines` (one
compiled loop writes the lines).
"""

from __future__ import annotations

import ctypes
import os
import sys
import traceback
import warnings
from typing import NoReturn, Sequence, TextIO

from ..errors import ArchiveIndexError, BinlogError, TableNotFoundError
from .parser import PROG, UsageError, build_parser
from .words import cli_words

__all__ = ["main", "run"]


def _warn_line(msg: str) -> None:
    """A warning as one line on stderr (in the command line's words), above the progress bar."""
    line = f"{PROG}: warning: {_one_line(msg)}"
    try:
        from tqdm import tqdm

        tqdm.write(line, file=sys.stderr)
    except ImportError:  # pragma: no cover
        print(line, file=sys.stderr)


def _one_line(text: object) -> str:
    """A message on one line, in the command line's words (:func:`~vecbinlog.cli.words.cli_words`)."""
    return cli_words(" ".join(str(text).split()))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (``sys.exit(main())``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.debug = getattr(args, "debug", False)
    args.quiet = getattr(args, "quiet", False)
    seen: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None,
             line: str | None = None) -> None:
        text = str(message)
        if args.quiet or text in seen:
            return
        seen.add(text)
        _warn_line(text)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            from .commands import COMMANDS  # after parsing: --help and bad usage load no NumPy, Arrow, numba

            return int(COMMANDS[args.command](args) or 0)
    except (UsageError, TableNotFoundError) as exc:  # found after parsing: one line, as the errors of the files
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (BinlogError, ArchiveIndexError) as exc:  # (an index that is not of the files, or not current)
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return 0
        if args.debug:
            traceback.print_exc()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{PROG}: error: {where}{_one_line(exc.strerror or exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so, in one line unless --debug
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: internal error: {type(exc).__name__}: {_one_line(exc)}"
              + ("" if args.debug else " (run with --debug for the traceback)"), file=sys.stderr)
        return 1
    return 0  # pragma: no cover


def _keep_freed_memory() -> None:
    """glibc's malloc, for this process: memory freed stays in the process for the next
    batch's buffers (one arena, no trimming, no separate mappings below 32 MB), instead of
    being given back and faulted in (and zeroed) again page by page. ``cat`` of a 61 MB binlog:
    61 k -> 43 k page faults, CPU time -9%, the same peak memory. Elsewhere: nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # glibc's malloc.h
    mallopt(M_MMAP_THRESHOLD, 32 << 20)
    mallopt(M_TRIM_THRESHOLD, 512 << 20)
    mallopt(M_ARENA_MAX, 1)


def run() -> NoReturn:
    """The ``vecbinlog`` script and ``python -m vecbinlog``: :func:`main`, then the process
    ends at once. Its output is flushed and its files closed by then; what the interpreter would
    still do (finalizing numba's and LLVM's objects, module teardown) takes 0.4-0.6 s here, a
    quarter of a ``cat`` of 90 MB, for nothing (``main()`` called from Python returns as usual).
    A process of its own: malloc keeps what it frees (:func:`_keep_freed_memory`)."""
    _keep_freed_memory()
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _silence_stdout()
        except (OSError, ValueError):
            code = code or 1
    os._exit(code)


def _silence_stdout() -> None:
    """After a closed pipe (``vecbinlog cat ... | head``): no second error at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
