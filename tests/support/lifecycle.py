"""The child process of the lifecycle stress suite (tests/test_lifecycle.py): opens binlogs,
ends reads early in every way a user can, closes, and reports what it saw as JSON.

Run as ``python -m tests.support.lifecycle SPEC.json``; SPEC holds ``files`` (lists of paths,
each list opened as one log), ``rounds``, ``threads`` (a list), ``delay`` (seconds every
background task waits before it runs: :data:`vecbinlog.pools.TASK_DELAY`, so that work
outliving its read is tried every time, not by chance) and ``segment_bytes``.

What it checks, in the child (a crash is the parent's to see: a signal, no report):

* every call of a compiled entry point that reads a binlog buffer gets offsets inside it (the
  calls are wrapped: a short buffer is recorded, and the kernel is not called);
* once ``close()`` returns, no task of the log runs (:func:`vecbinlog.pools.running`);
* a read ended early ends cleanly: only the errors the scenario expects (a ClosedError for a
  log closed under a read, the user's own exception) or the file's own vecbinlog error.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
import traceback
from collections import Counter
from typing import Any, Callable

import numpy as np

import vecbinlog
from vecbinlog import pools
from vecbinlog.binlog import file as file_module
from vecbinlog.binlog import gathered
from vecbinlog.decode import rowwalk

#: (entry point, where a short buffer was met, its length, the furthest offset asked)
SHORT: list[tuple[str, str, int, int]] = []
RUNNING_AFTER_CLOSE: list[str] = []


class UserError(Exception):
    """What the 'user' raises inside a loop over a read."""


def _watch(module: Any, name: str, furthest: Callable[..., int]) -> None:
    """Wrap ``module.name``: before each call, the furthest byte it will read (``furthest(*args)``)
    must be inside its buffer (args[0]); else it is recorded and the kernel not called."""
    kernel = getattr(module, name)

    def checked(*args: Any, **kwargs: Any) -> Any:
        buf = args[0]
        reach = furthest(*args)
        if reach > len(buf):
            SHORT.append((name, threading.current_thread().name, len(buf), int(reach)))
            raise RuntimeError(f"{name}: a buffer of {len(buf)} bytes, offsets up to {reach}")
        return kernel(*args, **kwargs)

    setattr(module, name, checked)


def _max(a: np.ndarray) -> int:
    return int(a.max()) if len(a) else 0


def install_watches() -> None:
    _watch(file_module, "first_mismatch", lambda buf, start, end, *rest: _max(end))
    _watch(file_module, "walk_headers", lambda buf, start, stop, limit, *rest: limit)
    _watch(rowwalk, "walk_rows_headers", lambda buf, offset, post_header, end, *rest: _max(end))
    _watch(rowwalk, "walk_row_images", lambda buf, bitmaps, end, *rest: _max(end))
    _watch(gathered, "_copy_events", lambda src, start, size, *rest: _max(start + size))


def _closed(log: vecbinlog.Binlog, label: str) -> None:
    log.close()
    if pools.running():
        RUNNING_AFTER_CLOSE.append(f"{label}: {pools.running()} task(s)")


def scenario(files: list[str], how: str, threads: int, segment_bytes: int, outcomes: Counter) -> None:
    """Open ``files`` as one log, end a read the way ``how`` says, close; count the outcome."""
    label = f"{how} t{threads} {files[0]}"
    try:
        log = vecbinlog.open(files, threads=threads, segment_bytes=segment_bytes)
    except vecbinlog.BinlogError as exc:
        outcomes[f"open: {type(exc).__name__}"] += 1
        return
    try:
        if how == "tables":
            log.tables
        elif how == "schema":
            for t in log.tables:
                log.schema(t)
        elif how == "info":
            log.info(rows=True)
        elif how == "first_batch":
            for t in log.tables:
                for _ in log.iter_batches(t):
                    break
        elif how == "first_of_tables":
            for _ in log.iter_tables():
                break
        elif how == "dropped":
            gen = log.iter_tables()
            next(gen, None)
            del gen  # not closed: dropped, as a user's loop variable goes
        elif how == "raised":
            try:
                for _ in log.iter_tables():
                    raise UserError
            except UserError:
                pass
        elif how == "read_then_tables":  # a whole read, then the planned runs of every table
            log.read_all()
            for t in log.tables:
                for _ in log.iter_batches(t):
                    break
        elif how == "closed_under":  # close() from another thread while this one reads
            closer = threading.Timer(0.002, _closed, (log, label))
            closer.start()
            try:
                for _ in log.iter_tables():
                    time.sleep(0.001)
            except vecbinlog.ClosedError:
                outcomes["closed under a read: ClosedError"] += 1
            closer.join()
        else:
            raise ValueError(how)
        outcomes[f"{how}: ended"] += 1
    except vecbinlog.ClosedError:
        outcomes[f"{how}: ClosedError"] += 1
    except (vecbinlog.BinlogError, vecbinlog.TableNotFoundError) as exc:
        outcomes[f"{how}: {type(exc).__name__}"] += 1  # the file's own error (a corrupt corpus file)
    finally:
        _closed(log, label)
        try:  # and any use after close is an error, not a read of freed memory
            log.read_all()
            outcomes["used after close: no error"] += 1
        except vecbinlog.ClosedError:
            pass
    gc.collect()


HOWS = ["tables", "schema", "info", "first_batch", "first_of_tables", "dropped", "raised", "read_then_tables",
        "closed_under"]


def main(spec_path: str) -> None:
    spec = json.loads(open(spec_path).read())
    pools.TASK_DELAY = spec["delay"]
    install_watches()
    import warnings

    warnings.simplefilter("ignore")  # (the corpus' cut files warn; what counts here is what is raised)
    outcomes: Counter = Counter()
    unexpected: list[str] = []
    for _ in range(spec["rounds"]):
        for files in spec["files"]:
            for threads in spec["threads"]:
                for how in spec.get("hows", HOWS):
                    try:
                        scenario(files, how, threads, spec["segment_bytes"], outcomes)
                    except Exception:  # noqa: BLE001 - anything else is a finding, reported
                        unexpected.append(f"{how} t{threads} {files}: {traceback.format_exc(limit=6)}")
    print(json.dumps({"short": SHORT, "running_after_close": RUNNING_AFTER_CLOSE, "unexpected": unexpected,
                      "outcomes": dict(outcomes), "running_at_exit": pools.running()}))


if __name__ == "__main__":
    main(sys.argv[1])
