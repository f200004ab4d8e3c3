"""Fuzzing the archive index: a damaged index file is named as damaged.

An index lives in object storage for months and is copied: it is input, as a binlog is. Six
binlogs a real MariaDB server wrote (two tables, a column added, a table dropped and created
again with other types, a rename, a type widened, GTIDs, a file of 30 transactions; each
phase at a time of its own, ``SET TIMESTAMP``) are indexed once. Each example damages one
of the index's files with the fuzz suite's mutator (tests/support/fuzzing.py: bit flips,
bytes and words set, zeroed runs, truncation; derandomized): the gathered
``_archive.parquet``, or a binlog's own index file, with the gathered file taken away so that
the plan reads it. Then it asks what a driver asks: plans (1-byte splits; of one table; of a
time window; of a GTID set), and ``open(..., index=)``'s ``tables``, ``info(rows=True)``,
``schema`` and ``table_maps`` of every table.

The rule: each answer equals the intact index's, exactly, or the call raises an
:class:`vecbinlog.ArchiveIndexError` whose message names the damaged file. Never another
exception, never another answer without an error, never a hang (the fuzz suite's alarm). The
intact index's answers are those of walking the binlogs (no index). And ``build_index`` over
a damaged index warns (``ArchiveIndexWarning`` only) and leaves the index the intact one:
the damaged rows indexed again, none kept.

``VECBINLOG_FUZZ_EXAMPLES`` scales the number of examples (e.g. 10 for a long local run).
"""

from __future__ import annotations

import itertools
import shutil
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pyarrow.parquet as pq
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import vecbinlog
from vecbinlog.index import GATHERED_NAME, INDEX_SUFFIX, build_index
from vecbinlog.splits import plan_splits

from .support.fuzzing import ALARM_S, alarm, apply_edits, byte_mutations, settings_for
from .support.mariadb import copy_binlogs

pytestmark = pytest.mark.mariadb

T0 = 1_700_000_000  #: phase k's events are at T0 + 1000 k (SET TIMESTAMP)
#: the statements of each binlog (one file per phase), in database fzi
PHASES = [
    ["CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO a VALUES (1, 'one'), (2, 'two')",
     "CREATE TABLE b (k BIGINT UNSIGNED PRIMARY KEY, t DATETIME(3))",
     "INSERT INTO b VALUES (18446744073709551615, '2020-01-02 03:04:05.678')"],
    ["ALTER TABLE a ADD COLUMN w INT", "INSERT INTO a VALUES (3, 'three', 3)",
     "BEGIN", "UPDATE a SET v = 'ONE' WHERE id = 1", "DELETE FROM b", "COMMIT"],
    ["INSERT INTO b VALUES (5, NULL)", "DROP TABLE a", "CREATE TABLE a (id INT PRIMARY KEY, d DECIMAL(6,2))",
     "INSERT INTO a VALUES (4, 1.25)"],
    [f"INSERT INTO b VALUES ({i}, '2021-01-01')" for i in range(10, 40)],
    ["ALTER TABLE b MODIFY t DATETIME(6)", "UPDATE b SET t = '2022-02-02 02:02:02.123456' WHERE k < 20",
     "INSERT INTO a VALUES (5, 5.5)"],
    ["RENAME TABLE a TO c", "INSERT INTO c VALUES (6, 6.25)", "DELETE FROM b WHERE k > 30"],
]
TABLES = ["fzi.a", "fzi.b", "fzi.c"]


@dataclass(frozen=True)
class Archive:
    files: list[str]  #: the binlogs, copied
    location: Path  #: their index, intact
    gtids: str  #: the GTIDs of the fourth file but its first and last
    answers: dict[str, Any] = field(repr=False)  #: what the intact index answers

    def __repr__(self) -> str:
        return f"Archive({len(self.files)} binlogs, their index at {self.location})"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        # hypothesis prints a test's arguments so: printed field by field (the intact plan's
        # DDL states...), a failing example was reported as a FlakyStrategyDefinition
        p.text(repr(self))


def _opened(fn: Callable[[vecbinlog.Binlog], Any]) -> Callable[[Archive, Path], Any]:
    def answer(a: Archive, loc: Path) -> Any:
        with vecbinlog.open(a.files, index=loc) as log:
            return fn(log)
    return answer


#: what a driver asks of an index: name -> (archive, index location) -> the answer
OPERATIONS: dict[str, Callable[[Archive, Path], Any]] = {
    "plan": lambda a, loc: plan_splits(a.files, 1, index=loc),
    "plan of a table": lambda a, loc: plan_splits(a.files, 1 << 20, index=loc, tables="fzi.a"),
    "plan of a time window": lambda a, loc: plan_splits(a.files, 1 << 20, index=loc, since=_at(2000), until=_at(4000)),
    "plan of GTIDs": lambda a, loc: plan_splits(a.files, 1 << 20, index=loc, gtids=a.gtids),
    "tables": _opened(lambda log: log.tables),
    "info": _opened(lambda log: log.info(rows=True)),
    "schema": _opened(lambda log: {t: log.schema(t) for t in TABLES}),
    "table_maps": _opened(lambda log: {t: log.table_maps(t) for t in TABLES}),
}


