"""Warnings a user can act on: each once per read, pointing at the user's call (issue 37, item 8).

Every warning is recorded (``simplefilter("always")``, so Python's own once-per-location filter
hides nothing): a read gives each warning once, and its ``filename`` is this file, whichever
API made the read and however deep in vecbinlog the cause was found. What each warning says
is checked against ``mariadb-binlog -vv``'s listing of the sample (data/sample).
"""

from __future__ import annotations

import re
import shutil
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest

import vecbinlog

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
LISTING = (SAMPLE / "mariadb-binlog-vv.txt").read_text()
TABLE = "shop.orders"


def _event_at(cut: int) -> int:
    """The offset of the event the listing has ``cut`` inside (``# at N`` lines)."""
    return max(int(n) for n in re.findall(r"^# at (\d+)$", LISTING, re.M) if int(n) <= cut)


def _read(api: str, source, **options) -> None:
    """One read through ``api``: the calls a user writes (the warnings must point here)."""
    if api == "read_table":
        vecbinlog.read_table(source, TABLE, **options)
    elif api == "read_all":
        with vecbinlog.open(source, **options) as log:
            log.read_all()
    else:
        with vecbinlog.open(source, **options) as log:
            for _ in log.iter_batches(TABLE):
                pass


def _recorded(read: Callable[[], None]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        read()
    return [w for w in record if issubclass(w.category, UserWarning)]


def _cut_sample(tmp_path: Path) -> tuple[Path, int]:
    """The sample cut inside the XID event of the DELETE's transaction: its row image has no
    end in the file (left out), and the file ends inside an event."""
    listing_xids = [int(m) for m in re.findall(r"^# at (\d+)\n#\d+ [\d:]+ server id 1\s+end_log_pos \d+ CRC32 "
                                               r"0x[0-9a-f]+ \tXid", LISTING, re.M)]
    delete = LISTING.index("### DELETE FROM `shop`.`orders`")
    xid = next(x for x in listing_xids if LISTING.index(f"# at {x}\n") > delete)
    cut = xid + 17
    path = tmp_path / "mariadb-bin.000001"
    path.write_bytes((SAMPLE / "mariadb-bin.000001").read_bytes()[:cut])
    return path, cut


APIS = ["read_table", "read_all", "iter_batches"]


@pytest.mark.parametrize("api", APIS)
def test_a_cut_file(tmp_path, api):
    path, cut = _cut_sample(tmp_path)
    got = _recorded(lambda: _read(api, path))
    assert Counter(w.category for w in got) == {vecbinlog.TruncatedWarning: 1, vecbinlog.DecodeWarning: 1}
    assert all(w.filename == __file__ for w in got), [(w.filename, w.lineno) for w in got]
    truncated = next(str(w.message) for w in got if w.category is vecbinlog.TruncatedWarning)
    assert f"reading stopped at offset {_event_at(cut)}" in truncated
    left_out = next(str(w.message) for w in got if w.category is vecbinlog.DecodeWarning)
    assert left_out.startswith(f"{TABLE}: 1 row images left out")  # the listing's one DELETE after the last XID
    assert LISTING[LISTING.index(f"# at {_event_at(cut)}"):].count("### DELETE") == 0


@pytest.mark.parametrize("api", APIS)
def test_a_schema_that_does_not_match(api):
    listed = set(re.findall(r"^###   @(\d+)=", LISTING[LISTING.index("### INSERT INTO `shop`.`orders`"):], re.M))
    got = _recorded(lambda: _read(api, SAMPLE / "mariadb-bin.000001", ddl=False,
                                  schema="CREATE TABLE shop.orders (a INT, b DATE)"))
    assert [w.category for w in got] == [vecbinlog.SchemaWarning]
    assert got[0].filename == __file__
    assert f"(it has 2 columns, the TABLE_MAP {len(listed)})" in str(got[0].message)


@pytest.mark.parametrize("api", APIS)
def test_files_out_of_chain(tmp_path, api):
    rotated_to = re.search(r"\tRotate to (\S+)\s+pos: 4", LISTING).group(1)
    other = tmp_path / "mariadb-bin.000002"
    shutil.copy(SAMPLE / "mariadb-bin.000001", other)
    got = _recorded(lambda: _read(api, [SAMPLE / "mariadb-bin.000001", other]))
    assert [w.category for w in got] == [vecbinlog.BinlogSetWarning]
    assert got[0].filename == __file__
    assert f"rotates to {rotated_to!r} but the next file given is 'mariadb-bin.000002'" in str(got[0].message)


def test_default_filter_shows_a_warning_once_per_line(tmp_path):
    """With Python's default filter, the same warning from the same line of the user's is shown
    once: the location is the user's, not a line inside vecbinlog that every read shares."""
    path, _ = _cut_sample(tmp_path)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        for _ in range(3):
            vecbinlog.read_table(path, TABLE)
    assert Counter(w.category for w in record) == {vecbinlog.TruncatedWarning: 1, vecbinlog.DecodeWarning: 1}
