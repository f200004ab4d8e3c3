"""The command line run as a process, and the library's reading of the same files that what it
writes and prints is compared with (tests/cli/test_cli.py, tests/cli/test_cli_outputs.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import shutil
import subprocess
import sys
import warnings

import pyarrow as pa

import vecbinlog

from ..conftest import DATA

#: the sample binlog of data/sample (MariaDB 10.11)
SAMPLE = DATA / "sample" / "mariadb-bin.000001"
#: the installed ``vecbinlog`` console script (None when it is not installed)
EXE = shutil.which("vecbinlog")


def run(*args: str, module: bool = False, check: int | None = 0) -> subprocess.CompletedProcess:
    """``vecbinlog *args`` as a process (the console script, or ``python -m vecbinlog`` with
    ``module``), its exit status checked to be ``check`` unless None."""
    if module:
        cmd = [sys.executable, "-m", "vecbinlog", *args]
    else:
        assert EXE, "the vecbinlog console script is not installed (pip install -e .)"
        cmd = [EXE, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=300)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return p


def reference(path, table: str, **options) -> pa.Table:
    """``read_table`` of the library, the reference of what the command line writes (no TruncatedWarning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.TruncatedWarning)
        return vecbinlog.read_table(path, table, **options)


def tables_of(path, **options) -> list[str]:
    """The tables the library finds in ``path`` (no TruncatedWarning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.TruncatedWarning)
        with vecbinlog.open(path, **options) as log:
            return log.tables


# -- the documented JSON rendering of to_pylist() values, written again here -------------
def json_rows(t: pa.Table) -> list[dict]:
    """The rows of ``t`` as ``cat --format jsonl`` renders them: ``as_json`` of each value;
    floats are the shortest text that reads back as the value (a FLOAT's as a float32)."""
    cols = {}
    for name in t.column_names:
        col = t.column(name)
        if pa.types.is_floating(col.type):  # FLOAT 12345.679 is printed so, not as the double 12345.6787...
            cols[name] = [None if x is None else json.loads(x) for x in col.cast(pa.string()).to_pylist()]
        else:
            cols[name] = [as_json(v) for v in col.to_pylist()]
    return [dict(zip(cols, row)) for row in zip(*cols.values())]


def as_json(v):
    """One to_pylist() value as ``cat --format jsonl`` renders it (bytes as hex, exact decimals...)."""
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dt.timedelta):
        us = v // dt.timedelta(microseconds=1)
        sign, us = ("-" if us < 0 else ""), abs(us)
        s, frac = divmod(us, 10**6)
        text = f"{sign}{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
        return text + (f".{frac:06d}" if frac else "")
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")  # the exact text, never 1E-8
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else str(v)
    if isinstance(v, list):
        return [as_json(x) for x in v]
    if isinstance(v, dict):
        return {k: as_json(x) for k, x in v.items()}
    return v