def _at(seconds: int) -> str:
    return datetime.fromtimestamp(T0 + seconds, timezone.utc).isoformat()


def answers(archive: Archive, location: Path) -> dict[str, Any]:
    """Each operation's answer, or the ArchiveIndexError it raised (anything else fails the test)."""
    out: dict[str, Any] = {}
    for name, op in OPERATIONS.items():
        try:
            with alarm(ALARM_S):
                out[name] = op(archive, location)
        except vecbinlog.ArchiveIndexError as exc:
            out[name] = exc
    return out


@pytest.fixture(scope="module")
def archive(mariadb_server, tmp_path_factory) -> Archive:
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS fzi", "CREATE DATABASE fzi")
    s.flush_binary_logs()
    first = s.current_binlog()
    for k, statements in enumerate(PHASES):
        s.execute(f"SET TIMESTAMP = {T0 + 1000 * k}", *statements, database="fzi")
        s.flush_binary_logs()
    written = s.binlog_files()
    folder = tmp_path_factory.mktemp("fuzzed-index")
    files = [str(f) for f in copy_binlogs(written[written.index(first):-1], folder)[0]]
    assert len(files) == len(PHASES)
    location = folder / "index"
    build_index(files, location, processes=1)
    with vecbinlog.open(files) as log:
        walked_info = log.info(rows=True)
        walked = {"tables": log.tables, "schema": {t: log.schema(t) for t in TABLES},
                  "table_maps": {t: log.table_maps(t) for t in TABLES}}
    (source, lo), (_, hi) = (walked_info["files"][3]["gtids"][k].rsplit("-", 1) for k in ("first", "last"))
    gtids = f"{source}-{int(lo) + 1}..{int(hi) - 1}"  # (MariaDB: domain-server-first..last)
    intact = answers(Archive(files, location, gtids, {}), location)
    # the intact index answers as the binlogs walked do (no index), and prunes as the times and GTIDs set say
    assert intact["plan"] == plan_splits(files, 1)
    assert intact["info"] == walked_info
    assert {k: intact[k] for k in walked} == walked
    assert {s.path for s in intact["plan of a time window"]} == set(files[2:4])
    assert {s.path for s in intact["plan of GTIDs"]} == {files[3]}
    assert intact["tables"] == TABLES and {s.path for s in intact["plan of a table"]} == {files[k] for k in (0, 1, 2, 4)}
    return Archive(files, location, gtids, intact)


_examples = itertools.count()


def damaged_copy(archive: Archive, tmp_path: Path, target: str, edits) -> Path:
    """A copy of the intact index with ``target`` damaged by ``edits``; a binlog's own file is
    read only when the gathered file has no current row of it: then the copy has none."""
    location = tmp_path / f"index-{next(_examples)}"
    shutil.copytree(archive.location, location)
    if target != GATHERED_NAME:
        (location / GATHERED_NAME).unlink()
    path = location / target
    path.write_bytes(bytes(apply_edits(bytearray(path.read_bytes()), edits)))
    return location


def index_files(archive: Archive) -> tuple[tuple[str, int], ...]:
    """Each index file's name and size."""
    names = [GATHERED_NAME] + [Path(f).name + INDEX_SUFFIX for f in archive.files]
    return tuple((name, (archive.location / name).stat().st_size) for name in names)


@st.composite
def damage(draw, sizes: tuple[tuple[str, int], ...]):
    """(the index file damaged, the edits), of the files and sizes of ``sizes``."""
    target, size = draw(st.sampled_from(sizes), label="target")
    return target, draw(byte_mutations(size, runs=True, cuts=True), label="edits")


@settings_for(400)
@given(data=st.data())
def test_a_damaged_index_answers_as_the_intact_one_or_is_named(archive, tmp_path, data):
    target, edits = data.draw(damage(index_files(archive)))
    location = damaged_copy(archive, tmp_path, target, edits)
    for name, got in answers(archive, location).items():
        if isinstance(got, vecbinlog.ArchiveIndexError):
            assert str(location / target) in str(got), f"{name}: the error does not name {target}: {got}"
            note(f"{name}: {got}")
        else:
            assert got == archive.answers[name], f"{name}: another answer than the intact index's, and no error"


def _rows(location: Path) -> dict[str, dict[str, dict]]:
    """Each index file's rows, by binlog name."""
    return {p.name: {r["name"]: r for r in pq.read_table(p).to_pylist()} for p in sorted(location.glob("*.parquet"))}


@settings_for(120)
@given(data=st.data())
def test_a_build_over_a_damaged_index_indexes_the_damaged_rows_again(archive, tmp_path, data):
    """build_index over a damaged index: only ArchiveIndexWarnings, and then the index files
    hold the intact index's rows (none of the damaged kept), and answer as it does."""
    target, edits = data.draw(damage(index_files(archive)))
    location = damaged_copy(archive, tmp_path, target, edits)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with alarm(ALARM_S):
            build_index(archive.files, location, processes=1)
    assert all(issubclass(w.category, vecbinlog.ArchiveIndexWarning) for w in caught), [str(w.message) for w in caught]
    note(f"warned: {[str(w.message) for w in caught]}")
    assert _rows(location) == _rows(archive.location)
    assert answers(archive, location) == archive.answers
