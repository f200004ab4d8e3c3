"""Coverage-guided fuzz target for vecbinlog (atheris / libFuzzer).

The rule under test (the same as tests/test_fuzz.py): whatever the bytes of a file,
``vecbinlog.open(path, verify_checksums=False)`` and then ``read_all()``, ``events()``
and ``info()`` either work or raise a :class:`vecbinlog.BinlogError`. Any other
exception propagates, so libFuzzer writes a ``crash-<sha1>`` file with the input.

Each input is turned into a file in one of two ways:

* input starting with the magic ``\\xfebin``: the input *is* the file (the seed corpus is
  whole real binlogs, so mutations of real files are explored);
* any other input: a real prefix (the magic and the FORMAT_DESCRIPTION event of one of
  the seed files, chosen by the first input byte) followed by the rest of the input, so
  the fuzzer spends its time on the events after a valid FDE.

Set up and run (Python 3.11, ``pip install atheris``)::

    mkdir -p bench/fuzz/corpus
    python bench/fuzz/fuzz_binlog.py --make-seeds bench/fuzz/corpus   # copies the seed files
    python bench/fuzz/fuzz_binlog.py -runs=1000000 -max_total_time=600 -timeout=20 \\
        -rss_limit_mb=4096 -max_len=16384 /tmp/fuzzwork bench/fuzz/corpus

libFuzzer adds the new inputs it finds to the *first* corpus folder: to keep
bench/fuzz/corpus as the seeds only, put a scratch folder first
(``... /tmp/fuzzwork bench/fuzz/corpus``). Crashes are written as ``crash-<sha1>`` (in the
current folder, or ``-artifact_prefix=``) and the run stops. Python-level coverage of
vecbinlog only (NumPy, pyarrow and pandas are imported uninstrumented). The libFuzzer
process's RSS grows by about 3 MB per thousand runs (seen: 2 GB after 470,000 runs); that
is atheris/libFuzzer, not vecbinlog (a plain loop over 22,000 mutated files stays flat), so
keep ``-rss_limit_mb`` high for long runs.

All other arguments are libFuzzer's (``-jobs``, ``-workers``, ``-artifact_prefix=...``,
``-max_len``...). To replay one input: ``python bench/fuzz/fuzz_binlog.py crash-<sha1>``.
The seed files come from the shared corpus (``VECBINLOG_CORPUS``, default
``../shared/corpus`` next to the repo). Findings are kept as regression tests in
tests/test_fuzz_regressions.py with their bytes in tests/data/fuzz/.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("VECBINLOG_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()

SEEDS = [
    "blackbeam__rust_mysql_common/mysql-enum-string-set.000001",  # MySQL 8.0, CRC32, ENUM/SET
    "zalora__binlog-parser/fixtures/mysql-bin.01",  # MySQL 5.6, rows v2
    "harubot__mysqlbinlog2/mysql-bin.000001",  # MySQL 5.5, rows v1
    "blackbeam__rust_mysql_common/vector.binlog",  # MySQL 9.0, VECTOR
    "blackbeam__rust_mysql_common/mariadb-bin.000001",  # MariaDB, CRC32
]

MAGIC = b"\xfebin"

# Only vecbinlog's own code is instrumented: import its dependencies first, plainly.
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401
import pyarrow  # noqa: E402,F401
import pyarrow.compute  # noqa: E402,F401

with atheris.instrument_imports(include=["vecbinlog"]):
    import vecbinlog


def _fde_prefix(data: bytes) -> bytes:
    """The magic and the first event (the FDE) of a real binlog."""
    size = int.from_bytes(data[4 + 9 : 4 + 13], "little")
    return data[: 4 + size]


PREFIXES = [_fde_prefix((CORPUS / s).read_bytes()) for s in SEEDS if (CORPUS / s).exists()]

# The input file: created and unlinked at once, and reopened by vecbinlog through
# /proc/self/fd, so nothing is left behind however libFuzzer exits (it does not return).
_FD = tempfile.TemporaryFile(prefix="vecbinlog-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
_FILE = Path(f"/proc/self/fd/{_FD.fileno()}")


def to_file_bytes(data: bytes) -> bytes:
    """The binlog file an input stands for (see the module docstring)."""
    if data.startswith(MAGIC) or not data or not PREFIXES:
        return data
    return PREFIXES[data[0] % len(PREFIXES)] + data[1:]


def check(path: Path) -> None:
    """Decode the file every way the rule covers; only BinlogError may come out."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with vecbinlog.open(path, verify_checksums=False) as log:
                log.read_all()
                log.events()
                log.info()
    except vecbinlog.BinlogError:
        pass


def TestOneInput(data: bytes) -> None:
    content = to_file_bytes(data)
    os.ftruncate(_FD.fileno(), 0)
    os.pwrite(_FD.fileno(), content, 0)
    check(_FILE)


def make_seeds(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for s in SEEDS:
        src = CORPUS / s
        if src.exists():
            shutil.copyfile(src, dest / s.replace("/", "__"))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--make-seeds":
        make_seeds(Path(sys.argv[2]))
        return
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
