"""Fuzzing: malformed, truncated and hostile binlogs must fail cleanly.

The rule the library obeys: whatever the bytes of a file, ``open()``, ``read_all()``,
``events()``, ``info()`` (and ``info(rows=True)``), ``tables``, ``verify()`` and the archive
index's summary of the file either work or raise a
:class:`vecbinlog.BinlogError` subclass that says where (``.path``, ``.offset``,
``.event_type``): never a bare IndexError/ValueError/KeyError/OverflowError/MemoryError
from Python or NumPy, never a hang, never a huge allocation, never rows silently dropped.
A cut last event gives a :class:`vecbinlog.TruncatedWarning` (``strict=True``: a
:class:`vecbinlog.TruncatedError`).

Real binlogs of the shared corpus (several servers, checksum on and off, rows v1 and v2)
are mutated by hypothesis: truncation at any offset, bit flips, overwrites with random and
boundary values (0x00, 0xff, the 0xfb-0xfe packed-integer markers), boundary values of
whole header fields, splices of two files, events duplicated/removed/swapped (boundaries
from the reference decoder's walk of the 19-byte headers), and targeted, structure-aware mutations
(a TABLE_MAP column count of 2**40, a length prefix that runs past the event, a rows event
whose column count or table id disagrees with the TABLE_MAPs, event sizes < 19 or past the
end). Mutated CRC32 files are read both with checksum verification (mostly ChecksumError)
and without it, and with the CRC32s recomputed after the mutation so that the structural
checks, not the checksum, are what is exercised.

Every example runs in this process under a hard alarm (a hang fails the test; no tighter
time is asserted), and its peak memory (tracemalloc for NumPy/Python, the Arrow
pool's high-water mark for Arrow) is bounded by a multiple of the file size.

Examples are derandomized so CI runs the same ones every time (about 50 s for the file on
2 cores). ``VECBINLOG_FUZZ_EXAMPLES`` scales the number of examples (e.g. 10 for a long
local run).

Besides the rule, what can be checked against the reference decoder (tests/support/
reference.py; mutated events rebuilt with tests/support/builder.py) is: for
every file, ``events()`` lists exactly the complete events and ``info()`` counts them (and the
index's summary counts them so too); rows
only come from rows events; a file cut at any offset decodes to exactly the rows of the
events before the cut; ``segment_bytes`` and ``batch_rows`` never change the outcome; a rows event whose
column count or table id disagrees with the TABLE_MAPs is never decoded.

Bugs found are kept at the end: ``test_found_*`` for the ones since fixed (plain
regression tests), ``test_bug_*`` marked ``xfail(strict=True)`` for the open ones, so that
they flip when fixed. The property tests tolerate exactly the open bugs listed in
``KNOWN_BUGS`` (matched by exception type and the vecbinlog function that raised) so that
they keep finding *other* bugs; ``VECBINLOG_FUZZ_KNOWN_BUGS=0`` turns the tolerance off.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import traceback
import tracemalloc
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import vecbinlog
from vecbinlog.constants import event_type_name
from vecbinlog.index import file_identity
from vecbinlog.log.summary import summarize_file

from .conftest import corpus_path
from .support import builder
from .support import reference as ref
from .support.builder import fix_crcs, packed, replace_event
from .support.fuzzing import ALARM_S, BOUNDARY_BYTES, Hang, alarm, apply_edits, byte_mutations, settings_for

# ---------------------------------------------------------------------------------------
# The seed files: small files with rows events, from different servers.
# ---------------------------------------------------------------------------------------

SEEDS = [
    "blackbeam__rust_mysql_common/mariadb-bin.000001",  # MariaDB, CRC32, FULL metadata, rows v1
    "blackbeam__rust_mysql_common/mysql-enum-string-set.000001",  # 8.0 FULL, ENUM/SET/labels
    "blackbeam__rust_mysql_common/vector.binlog",  # 9.0 VECTOR, VECTOR_DIMENSIONALITY
    "blackbeam__rust_mysql_common/update-full-row.binlog",  # 5.1 NDB, no checksums, rows v1
    "blackbeam__rust_mysql_common/minimal_row_metadata.000001",  # 8.0 MINIMAL metadata
    "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",  # 5.6 alg byte = NONE
    "zalora__binlog-parser/fixtures/mysql-bin.01",  # 5.6 W/U/D rows v2, VARCHAR
    "github__gh-ost/mysql-bin.000066",  # 5.6 BLOB/TEXT, W/U/D
    "alibaba__canal/parse/mysql-bin.000001",  # 5.1/5.5 era, many tables, old temporal types
    "harubot__mysqlbinlog2/mysql-bin.000001",  # 5.5 rows v1 W/U/D
    "rusuly__MySqlCdc/mysql-bin.000001",  # 8.0, one column of (nearly) every type
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",  # 9.6 NEWDECIMAL
    "blackbeam__rust_mysql_common/mysql_type_bit.000001",  # BIT
]

TOLERATE_KNOWN = os.environ.get("VECBINLOG_FUZZ_KNOWN_BUGS", "1") != "0"

HEADER = 19
MAGIC = b"\xfebin"
FDE, TABLE_MAP = 15, 19
ROWS_V1 = (23, 24, 25)
ROWS_V2 = (30, 31, 32)
ROWS = ROWS_V1 + ROWS_V2
UPDATES = (24, 31)


@lru_cache(maxsize=None)
def seed_bytes(name: str) -> bytes:
    return corpus_path(name).read_bytes()


# ---------------------------------------------------------------------------------------
# The structure of a binlog, from the reference decoder (tests/support/reference.py: written
# from the format, not from vecbinlog); mutated events are rebuilt with tests/support/builder.py.
# ---------------------------------------------------------------------------------------


def table_maps(raw: bytes) -> list[ref.RefTableMap]:
    fmt = ref.format_of(raw)
    return [ref.read_table_map(raw, fmt, e) for e in ref.walk_events(raw)[0] if e.type == TABLE_MAP]


def rows_events(raw: bytes) -> list[ref.RefRowsHeader]:
    fmt = ref.format_of(raw)
    return [ref.read_rows_header(raw, fmt, e) for e in ref.walk_events(raw)[0] if e.type in ROWS]


def table_map_for(raw: bytes, rows: ref.RefRowsHeader) -> ref.RefTableMap:
    before = [tm for tm in table_maps(raw) if tm.event.offset < rows.event.offset and tm.table_id == rows.table_id]
    return before[-1]


def rebuild(raw: bytes, tm: ref.RefTableMap, **changes) -> bytes:
    """The TABLE_MAP ``tm`` of ``raw`` with some parts changed (see builder.table_map_like)."""
    return builder.table_map_like(tm, raw[tm.event.offset : tm.event.offset + HEADER],
                                  checksum=ref.format_of(raw).has_crc32, **changes)


def first_image_values(data: bytes, tm: ref.RefTableMap, rows: ref.RefRowsHeader) -> list[tuple[int, int, str, int]]:
    """(column, position, how, n) of the values of the first row image, as far as the
    column types are known; every column assumed present (full row images)."""
    ncols = len(tm.column_types)
    p = rows.images_at
    nulls = data[p : p + (ncols + 7) // 8]
    p += (ncols + 7) // 8
    out = []
    for c, (t, m) in enumerate(zip(tm.column_types, tm.column_meta)):
        if nulls[c // 8] >> (c % 8) & 1:
            continue
        try:
            how, n = ref.value_storage(t, m)
        except ref.RefDecodeError:
            break
        out.append((c, p, how, n))
        if how == "fixed":
            p += n
        else:
            p += n + int.from_bytes(data[p : p + n], "little")
        if p > rows.body_end:
            break
    return out


# ---------------------------------------------------------------------------------------
# Running the library on one file, with the rule checked.
# ---------------------------------------------------------------------------------------

#: Known bugs the property tests tolerate (each must have an xfail test_bug_<id> below):
#: bug id -> (exception type name, the vecbinlog function whose frame raised it).
KNOWN_BUGS: dict[str, tuple[str, str]] = {
    # e.g. "decimal-precision-over-76": ("ValueError", "decimal.arrow_type"); every bug the
    # fuzzer found so far is fixed (see the test_found_* regression tests at the end)
}


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels():
    """Compile the kernels once, outside any alarm: CI runs this module with numba's bounds checks
    on and a fresh cache, and the first read's compile (well over a minute on a loaded 2-core VM)
    is not a hang (CI, 2026-11-27)."""
    for name in SEEDS:
        for op in OPERATIONS:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with vecbinlog.open(corpus_path(name)) as log:
                        OPERATIONS[op](log)
            except vecbinlog.BinlogError:
                pass
    yield


def vecbinlog_frame(exc: BaseException) -> str:
    """``module.function`` of the innermost vecbinlog frame of the traceback."""
    last = "?"
    for fs in traceback.extract_tb(exc.__traceback__):
        if "/vecbinlog/" in fs.filename.replace(os.sep, "/"):
            last = f"{Path(fs.filename).stem}.{fs.name}"
    return last


_TOLERATING = [TOLERATE_KNOWN]


@contextlib.contextmanager
def no_tolerance():
    """Known bugs fail too (for the regression tests of those bugs)."""
    saved = _TOLERATING[0]
    _TOLERATING[0] = False
    try:
        yield
    finally:
        _TOLERATING[0] = saved


def known_bug(exc: BaseException) -> str | None:
    if not _TOLERATING[0]:
        return None
    sig = (type(exc).__name__, vecbinlog_frame(exc))
    return next((bug for bug, s in KNOWN_BUGS.items() if s == sig), None)


def undictionary(table: pa.Table) -> pa.Table:
    """The table with dictionary columns decoded, so that equals() compares values: batches of
    different extent carry different (equally right) dictionaries."""
    schema = pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in table.schema])
    return table.cast(schema).combine_chunks()


@dataclass
class Outcome:
    """What each operation did: a value, or the BinlogError it raised."""

    results: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    warnings: dict = field(default_factory=dict)
    known: dict = field(default_factory=dict)

    def ok(self, op: str) -> bool:
        return op in self.results


def _per_table(log: vecbinlog.Binlog) -> dict:
    """read_table, schema and table_maps of every table; read_pandas of the first."""
    out = {}
    for k, name in enumerate(log.tables):
        table = log.read_table(name)
        log.schema(name)
        assert log.table_maps(name), name
        if k == 0:
            frame = vecbinlog.read_pandas(log.paths, name, verify_checksums=log.files[0].verify_checksums,
                                          strict=log.config.strict)
            assert len(frame) == table.num_rows
        out[name] = table.num_rows
    return out


def _index_summary(log: vecbinlog.Binlog) -> dict:
    """The archive index's summary of the file (its header walk, row images counted)."""
    path = log.paths[0]
    return summarize_file(path, file_identity(path), verify_checksums=log.files[0].verify_checksums).to_pylist()[0]


OPERATIONS = {
    "read_all": lambda log: log.read_all(),
    "events": lambda log: log.events(),
    "info": lambda log: log.info(),
    "info_rows": lambda log: log.info(rows=True),
    "index": _index_summary,
    "tables": lambda log: log.tables,
    "verify": lambda log: log.verify(),
    "per_table": _per_table,
}


def run_one(path: Path, op: str, *, verify: bool, strict: bool, out: Outcome, segment_bytes: int | None = None,
            batch_rows: int | None = None, threads: int | None = None) -> None:
    size = path.stat().st_size
    arrow_pool = pa.default_memory_pool()
    arrow_before = arrow_pool.max_memory() or 0
    tracemalloc.start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with alarm(ALARM_S):
                kw = {k: v for k, v in (("segment_bytes", segment_bytes), ("batch_rows", batch_rows), ("threads", threads))
                      if v is not None}
                with vecbinlog.open(path, verify_checksums=verify, strict=strict, **kw) as log:
                    out.results[op] = OPERATIONS[op](log)
        except vecbinlog.BinlogError as exc:
            out.errors[op] = exc
        except Hang as exc:
            raise AssertionError(f"{op}: hang ({exc})") from exc
        except Exception as exc:
            bug = known_bug(exc)
            if bug is None:
                raise AssertionError(
                    f"{op}(verify_checksums={verify}, strict={strict}) raised "
                    f"{type(exc).__name__} at {vecbinlog_frame(exc)}, not a BinlogError: {exc}"
                ) from exc
            out.known[op] = bug
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    out.warnings[op] = [w for w in caught]
    budget = 50 * size + (64 << 20)
    assert peak < budget, f"{op}: peak {peak} bytes traced for a {size}-byte file"
    arrow_grew = (arrow_pool.max_memory() or 0) - arrow_before
    assert arrow_grew < budget, f"{op}: Arrow pool high-water mark grew by {arrow_grew} bytes"
    for w in caught:
        assert issubclass(w.category, (vecbinlog.TruncatedWarning, vecbinlog.DecodeWarning, vecbinlog.MalformedEventWarning,
                                      vecbinlog.SchemaWarning)), (
            f"{op}: unexpected warning {w.category.__name__}: {w.message}"
        )
    if op in out.errors:
        try:
            check_error(out.errors[op], path, size)
        except AssertionError:
            bug = known_bug(out.errors[op])
            if bug is None:
                raise
            out.known[op] = bug


def check_error(exc: vecbinlog.BinlogError, path: Path, size: int) -> None:
    """A BinlogError says which file, and where in it."""
    assert exc.path == str(path), f"{type(exc).__name__} without the file's path: {exc!r}"
    assert isinstance(exc.offset, int) and 0 <= exc.offset <= size, (
        f"{type(exc).__name__} offset {exc.offset!r} is not in the {size}-byte file: {exc}"
    )
    assert exc.event_type is None or isinstance(exc.event_type, str)
    assert str(exc)


def exercise(path: Path, *, verify: bool = True, strict: bool = False, ops=tuple(OPERATIONS),
             segment_bytes: int | None = None, batch_rows: int | None = None, threads: int | None = None) -> Outcome:
    """Each operation on a fresh open of ``path``; checks the rule, returns what happened."""
    out = Outcome()
    for op in ops:
        run_one(path, op, verify=verify, strict=strict, out=out, segment_bytes=segment_bytes, batch_rows=batch_rows,
                threads=threads)
    check_nothing_lost(path, out, strict=strict)
    return out


def check_nothing_lost(path: Path, out: Outcome, *, strict: bool) -> None:
    """What can be checked against an independent walk of the headers, whatever the bytes."""
    data = path.read_bytes()
    events, stop_pos, why = ref.walk_events(data)
    truncated = [w for ws in out.warnings.values() for w in ws if issubclass(w.category, vecbinlog.TruncatedWarning)]
    if why is None:
        assert not truncated, "TruncatedWarning on a file whose events end exactly at its end"
    if strict:
        assert not truncated, "strict=True warned instead of raising"
    if why is not None and not strict:
        for op in ("events", "info", "read_all"):
            if out.ok(op) and why == "truncated":
                assert any(issubclass(w.category, vecbinlog.TruncatedWarning) for w in out.warnings[op]), (
                    f"{op} succeeded on a file cut at offset {stop_pos} without a TruncatedWarning"
                )
            if out.ok(op) and why == "malformed":
                raise AssertionError(f"{op} succeeded although the event at {stop_pos} has event_size < 19")
    if out.ok("events"):
        ev = out.results["events"]
        assert ev.column("pos").to_pylist() == [e.offset for e in events], "events() lost or invented events"
        assert ev.column("type_code").to_pylist() == [e.type for e in events]
        assert ev.column("size").to_pylist() == [e.size for e in events]
    if out.ok("info"):
        counts = out.results["info"]["files"][0]["events"]
        assert sum(counts.values()) == len(events), f"info() counts {sum(counts.values())} events, the walk {len(events)}"
        if out.ok("index"):
            indexed = json.loads(out.results["index"]["info"])["events"]
            assert indexed == counts, f"the index's summary counts {indexed}, info() {counts}"
    if out.ok("read_all") and out.ok("per_table"):
        # tables whose rows all belong to a transaction cut off by the truncation have 0 rows
        got = {name: t.num_rows for name, t in out.results["read_all"].items() if t.num_rows}
        want = {name: n for name, n in out.results["per_table"].items() if n}
        assert got == want, (got, out.results["per_table"])
    if out.ok("read_all"):
        rows_offsets = {e.offset for e in events if e.type in ROWS}
        for name, table in out.results["read_all"].items():
            if table.num_rows:
                got = set(pc.unique(table.column("_log_pos")).to_pylist())
                assert got <= rows_offsets, f"{name}: rows from offsets that are not rows events: {sorted(got - rows_offsets)[:5]}"


def write(tmp_path: Path, data: bytes | bytearray, counter=itertools.count()) -> Path:
    p = tmp_path / f"mutant-{next(counter)}.bin"
    p.write_bytes(bytes(data))
    return p


# ---------------------------------------------------------------------------------------
# Un-mutated files: nothing lost.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SEEDS)
def test_seed_nothing_lost(name):
    """info() counts every event an independent header walk finds; rows come from every rows event."""
    path = corpus_path(name)
    data = seed_bytes(name)
    events, end, why = ref.walk_events(data)
    assert why is None and end == len(data)
    out = exercise(path)
    assert not out.errors and not out.known, out.errors or out.known
    counts = out.results["info"]["files"][0]["events"]
    assert sum(counts.values()) == len(events)
    by_type: dict[str, int] = {}
    for e in events:
        by_type[event_type_name(e.type)] = by_type.get(event_type_name(e.type), 0) + 1
    assert counts == dict(sorted(by_type.items()))
    # every rows event contributes rows, and no row comes from elsewhere
    got = set()
    for table in out.results["read_all"].values():
        got |= set(table.column("_log_pos").to_pylist())
    assert got == {e.offset for e in events if e.type in ROWS}


# ---------------------------------------------------------------------------------------
# Truncation at every offset: a prefix of the file decodes to a prefix of the change log.
# ---------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def full_read(name: str) -> dict[str, pa.Table]:
    with vecbinlog.open(corpus_path(name)) as log:
        return log.read_all()


@settings_for(100)
@given(name=st.sampled_from(SEEDS), data=st.data(), strict=st.booleans())
def test_truncated_prefix(tmp_path, name, data, strict):
    raw = seed_bytes(name)
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    path = write(tmp_path, raw[:cut])
    events, _, _ = ref.walk_events(raw)
    fde_end = events[0].offset + events[0].size
    complete = [e for e in events if e.offset + e.size <= cut]
    boundary = complete[-1].offset + complete[-1].size if complete else 4
    out = exercise(path, strict=strict)
    if cut < fde_end:
        # no FORMAT_DESCRIPTION_EVENT: nothing can be read
        for op in OPERATIONS:
            assert op in out.errors or op in out.known, f"{op} read a file cut at {cut}, inside its FDE"
            if op in out.errors:
                assert isinstance(out.errors[op], (vecbinlog.TruncatedError, vecbinlog.NotABinlogError)), out.errors[op]
        return
    for op in OPERATIONS:
        if op in out.known:
            continue
        if op == "index":  # (what a file being written looks like: summarised to its last whole event, no warning)
            assert op not in out.errors, f"index on a file cut at {cut}: {out.errors[op]!r}"
            assert out.results[op]["indexed_to"] == boundary, (out.results[op]["indexed_to"], boundary)
            continue
        if strict and cut != boundary:
            assert isinstance(out.errors.get(op), vecbinlog.TruncatedError), (op, out.errors.get(op))
            continue
        assert op not in out.errors, f"{op} on a file cut at {cut}: {out.errors[op]!r}"
        if cut != boundary and op != "verify":
            assert any(issubclass(w.category, vecbinlog.TruncatedWarning) for w in out.warnings[op]), op
    if out.ok("read_all"):
        full = full_read(name)
        got = out.results["read_all"]
        # A transaction cut by the truncation has no end in the file: its rows are left out
        # (rolled_back="exclude"). It ended before the cut iff an XID or QUERY (COMMIT) event
        # follows its last rows event before the cut.
        ends = np.array([e.offset for e in complete if e.type in (2, 16)], np.int64)
        for tname, table in full.items():
            keep = pc.less(table.column("_log_pos"), boundary)
            last = {}
            for t, p in zip(table.column("_transaction_pos").to_pylist(), table.column("_log_pos").to_pylist()):
                last[t] = max(last.get(t, -1), p)
            ended = {t: bool(((ends > p) & (ends < boundary)).any()) for t, p in last.items()}
            done = pa.array([t is None or ended[t] for t in table.column("_transaction_pos").to_pylist()], pa.bool_())
            keep = pc.and_(keep, done)
            expected = table.filter(keep).drop_columns(["_log_file"])
            if expected.num_rows == 0:
                assert tname not in got or got[tname].num_rows == 0
                continue
            assert tname in got, f"{tname}: its {expected.num_rows} rows before offset {boundary} were dropped"
            assert got[tname].num_rows == expected.num_rows, (tname, got[tname].num_rows, expected.num_rows)
            same = undictionary(got[tname].drop_columns(["_log_file"])).equals(undictionary(expected))
            assert same, f"{tname}: rows of the cut file differ from the whole file's"
        assert set(got) <= set(full)


# ---------------------------------------------------------------------------------------
# Byte-level mutations.
# ---------------------------------------------------------------------------------------


@settings_for(130)
@given(name=st.sampled_from(SEEDS), data=st.data(), verify=st.booleans(), recrc=st.booleans())
def test_byte_mutations(tmp_path, name, data, verify, recrc):
    """Bit flips and overwrites anywhere (after the magic), CRC32s kept stale or recomputed."""
    raw = bytearray(seed_bytes(name))
    edits = data.draw(byte_mutations(len(raw), lo=4), label="edits")
    mutated = apply_edits(raw, edits)
    if recrc and ref.format_of(seed_bytes(name)).has_crc32:
        mutated = fix_crcs(mutated)
    exercise(write(tmp_path, mutated), verify=verify, strict=data.draw(st.booleans(), label="strict"))


@settings_for(130)
@given(name=st.sampled_from(SEEDS), data=st.data(), verify=st.booleans())
def test_mutations_inside_events(tmp_path, name, data, verify):
    """Edits inside one event (mostly TABLE_MAP, rows events and the FDE), with its CRC32 fixed: the
    structural checks, not the checksum, must catch them."""
    raw = seed_bytes(name)
    events = ref.walk_events(raw)[0]
    kinds = [e for e in events if e.type in ROWS + (TABLE_MAP, FDE)]
    e = data.draw(st.one_of(st.sampled_from(kinds), st.sampled_from(events)), label="event")
    note(f"event type {e.type} at {e.offset}, {e.size} bytes")
    # the header's event_size stays; everything after it in the event may change
    edits = data.draw(byte_mutations(len(raw), lo=e.offset + 13, hi=e.offset + e.size), label="edits")
    mutated = apply_edits(bytearray(raw), edits)
    if ref.format_of(raw).has_crc32:
        mutated = fix_crcs(mutated)
    exercise(write(tmp_path, mutated), verify=verify)


# ---------------------------------------------------------------------------------------
# Event-level mutations: splice, duplicate, remove, swap.
# ---------------------------------------------------------------------------------------


@settings_for(50)
@given(a=st.sampled_from(SEEDS), b=st.sampled_from(SEEDS), data=st.data(), verify=st.booleans())
def test_splice(tmp_path, a, b, data, verify):
    """The head of one file and the tail of another, cut at event boundaries or anywhere."""
    ra, rb = seed_bytes(a), seed_bytes(b)
    if data.draw(st.booleans(), label="at boundaries"):
        ea, eb = ref.walk_events(ra)[0], ref.walk_events(rb)[0]
        i = data.draw(st.integers(1, len(ea)), label="events of a")
        j = data.draw(st.integers(0, len(eb)), label="from event of b")
        head = ra[: ea[i - 1].offset + ea[i - 1].size]
        tail = rb[eb[j].offset :] if j < len(eb) else b""
    else:
        head = ra[: data.draw(st.integers(4, len(ra)), label="cut a")]
        tail = rb[data.draw(st.integers(4, len(rb)), label="cut b") :]
    exercise(write(tmp_path, head + tail), verify=verify)


@settings_for(70)
@given(name=st.sampled_from(SEEDS), data=st.data(), verify=st.booleans())
def test_event_shuffles(tmp_path, name, data, verify):
    """Events duplicated, removed, swapped or moved (never the FDE)."""
    raw = seed_bytes(name)
    events = ref.walk_events(raw)[0]
    chunks = [raw[e.offset : e.offset + e.size] for e in events]
    n_ops = data.draw(st.integers(1, 4), label="ops")
    for _ in range(n_ops):
        if len(chunks) < 2:
            break
        op = data.draw(st.sampled_from(["dup", "remove", "swap", "move"]), label="op")
        i = data.draw(st.integers(1, len(chunks) - 1), label="i")
        j = data.draw(st.integers(1, len(chunks) - 1), label="j")
        if op == "dup":
            chunks.insert(j, chunks[i])
        elif op == "remove":
            del chunks[i]
        elif op == "swap":
            chunks[i], chunks[j] = chunks[j], chunks[i]
        else:
            chunks.insert(j, chunks.pop(i))
    exercise(write(tmp_path, MAGIC + b"".join(chunks)), verify=verify)


# ---------------------------------------------------------------------------------------
# Targeted mutations (each with CRC32s fixed so that the structure is what is checked).
# ---------------------------------------------------------------------------------------


def finish(raw: bytes, mutated: bytearray) -> bytearray:
    return fix_crcs(mutated) if ref.format_of(raw).has_crc32 else mutated


def mutate_table_map_colcount(raw: bytes, draw) -> bytearray:
    """A TABLE_MAP column count replaced by a huge packed int (0xfe + 8 bytes, e.g. 2**40)."""
    tm = draw(st.sampled_from(table_maps(raw)), label="table map")
    value = draw(st.sampled_from([2**40, 2**63 - 1, 2**64 - 1, 2**32, 2**24 - 1, 65535, 0]), label="colcount")
    marker = draw(st.sampled_from(["natural", "fe"]), label="encoding")
    enc = packed(value) if marker == "natural" else b"\xfe" + value.to_bytes(8, "little")
    ev = raw[tm.event.offset : tm.event.offset + tm.event.size]
    a, b = tm.column_count_at - tm.event.offset, tm.column_count_end - tm.event.offset
    return finish(raw, replace_event(raw, tm.event, ev[:a] + enc + ev[b:]))


def first_values(raw: bytes):
    """(rows event, its TABLE_MAP, first-image values) of every rows event whose map is found."""
    for rows in rows_events(raw):
        try:
            tm = table_map_for(raw, rows)
        except IndexError:
            continue
        yield rows, tm, first_image_values(raw, tm, rows)


def mutate_length_prefix(raw: bytes, draw) -> bytearray:
    """The length prefix of a VARCHAR/BLOB/CHAR value made to run past the event."""
    candidates = []
    for rows, tm, vals in first_values(raw):
        for c, pos, how, n in vals:
            if how == "prefixed" and 1 <= n <= 4:
                candidates.append((rows, pos, n))
    assume(candidates)
    rows, pos, n = draw(st.sampled_from(candidates), label="value")
    left = rows.body_end - pos - n
    value = draw(st.sampled_from([left + 1, left + 2, (1 << 8 * n) - 1, 1 << (8 * n - 1)]), label="length")
    value = min(value, (1 << 8 * n) - 1)
    mutated = bytearray(raw)
    mutated[pos : pos + n] = value.to_bytes(n, "little")
    return finish(raw, mutated)


def mutate_rows_width(raw: bytes, draw) -> bytearray:
    """A rows event's column count made to differ from its TABLE_MAP's (re-encoded, the
    event resized), or its packed marker replaced."""
    rows = draw(st.sampled_from(rows_events(raw)), label="rows event")
    e = rows.event
    ev = raw[e.offset : e.offset + e.size]
    width = rows.width
    a, b = rows.width_at - e.offset, rows.width_end - e.offset
    how = draw(st.sampled_from(["minus", "plus", "huge", "zero", "marker"]), label="how")
    if how == "marker":
        enc = bytes([draw(st.sampled_from([0xFB, 0xFC, 0xFD, 0xFE, 0xFF]), label="marker")])
        return finish(raw, replace_event(raw, e, ev[:a] + enc + ev[a + 1 :]))
    new = {"minus": max(width - 1, 0), "plus": width + 1, "huge": 2**40, "zero": 0}[how]
    return finish(raw, replace_event(raw, e, ev[:a] + packed(new) + ev[b:]))


def mutate_rows_table_id(raw: bytes, draw) -> bytearray:
    """A rows event's table id changed to one no TABLE_MAP defines (or another table's)."""
    rows = draw(st.sampled_from(rows_events(raw)), label="rows event")
    known = {tm.table_id for tm in table_maps(raw)}
    tid = draw(st.sampled_from([0, 1, 0xFFFFFF, 2**32 - 1, 2**48 - 1] + sorted(known)), label="table id")
    tid &= (1 << 8 * rows.table_id_len) - 1
    mutated = bytearray(raw)
    mutated[rows.table_id_at : rows.table_id_at + rows.table_id_len] = tid.to_bytes(rows.table_id_len, "little")
    return finish(raw, mutated)


def mutate_event_size(raw: bytes, draw) -> bytearray:
    """An event_size < 19, bigger than the file, or off by a little."""
    events = ref.walk_events(raw)[0]
    e = draw(st.sampled_from(events), label="event")
    size = draw(
        st.sampled_from([0, 1, 18, 19, 20, 22, 23, e.size - 1, e.size + 1, len(raw), len(raw) + 1,
                         0x7FFFFFFF, 0xFFFFFFFF]),
        label="size",
    )
    mutated = bytearray(raw)
    mutated[e.offset + 9 : e.offset + 13] = (size & 0xFFFFFFFF).to_bytes(4, "little")
    if draw(st.booleans(), label="fix crcs"):
        mutated = finish(raw, mutated)
    return mutated


def mutate_type_code(raw: bytes, draw) -> bytearray:
    """An event's type code changed (a TABLE_MAP read as rows, rows as undecoded rows...)."""
    events = ref.walk_events(raw)[0][1:]
    e = draw(st.sampled_from(events), label="event")
    t = draw(st.sampled_from(list(range(0, 45)) + [100, 160, 161, 162, 163, 164, 165, 166, 169, 255]), label="type")
    mutated = bytearray(raw)
    mutated[e.offset + 4] = t
    return finish(raw, mutated)


def mutate_fde(raw: bytes, draw) -> bytearray:
    """The FDE: version string, header length, post-header lengths (changed, more of them,
    fewer), checksum byte."""
    e = ref.walk_events(raw)[0][0]
    body = e.offset + HEADER
    post_header = ref.format_of(raw).post_header_len
    trailer = e.size - HEADER - 57 - len(post_header)  # 5 (alg + CRC32) or 0
    fields = ["version", "header_length", "post_header", "alg", "binlog_version", "grow", "shrink"]
    where = draw(st.sampled_from(fields), label="field")
    mutated = bytearray(raw)
    if where == "version":
        text = draw(st.sampled_from([b"8x.0", b"5", b"", b"x", b"10.0.15-MariaDB", b"5.5.1", b"5.6.0", b"5.6.1", b"9.9.9",
                                     b"99999999999999999999", b"5.1.4-a_drop6p1", b"\xff\xfe", b"mariadb", b"4.1.22"]),
                    label="version")
        mutated[body + 2 : body + 52] = text.ljust(50, b"\0")[:50]
    elif where == "header_length":
        mutated[body + 56] = draw(st.sampled_from([0, 18, 20, 255]), label="v")
    elif where == "binlog_version":
        mutated[body + 0 : body + 2] = draw(st.sampled_from([0, 1, 3, 5, 0xFFFF]), label="v").to_bytes(2, "little")
    elif where == "post_header":
        n = max(1, len(post_header))
        i = draw(st.integers(0, n - 1), label="type-1")
        mutated[body + 57 + i] = draw(st.sampled_from([0, 1, 6, 8, 10, 11, 13, 30, 255]), label="v")
    elif where in ("grow", "shrink"):
        ev = raw[e.offset : e.offset + e.size]
        end = len(ev) - trailer
        if where == "grow":  # entries for more event types than exist (up to > 255 of them)
            extra = draw(st.sampled_from([1, 10, 200, 236, 237, 300, 1000]), label="extra")
            new = ev[:end] + bytes([draw(st.sampled_from([0, 8, 10, 255]), label="len")]) * extra + ev[end:]
        else:  # entries for fewer types than the file uses
            keep = draw(st.integers(0, len(post_header)), label="keep")
            new = ev[: HEADER + 57 + keep] + ev[end:]
        mutated = replace_event(raw, e, new)
    else:
        mutated[e.offset + e.size - 5] = draw(st.sampled_from([0, 1, 2, 255]), label="v")
    return finish(raw, mutated)


#: bytes of field metadata per column type (Field::do_save_field_metadata), for new types
META_LEN = {4: 1, 5: 1, 252: 1, 255: 1, 245: 1, 242: 1, 17: 1, 18: 1, 19: 1, 140: 1,
            15: 2, 253: 2, 16: 2, 246: 2, 254: 2, 247: 2, 248: 2, 141: 2}
ALL_TYPES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 100, 140, 141,
             242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]
#: (precision, scale) of NEWDECIMAL metadata: real ones and impossible ones
DECIMAL_META = [(10, 2), (1, 0), (0, 0), (0, 5), (5, 10), (38, 38), (38, 39), (39, 0), (65, 30), (66, 0),
                (76, 0), (77, 0), (255, 255), (9, 9), (18, 0)]


@st.composite
def meta_bytes(draw, t: int, n: int, original: bytes | None = None) -> bytes:
    """Field metadata of ``n`` bytes for type ``t``: the original, boundary or random bytes."""
    if n == 0:
        return b""
    options = [st.binary(min_size=n, max_size=n), st.lists(st.sampled_from(BOUNDARY_BYTES + [1, 2, 3, 4, 5, 6, 7, 8, 9, 0x30, 0x31]),
                                                           min_size=n, max_size=n).map(bytes)]
    if original is not None and len(original) == n:
        options.append(st.just(original))
    if t == 246 and n == 2:
        options.append(st.sampled_from(DECIMAL_META).map(bytes))
    if t == 254 and n == 2:  # CHAR/ENUM/SET packed as (real type, length)
        options.append(st.tuples(st.sampled_from([0xF7, 0xF8, 0xFE, 0xFC, 0xF6, 0xFF, 0x0F, 0x3F, 0x00]),
                                 st.sampled_from([0, 1, 2, 3, 8, 9, 255])).map(bytes))
    if t in (15, 253, 16) and n == 2:
        options.append(st.sampled_from([0, 1, 255, 256, 0x7FFF, 0xFFFF]).map(lambda v: v.to_bytes(2, "little")))
    return draw(st.one_of(options))


def _pick_table_map(raw: bytes, draw) -> ref.RefTableMap:
    tms = table_maps(raw)
    assume(tms)
    return draw(st.sampled_from(tms), label="table map")


def mutate_column_type(raw: bytes, draw) -> bytearray:
    """A column's type code changed (any code, known or not), with field metadata of the
    new type's size, so that the rows are read with another decoder."""
    tm = _pick_table_map(raw, draw)
    assume(tm.column_types)
    c = draw(st.integers(0, len(tm.column_types) - 1), label="column")
    t = draw(st.sampled_from(ALL_TYPES), label="new type")
    n = META_LEN.get(t, 0)
    meta = list(tm.column_meta_raw)
    meta[c] = draw(meta_bytes(t, n, tm.column_meta_raw[c]), label="meta")
    types = bytearray(tm.column_types)
    types[c] = t
    return finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, types=bytes(types), meta=meta)))


def mutate_column_meta(raw: bytes, draw) -> bytearray:
    """A column's field metadata (lengths, precision/scale, real type of CHAR...) changed."""
    tm = _pick_table_map(raw, draw)
    cols = [c for c, t in enumerate(tm.column_types) if META_LEN.get(t, 0)]
    assume(cols)
    c = draw(st.sampled_from(cols), label="column")
    meta = list(tm.column_meta_raw)
    meta[c] = draw(meta_bytes(tm.column_types[c], len(meta[c]), meta[c]), label="meta")
    return finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, meta=meta)))


PACKED_BOUNDARY = [0, 1, 2, 250, 251, 252, 255, 256, 0xFFFF, 0x10000, 0xFFFFFF, 0x1000000, 2**31 - 1, 2**31,
                   2**32, 2**40, 2**63 - 1, 2**64 - 1]


@st.composite
def tlv_value(draw) -> bytes:
    return draw(st.one_of(
        st.binary(max_size=40),
        st.lists(st.sampled_from(PACKED_BOUNDARY).map(packed), max_size=6).map(b"".join),
        st.lists(st.sampled_from([b"\xfb", b"\xfc", b"\xfd", b"\xfe", b"\xff", b"\x00", b"\x01"]), max_size=6).map(b"".join),
        st.lists(st.binary(max_size=6).map(lambda b: packed(len(b)) + b), max_size=6).map(b"".join),
    ))


def mutate_tlv(raw: bytes, draw) -> bytearray:
    """Optional metadata (binlog_row_metadata): values replaced by boundary packed integers or
    random bytes, types changed, TLVs added, duplicated or removed."""
    tm = _pick_table_map(raw, draw)
    tlvs = list(tm.optional_metadata)
    op = draw(st.sampled_from(["replace", "retype", "add", "duplicate", "remove", "cut"] if tlvs else ["add"]), label="op")
    if op == "add":
        tlvs.insert(draw(st.integers(0, len(tlvs)), label="at"),
                    (draw(st.integers(0, 15), label="type"), draw(tlv_value(), label="value")))
        return finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, optional=tlvs)))
    i = draw(st.integers(0, len(tlvs) - 1), label="tlv")
    t, v = tlvs[i]
    if op == "replace":
        tlvs[i] = (t, draw(tlv_value(), label="value"))
    elif op == "retype":
        tlvs[i] = (draw(st.integers(0, 255), label="type"), v)
    elif op == "duplicate":
        tlvs.insert(i, (t, v))
    elif op == "remove":
        del tlvs[i]
    else:  # the TLV's length says more than there is: cut the event inside it
        event = rebuild(raw, tm, optional=tlvs[: i + 1])
        tail = 4 if ref.format_of(raw).has_crc32 else 0
        cut = draw(st.integers(1, max(1, len(v) + 1)), label="cut")
        event = event[: len(event) - tail - cut] + (b"\0" * tail)
        return finish(raw, replace_event(raw, tm.event, event))
    return finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, optional=tlvs)))


#: TLVs whose value is a list of packed integers (charsets, geometry types, primary keys, vector sizes)
NUMERIC_TLVS = (2, 3, 7, 8, 9, 10, 11, 13)


def _packed_list(value: bytes) -> list[int] | None:
    out, p = [], 0
    try:
        while p < len(value):
            v, p = ref.read_packed(value, p)
            out.append(v)
    except ref.RefDecodeError:
        return None
    return out if p == len(value) else None


def mutate_tlv_number(raw: bytes, draw) -> bytearray:
    """One integer of a numeric TLV (collation id, geometry type, primary-key column or
    prefix, vector dimensionality) set to a boundary value, or one appended / removed."""
    choices = [(tm, i) for tm in table_maps(raw) for i, (t, v) in enumerate(tm.optional_metadata)
               if t in NUMERIC_TLVS and _packed_list(v) is not None]
    assume(choices)
    tm, i = draw(st.sampled_from(choices), label="tlv")
    t, v = tm.optional_metadata[i]
    nums = _packed_list(v)
    op = draw(st.sampled_from(["set", "append", "pop"] if nums else ["append"]), label="op")
    value = draw(st.sampled_from(PACKED_BOUNDARY + [3, 4, 7, 8, 63, 255, 1000, 2**16 - 1]), label="value")
    if op == "set":
        nums[draw(st.integers(0, len(nums) - 1), label="k")] = value
    elif op == "append":
        nums.append(value)
    else:
        nums.pop()
    tlvs = list(tm.optional_metadata)
    tlvs[i] = (t, b"".join(packed(n) for n in nums))
    return finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, optional=tlvs)))


def mutate_null_value(raw: bytes, draw) -> bytearray:
    """A value of the first row image made NULL (its null bit set, its bytes removed: a
    well-formed image), or the null bits set without removing the bytes."""
    candidates = []
    for rows, tm, vals in first_values(raw):
        candidates += [(rows, tm, v) for v in vals]
    assume(candidates)
    rows, tm, (c, pos, how, n) = draw(st.sampled_from(candidates), label="value")
    e = rows.event
    nb = rows.images_at + c // 8
    mutated = bytearray(raw)
    mutated[nb] |= 1 << (c % 8)
    if draw(st.booleans(), label="remove bytes"):
        size = n if how == "fixed" else n + int.from_bytes(raw[pos : pos + n], "little")
        ev = mutated[e.offset : e.offset + e.size]
        a = pos - e.offset
        mutated = replace_event(mutated, e, bytes(ev[:a] + ev[a + size :]))
    return finish(raw, mutated)


TARGETED = {
    "table_map_colcount": mutate_table_map_colcount,
    "length_prefix": mutate_length_prefix,
    "rows_width": mutate_rows_width,
    "rows_table_id": mutate_rows_table_id,
    "event_size": mutate_event_size,
    "type_code": mutate_type_code,
    "fde": mutate_fde,
    "column_type": mutate_column_type,
    "column_meta": mutate_column_meta,
    "tlv": mutate_tlv,
    "tlv_number": mutate_tlv_number,
    "null_value": mutate_null_value,
}


@settings_for(260)
@given(name=st.sampled_from(SEEDS), kind=st.sampled_from(sorted(TARGETED)), data=st.data(),
       verify=st.booleans())
def test_targeted(tmp_path, name, kind, data, verify):
    raw = seed_bytes(name)
    mutated = TARGETED[kind](raw, data.draw)
    out = exercise(write(tmp_path, mutated), verify=verify)
    read = out.errors.get("read_all") or out.known.get("read_all")
    if kind == "rows_width":
        # a rows event whose column count is not its TABLE_MAP's is never read
        assert read is not None, "a rows event with the wrong column count was decoded"
    if kind == "rows_table_id":
        # a rows event whose table id no TABLE_MAP before it defines is never read (its rows
        # would be lost or given to another table)
        fmt, data = ref.format_of(raw), bytes(mutated)
        defined, orphan = set(), None
        for e in ref.walk_events(data)[0]:
            if e.type == TABLE_MAP:
                defined.add(ref.read_table_map(data, fmt, e).table_id)
            elif e.type in ROWS:
                if ref.read_rows_header(data, fmt, e).table_id not in defined:
                    orphan = orphan or e
        if orphan:
            assert read is not None, f"the rows event at {orphan.offset} has no TABLE_MAP but was decoded"
            if "read_all" in out.errors:
                assert isinstance(out.errors["read_all"], vecbinlog.MalformedEventError), out.errors["read_all"]


@settings_for(40)
@given(a=st.sampled_from(SEEDS), b=st.sampled_from(SEEDS), data=st.data(), verify=st.booleans())
def test_two_files(tmp_path, a, b, data, verify):
    """open([a, b]) with one of them mutated: the rule holds for a list of files too, and a
    clean file's events are all counted."""
    ra, rb = bytearray(seed_bytes(a)), seed_bytes(b)
    edits = data.draw(byte_mutations(len(ra), lo=4), label="edits")
    ra = apply_edits(ra, edits)
    if data.draw(st.booleans(), label="recrc") and ref.format_of(seed_bytes(a)).has_crc32:
        ra = fix_crcs(ra)
    paths = [write(tmp_path, ra), write(tmp_path, rb)]
    if data.draw(st.booleans(), label="swap"):
        paths.reverse()
    for op, fn in OPERATIONS.items():
        with warnings.catch_warnings(record=True) as caught, alarm(ALARM_S):
            warnings.simplefilter("always")
            try:
                with vecbinlog.open(paths, verify_checksums=verify) as log:
                    result = fn(log)
            except vecbinlog.BinlogError as exc:
                assert exc.path in {str(p) for p in paths} or known_bug(exc), repr(exc)
                continue
            except Exception as exc:
                if known_bug(exc) is None:
                    raise AssertionError(f"{op} on two files raised {type(exc).__name__} at {vecbinlog_frame(exc)}") from exc
                continue
        for w in caught:
            assert issubclass(w.category, (vecbinlog.TruncatedWarning, vecbinlog.DecodeWarning, vecbinlog.BinlogSetWarning,
                                           vecbinlog.MalformedEventWarning, vecbinlog.SchemaWarning)), w
        if op == "info":
            assert len(result["files"]) == 2
            clean = next(f for f in result["files"] if f["path"] == str(paths[0 if paths[0].read_bytes() == rb else 1]))
            assert sum(clean["events"].values()) == len(ref.walk_events(rb)[0])
        if op == "events":
            assert len(result) >= len(ref.walk_events(rb)[0])


# ---------------------------------------------------------------------------------------
# Segments: reading a file in small segments gives what reading it whole gives.
# ---------------------------------------------------------------------------------------


def _same_outcome(a: Outcome, b: Outcome, what: str) -> None:
    for op in ("read_all", "info", "events", "tables"):
        if op in a.known or op in b.known:
            continue
        if op in a.errors or op in b.errors:
            assert type(a.errors.get(op)) is type(b.errors.get(op)), (
                f"{op}: {what}: {a.errors.get(op)!r} vs {b.errors.get(op)!r}"
            )
            continue
        ra, rb = a.results[op], b.results[op]
        if op == "read_all":
            assert list(ra) == list(rb), f"{what}: tables {list(ra)} vs {list(rb)}"
            for name in ra:
                assert ra[name].num_rows == rb[name].num_rows, f"{what}: {name} has {ra[name].num_rows} vs {rb[name].num_rows} rows"
                assert undictionary(ra[name]).equals(undictionary(rb[name])), f"{what}: {name} differs"
        elif op == "events":
            assert ra.equals(rb), f"{what}: events() differs"
        elif op == "info":
            fa, fb = ra["files"][0], rb["files"][0]
            for key in ("events", "rows_events_by_table", "first_timestamp", "last_timestamp", "format_descriptions"):
                assert fa[key] == fb[key], f"{what}: info()[{key!r}] {fa[key]} vs {fb[key]}"
        else:
            assert ra == rb, f"{what}: tables {ra} vs {rb}"


@settings_for(40)
@given(name=st.sampled_from(SEEDS), data=st.data(), seg=st.sampled_from([1, 19, 64, 200, 1000, 4096]),
       mutate=st.booleans())
def test_segment_sizes_agree(tmp_path, name, data, seg, mutate):
    """``segment_bytes`` only bounds memory: the outcome (tables, rows, errors) is the same,
    for the seed files and for files with an event mutated (CRC32s fixed)."""
    raw = seed_bytes(name)
    if mutate:
        e = data.draw(st.sampled_from([e for e in ref.walk_events(raw)[0] if e.type in ROWS + (TABLE_MAP,)]), label="event")
        edits = data.draw(byte_mutations(len(raw), lo=e.offset + 13, hi=e.offset + e.size), label="edits")
        raw = bytes(finish(raw, apply_edits(bytearray(raw), edits)))
    path = write(tmp_path, raw)
    whole = exercise(path)
    pieces = exercise(path, segment_bytes=seg)
    _same_outcome(whole, pieces, f"segment_bytes={seg}")


@settings_for(40)
@given(name=st.sampled_from(SEEDS), data=st.data(), rows=st.sampled_from([2, 3, 16, 64]), mutate=st.booleans())
def test_batch_rows_agree(tmp_path, name, data, rows, mutate):
    """``batch_rows`` only bounds memory: the outcome (tables, rows, errors) is the same, for
    the seed files and for files with a rows or TABLE_MAP event mutated (CRC32s fixed)."""
    path = write(tmp_path, _seed_or_mutated(name, data, mutate))
    _same_outcome(exercise(path), exercise(path, batch_rows=rows), f"batch_rows={rows}")


def _seed_or_mutated(name: str, data, mutate: bool) -> bytes:
    """A seed file, or (``mutate``) the seed with one rows or TABLE_MAP event mutated (CRC32s fixed)."""
    raw = seed_bytes(name)
    if mutate:
        e = data.draw(st.sampled_from([e for e in ref.walk_events(raw)[0] if e.type in ROWS + (TABLE_MAP,)]), label="event")
        raw = bytes(finish(raw, apply_edits(bytearray(raw), data.draw(
            byte_mutations(len(raw), lo=e.offset + 13, hi=e.offset + e.size), label="edits"))))
    return raw


@settings_for(40)
@given(name=st.sampled_from(SEEDS), data=st.data(), rows=st.sampled_from([2, 16, 64]), mutate=st.booleans())
def test_background_decoding_agrees(tmp_path, monkeypatch, name, data, rows, mutate):
    """With ``threads`` > 1 runs are placed and decoded in the background, two at a time, while
    the log is walked on (every run here: the size threshold is set to 1 byte, and columns are
    decoded in two threads too, the threshold set to 1 cell): the outcome (tables, rows in
    order, errors, warnings) is that of ``threads=1``, for the seed files and for mutated
    rows/TABLE_MAP events (an error placing a batch comes after the batches, and the errors,
    before it)."""
    from vecbinlog.decode import batch as arrow
    from vecbinlog.log import batches

    monkeypatch.setattr(arrow, "THREADED_CELLS", 1)
    monkeypatch.setattr(batches, "BACKGROUND_BYTES", 1)
    monkeypatch.setattr(batches, "BACKGROUND_COLUMN_BYTES", 0)
    path = write(tmp_path, _seed_or_mutated(name, data, mutate))
    one, two = exercise(path, threads=1, batch_rows=rows), exercise(path, threads=2, batch_rows=rows)
    _same_outcome(one, two, f"threads=2, batch_rows={rows}")
    for op in ("read_all", "tables"):
        assert str(one.errors.get(op)) == str(two.errors.get(op)), op  # the same error, at the same offset
        assert sorted(str(w.message) for w in one.warnings.get(op, [])) == sorted(
            str(w.message) for w in two.warnings.get(op, [])), op


# ---------------------------------------------------------------------------------------
# Regression cases (plain tests): targeted mutations with a known right answer.
# ---------------------------------------------------------------------------------------


def regression_colcount_2_40(raw: bytes) -> bytearray:
    tm = table_maps(raw)[0]
    return finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, column_count=b"\xfe" + (2**40).to_bytes(8, "little"))))


def regression_event_size(raw: bytes, k: int, size: int) -> bytearray:
    e = ref.walk_events(raw)[0][k]
    mutated = bytearray(raw)
    mutated[e.offset + 9 : e.offset + 13] = size.to_bytes(4, "little")
    return mutated


def regression_table_id(raw: bytes) -> bytearray:
    rows = rows_events(raw)[0]
    mutated = bytearray(raw)
    mutated[rows.table_id_at : rows.table_id_at + rows.table_id_len] = b"\xff" * rows.table_id_len
    return finish(raw, mutated)


def regression_rows_width(raw: bytes, delta: int = 1) -> bytearray:
    rows = rows_events(raw)[0]
    e = rows.event
    ev = raw[e.offset : e.offset + e.size]
    a, b = rows.width_at - e.offset, rows.width_end - e.offset
    return finish(raw, replace_event(raw, e, ev[:a] + packed(rows.width + delta) + ev[b:]))


def regression_length_past_end(raw: bytes) -> bytearray:
    for rows in rows_events(raw):
        tm = table_map_for(raw, rows)
        for c, pos, how, n in first_image_values(raw, tm, rows):
            if how == "prefixed":
                mutated = bytearray(raw)
                mutated[pos : pos + n] = ((1 << 8 * n) - 1).to_bytes(n, "little")
                return finish(raw, mutated)
    raise AssertionError("no length-prefixed value")


ZALORA = "zalora__binlog-parser/fixtures/mysql-bin.01"  # 5.6, CRC32, rows v2
HARUBOT = "harubot__mysqlbinlog2/mysql-bin.000001"  # 5.5, no checksums, rows v1

FIXED_CASES = [
    pytest.param(ZALORA, regression_colcount_2_40, vecbinlog.MalformedEventError, id="table-map-colcount-2**40"),
    pytest.param(HARUBOT, regression_colcount_2_40, vecbinlog.MalformedEventError, id="table-map-colcount-2**40-nocrc"),
    pytest.param(ZALORA, lambda r: regression_event_size(r, 2, 18), vecbinlog.MalformedEventError, id="event-size-18"),
    pytest.param(ZALORA, lambda r: regression_event_size(r, 2, 0), vecbinlog.MalformedEventError, id="event-size-0"),
    pytest.param(ZALORA, lambda r: regression_event_size(r, 2, (1 << 30) - 1), vecbinlog.TruncatedError,
                 id="event-size-past-eof"),
    # over max_event_bytes (1 GiB): refused before it is read, as mysqlbinlog --max-allowed-packet refuses it
    pytest.param(ZALORA, lambda r: regression_event_size(r, 2, 0xFFFFFFFF), vecbinlog.MalformedEventError,
                 id="event-size-4GiB"),
    pytest.param(ZALORA, lambda r: regression_event_size(r, 0, 18), vecbinlog.MalformedEventError, id="fde-size-18"),
    pytest.param(ZALORA, regression_table_id, vecbinlog.MalformedEventError, id="rows-unknown-table-id"),
    pytest.param(HARUBOT, regression_table_id, vecbinlog.MalformedEventError, id="rows-unknown-table-id-nocrc"),
    pytest.param("github__gh-ost/mysql-bin.000066", regression_rows_width, vecbinlog.MalformedEventError, id="rows-width-plus-1"),
    pytest.param(ZALORA, lambda r: regression_rows_width(r, -1), vecbinlog.MalformedEventError, id="rows-width-minus-1"),
    pytest.param(ZALORA, regression_length_past_end, vecbinlog.MalformedEventError, id="varchar-length-past-end"),
    pytest.param(HARUBOT, regression_length_past_end, vecbinlog.MalformedEventError, id="varchar-length-past-end-nocrc"),
    pytest.param("github__gh-ost/mysql-bin.000066", regression_length_past_end, vecbinlog.MalformedEventError,
                 id="blob-length-past-end"),
]


@pytest.mark.parametrize("name, mutate, expected", FIXED_CASES)
def test_fixed_regressions(tmp_path, name, mutate, expected):
    raw = seed_bytes(name)
    path = write(tmp_path, mutate(raw))
    with no_tolerance():
        out = exercise(path, strict=True)
        unverified = exercise(path, strict=True, verify=False)
    for o in (out, unverified):
        err = o.errors.get("read_all")
        assert isinstance(err, expected), err


def test_known_bugs_have_regression_tests():
    """Each bug the property tests tolerate has an xfail regression test below."""
    names = {name.removeprefix("test_bug_").replace("_", "-") for name in globals() if name.startswith("test_bug_")}
    assert set(KNOWN_BUGS) <= names, sorted(set(KNOWN_BUGS) - names)


# ---------------------------------------------------------------------------------------
# Bugs found by the fuzzer: minimal reproducers, xfail(strict=True) until fixed.
# ---------------------------------------------------------------------------------------


def assert_rule(path: Path, **kw) -> Outcome:
    """Every operation works or raises a BinlogError with its location; nothing tolerated."""
    with no_tolerance():
        return exercise(path, **kw)


def single_row_file(raw: bytes, pick=lambda tm, rows: True) -> bytes:
    """The FDE, one TABLE_MAP and one WRITE/DELETE rows event cut to its first row image:
    the smallest file that reaches the column decoders."""
    events = ref.walk_events(raw)[0]
    for rows in rows_events(raw):
        if rows.event.type in UPDATES:
            continue
        tm = table_map_for(raw, rows)
        vals = first_image_values(raw, tm, rows)
        if len(vals) < sum(1 for c in range(len(tm.column_types)) if not raw[rows.images_at + c // 8] >> (c % 8) & 1):
            continue  # a type first_image_values cannot size
        if not pick(tm, rows):
            continue
        e = rows.event
        end = max((p + (n if how == "fixed" else n + int.from_bytes(raw[p : p + n], "little")))
                  for c, p, how, n in vals) if vals else rows.images_at + (len(tm.column_types) + 7) // 8
        ev = raw[e.offset : end] + (b"\0" * 4 if ref.format_of(raw).has_crc32 else b"")
        fde = events[0]
        out = raw[:4] + raw[fde.offset : fde.offset + fde.size]
        out += raw[tm.event.offset : tm.event.offset + tm.event.size]
        out = out + bytes(replace_event(b"", ref.EventBounds(0, 0, 0), ev))
        return bytes(finish(raw, bytearray(out)))
    raise AssertionError("no suitable rows event")


def retype_column(data: bytes, c: int, new_type: int, new_meta: bytes, new_value: bytes) -> bytes:
    """In a single_row_file: column ``c`` gets another type/metadata and its value new bytes."""
    tm = table_maps(data)[0]
    types = bytearray(tm.column_types)
    types[c] = new_type
    meta = list(tm.column_meta_raw)
    meta[c] = new_meta
    data = bytes(replace_event(data, tm.event, rebuild(data, tm, types=bytes(types), meta=meta)))
    rows = rows_events(data)[0]
    vals = {v[0]: v for v in first_image_values(data, tm, rows)}
    _, pos, how, n = vals[c]
    size = n if how == "fixed" else n + int.from_bytes(data[pos : pos + n], "little")
    e = rows.event
    ev = data[e.offset : e.offset + e.size]
    a = pos - e.offset
    return bytes(finish(data, replace_event(data, e, ev[:a] + new_value + ev[a + size :])))


def test_single_row_file_is_clean(tmp_path):
    """The reproducers below start from this un-mutated minimal file, which decodes."""
    for name in (ZALORA, HARUBOT, "rusuly__MySqlCdc/mysql-bin.000001"):
        path = write(tmp_path, single_row_file(seed_bytes(name)))
        out = assert_rule(path)
        assert not out.errors, out.errors
        (table,) = out.results["read_all"].values()
        assert table.num_rows == 1


def _expect_read_all(out: Outcome, expected) -> None:
    """read_all raised ``expected`` (the rule itself is checked by assert_rule)."""
    err = out.errors.get("read_all")
    assert isinstance(err, expected), err


# -- found by the fuzzer, since fixed ----------------------------------------------------------


def test_found_name_with_trailing_nul(tmp_path):
    """Was: a table name ending in NUL bytes gave IndexError in Binlog._batches (numpy turned the
    name into a str_ without its trailing NULs, so ``names[layout] == name`` matched nothing)."""
    raw = seed_bytes(ZALORA)
    tm = table_maps(raw)[0]
    p = tm.event.offset + HEADER + ref.format_of(raw).post_header(TABLE_MAP)
    p += 1 + raw[p] + 1  # skip the db name
    last_char = p + raw[p]  # last byte of the table name
    mutated = bytearray(raw)
    mutated[last_char] = 0
    out = assert_rule(write(tmp_path, finish(raw, mutated)))
    assert "test_db.building\0" in out.results["read_all"], list(out.results["read_all"])


def test_found_server_version_major_not_a_number(tmp_path):
    """Was: an FDE server version like '5x6.35-log' (no number before the first '.') gave
    ValueError from int() in TableMaps._layout_id."""
    raw = seed_bytes(ZALORA)
    mutated = bytearray(raw)
    mutated[4 + HEADER + 2 : 4 + HEADER + 52] = b"5x6.35-log".ljust(50, b"\0")
    assert_rule(write(tmp_path, finish(raw, mutated)))


def test_found_concat_error_without_location(tmp_path):
    """Was: the UnsupportedError of _concat (two layouts of a table that cannot be merged) had no
    .path/.offset/.event_type. Now such layouts are kept apart (tableplan.py): no error at all."""
    # mysql.t's ENUM column has labels (a dictionary) in one TABLE_MAP and none (uint16) in the next
    raw = seed_bytes("blackbeam__rust_mysql_common/mysql-enum-string-set.000001")
    tm = [tm for tm in table_maps(raw) if any(t == 6 for t, _ in tm.optional_metadata)][-1]
    mutated = finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, optional=[(t, v) for t, v in tm.optional_metadata if t != 6])))
    path = write(tmp_path, mutated)
    assert_rule(path, ops=("read_all",))  # the CREATE TABLE in the file gives both maps the labels
    with vecbinlog.open(path, ddl=False) as log:
        t = log.read_all()["mysql.t"]  # without it, one map has labels (dictionary) and the next not (uint16)
        batches = list(log.iter_batches("mysql.t"))
    kept_apart = [n for n in t.column_names if "@" in n.lstrip("@")]
    assert kept_apart and all(pa.types.is_dictionary(t.schema.field(n).type) for n in kept_apart)
    assert t.num_rows == sum(b.num_rows for b in batches)


def _decimal_file(precision: int, scale: int, value: bytes) -> bytes:
    raw = seed_bytes("blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001")
    small = single_row_file(raw)
    c = table_maps(small)[0].column_types.index(246)
    return retype_column(small, c, 246, bytes([precision, scale]), value)


def test_found_decimal_precision_over_76(tmp_path):
    """Was: NEWDECIMAL precision > 76 in a TABLE_MAP gave ValueError from pa.decimal256 in
    decoders/decimal.arrow_type."""
    # DECIMAL(77,0) is 8 * 4 + 3 = 35 bytes; the value +0
    out = assert_rule(write(tmp_path, _decimal_file(77, 0, b"\x80" + bytes(34))))
    _expect_read_all(out, vecbinlog.MalformedEventError)


def test_found_decimal_scale_over_precision(tmp_path):
    """Was: NEWDECIMAL scale > precision: table_map.decimal_bin_size (the row layout) and
    decimal.groups (the decoder) disagreed on the value size: IndexError in decimal.decode."""
    out = assert_rule(write(tmp_path, _decimal_file(5, 10, b"\x80\x00\x00")))
    _expect_read_all(out, vecbinlog.MalformedEventError)


def _vector_dims(raw: bytes, offset: int, dims: list[int]) -> bytes:
    tm = next(t for t in table_maps(raw) if t.event.offset == offset)
    tlvs = [(t, b"".join(packed(d) for d in dims) if t == 13 else v) for t, v in tm.optional_metadata]
    return bytes(finish(raw, replace_event(raw, tm.event, rebuild(raw, tm, optional=tlvs))))


VECTOR = "blackbeam__rust_mysql_common/vector.binlog"


def test_found_vector_dimensionality_over_int32(tmp_path):
    """Was: VECTOR_DIMENSIONALITY >= 2**31 gave OverflowError from pa.list_ in vector.arrow_type."""
    raw = seed_bytes(VECTOR)
    first = next(t for t in table_maps(raw) if any(t_ == 13 for t_, _ in t.optional_metadata))
    out = assert_rule(write(tmp_path, _vector_dims(raw, first.event.offset, [2**31])))
    _expect_read_all(out, vecbinlog.MalformedEventError)


def _vector_null_rows_file(dim: int, n_images: int) -> bytes:
    """vector.binlog with dtb.bar's last DELETE on a TABLE_MAP layout of its own (dimensionalities
    2 and ``dim``), holding ``n_images`` row images in which every column is NULL (1 byte each)."""
    raw = seed_bytes(VECTOR)
    maps = [t for t in table_maps(raw) if len(t.column_types) == 4]
    dele = [r for r in rows_events(raw) if r.event.type == 32][-1]
    tm = [t for t in maps if t.event.offset < dele.event.offset][-1]
    data = _vector_dims(raw, tm.event.offset, [2, dim])
    rows = [r for r in rows_events(data) if r.event.type == 32][-1]
    e = rows.event
    ev = data[e.offset : rows.images_at] + b"\x0f" * n_images + b"\0\0\0\0"
    return bytes(finish(raw, replace_event(data, e, ev)))


def test_found_vector_null_dimensionality_allocation(tmp_path):
    """Was: VECTOR_DIMENSIONALITY d = 2**28 and the column NULL in every row of a batch:
    vector.decode allocated np.zeros((n, d)) float32, 1 GiB from a 3.4 KB file."""
    out = assert_rule(write(tmp_path, _vector_null_rows_file(2**28, 1)), ops=("read_all",))
    _expect_read_all(out, vecbinlog.MalformedEventError)  # a dimensionality no server writes


def test_found_fde_more_than_255_post_header_lengths(tmp_path):
    """Was: an FDE with more than 255 post-header lengths gave ValueError (broadcast into a
    256-wide table) in TableMaps.post_header_lengths."""
    raw = seed_bytes(ZALORA)
    fde = ref.walk_events(raw)[0][0]
    ev = raw[fde.offset : fde.offset + fde.size]
    end = len(ev) - 5  # before checksum_alg + CRC32
    out = assert_rule(write(tmp_path, finish(raw, replace_event(raw, fde, ev[:end] + bytes(300) + ev[end:]))))
    assert out.ok("read_all"), out.errors


def test_found_temporal_fsp_error_without_offset(tmp_path):
    """Was: the MalformedEventError for a TIME2/DATETIME2/TIMESTAMP2 precision over 6 had
    offset=None (decoders/temporal._parse)."""
    small = single_row_file(seed_bytes(ZALORA))
    c = table_maps(small)[0].column_types.index(3)  # a LONG column becomes TIME2(9): 3 + 5 bytes
    out = assert_rule(write(tmp_path, retype_column(small, c, 19, b"\x09", b"\x80\x00\x00" + bytes(5))))
    _expect_read_all(out, vecbinlog.MalformedEventError)


def test_found_rows_table_id_read_past_short_post_header(tmp_path):
    """Was: a rows event type whose FDE post-header length is 0 (WRITE_ROWS_EVENT_V1 in a MySQL
    8/9 file) as the last event: TableMaps.table_ids checked the post-header length but read a
    6-byte table id: IndexError in rows.read_uint past the end of the file."""
    raw = seed_bytes(VECTOR)
    last = ref.walk_events(raw)[0][-1]  # the XID_EVENT, 23 bytes, ends the file
    mutated = bytearray(raw)
    mutated[last.offset + 4] = 23  # WRITE_ROWS_EVENT_V1: post-header length 0 in this FDE
    _expect_read_all(assert_rule(write(tmp_path, finish(raw, mutated))), vecbinlog.MalformedEventError)


def test_found_tables_in_order_of_first_rows_event():
    """Was: Binlog.tables came in order of first TABLE_MAP (np.unique sorts layout ids), not of
    first rows event as documented, and the order changed with segment_bytes."""
    path = corpus_path("blackbeam__rust_mysql_common/update-full-row.binlog")
    first_rows = [e for e in ref.walk_events(path.read_bytes())[0] if e.type in ROWS][0]
    assert first_rows.offset == 275  # mysql.ndb_apply_status, before any test.ba row
    for seg in (None, 1, 100):
        with vecbinlog.open(path, **({} if seg is None else {"segment_bytes": seg})) as log:
            assert log.tables == ["mysql.ndb_apply_status", "test.ba"], seg


# -- found by the fuzzer, still open ------------------------------------------------------------


def _all_null_rows_file(raw: bytes, n: int) -> bytes:
    """One WRITE_ROWS event of ``n`` row images in which every column is NULL (1 byte each)."""
    rows = [r for r in rows_events(raw) if r.event.type == 30][0]
    tm = table_map_for(raw, rows)
    e = rows.event
    head = raw[e.offset : rows.images_at]
    ev = head + bytes([(1 << len(tm.column_types)) - 1]) * n + b"\0\0\0\0"
    return bytes(finish(raw, replace_event(raw, e, ev)))


def _all_null_events_file(raw: bytes, k: int, n: int) -> bytes:
    """``k`` WRITE_ROWS events of ``n`` 1-byte row images each (every column NULL), where the
    seed's first WRITE_ROWS event was; later events' positions moved along."""
    rows = [r for r in rows_events(raw) if r.event.type == 30][0]
    tm = table_map_for(raw, rows)
    e = rows.event
    body = raw[e.offset + HEADER : rows.images_at] + bytes([(1 << len(tm.column_types)) - 1]) * n
    fields = builder.header_fields(raw[e.offset :])
    del fields["log_pos"]  # where the next event starts
    out = bytearray(raw[: e.offset])
    for _ in range(k):
        out += builder.event(e.type, body, at=len(out), **fields)
    delta = len(out) - (e.offset + e.size)
    tail = bytearray(raw[e.offset + e.size :])
    pos = 0
    while pos < len(tail):
        log_pos = int.from_bytes(tail[pos + 13 : pos + 17], "little")
        if log_pos:
            tail[pos + 13 : pos + 17] = (log_pos + delta).to_bytes(4, "little")
        pos += int.from_bytes(tail[pos + 9 : pos + 13], "little")
    return bytes(finish(raw, out + tail))


def _batch_peak(path: Path, table: str, **options) -> tuple[int, list[pa.RecordBatch], int]:
    """(rows, the first batches, peak traced bytes) of iter_batches over ``table``, the
    batches consumed one at a time as a streaming reader would."""
    tracemalloc.start()
    rows, kept = 0, []
    try:
        with vecbinlog.open(path, **options) as log:
            for batch in log.iter_batches(table):
                rows += batch.num_rows
                if len(kept) < 3:
                    kept.append(batch)
        return rows, kept, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_one_event_of_many_images_in_bounded_batches(tmp_path):
    """One event of 1-byte images (a row image decodes to ~70 bytes of Arrow): ``batch_rows``
    bounds every batch, the event's images come once each, in order, across batches, and the
    memory of streaming them does not grow with the event: 4x the images, about the same peak."""
    raw = seed_bytes(ZALORA)
    n = 60_000
    path = write(tmp_path, _all_null_rows_file(raw, n))
    with vecbinlog.open(path, batch_rows=5000) as log:
        batches = list(log.iter_batches("test_db.buildings"))
    with vecbinlog.open(path) as log:
        whole = log.read_table("test_db.buildings")
    assert max(b.num_rows for b in batches) == 5000
    pieces = pa.Table.from_batches(batches)
    assert pieces.to_pylist() == whole.to_pylist()
    assert pieces.num_rows == n + 1  # the n added, then the seed's other row
    big = pieces.filter(pc.equal(pieces.column("_log_pos"), pieces.column("_log_pos")[0]))
    assert big.column("_event_row").to_pylist() == list(range(n))
    peaks = []
    for m in (50_000, 200_000):
        rows, _, peak = _batch_peak(write(tmp_path, _all_null_rows_file(raw, m)), "test_db.buildings", batch_rows=5000)
        assert rows == m + 1
        peaks.append(peak)
    assert peaks[1] < 1.5 * peaks[0], peaks


def test_many_events_of_many_images_in_bounded_batches(tmp_path):
    """Many events of 1-byte images: the walk stops after ``batch_rows`` images and goes on
    from there, inside an event or between events; every image comes once, in order, in
    batches of at most ``batch_rows``; 4x the events, about the same peak."""
    raw = seed_bytes(ZALORA)
    k, n = 40, 3000
    path = write(tmp_path, _all_null_events_file(raw, k, n))
    with vecbinlog.open(path, batch_rows=4000) as log:
        batches = list(log.iter_batches("test_db.buildings"))
    assert max(b.num_rows for b in batches) <= 4000
    t = pa.Table.from_batches(batches)
    assert t.num_rows == k * n + 1
    pos = np.asarray(t.column("_log_pos"))
    ev_row = np.asarray(t.column("_event_row"))
    assert (np.diff(pos) >= 0).all()
    starts = np.unique(pos)
    assert len(starts) == k + 1
    for p in starts[:-1]:  # each added event (the seed's other row comes last): images 0..n-1 in order
        assert (ev_row[pos == p] == np.arange(n)).all()
    peaks = []
    for events in (20, 80):
        rows, _, peak = _batch_peak(write(tmp_path, _all_null_events_file(raw, events, n)), "test_db.buildings",
                                    batch_rows=4000)
        assert rows == events * n + 1
        peaks.append(peak)
    assert peaks[1] < 1.5 * peaks[0], peaks


def test_many_images_in_one_event(tmp_path):
    """An event of n 1-byte images (all columns NULL): once a NumPy lock-step walk took ~60 us
    per image (a 16 MB event took minutes); the compiled walk places them in one loop."""
    n = 20_000
    path = write(tmp_path, _all_null_rows_file(seed_bytes(ZALORA), n))
    with alarm(ALARM_S), vecbinlog.open(path) as log:  # a walk per image once took minutes here
        table = log.read_table("test_db.buildings")
    assert table.num_rows == n + 1
    own = [c for c in table.column_names if not c.startswith("_")]
    assert all(table.column(c).null_count >= n for c in own)  # the n added images are all NULL
    big = max(set(table.column("_log_pos").to_pylist()), key=table.column("_log_pos").to_pylist().count)
    rows = table.filter(pc.equal(table.column("_log_pos"), big))
    assert rows.column("_event_row").to_pylist() == list(range(n))  # every image, once, in order


def test_minimal_images_of_wide_table_memory(tmp_path):
    """MINIMAL images of a 4096-column table holding one column each (UPDATE: before column 1,
    after column 2): only the columns some image holds are placed, and ``_absent`` costs
    2 bytes per absent column (list<dictionary<int16, string>>), so decoding stays within the
    rule's memory bound (once: dense (images, columns) int64 offsets and a string per absent
    column, ~16000x the file size). The 2000 x 4096 output itself is dense (a null per cell)."""
    raw = seed_bytes(HARUBOT)  # no checksums, rows v1
    ncols, pairs = 4096, 1000
    upd = [r for r in rows_events(raw) if r.event.type == 24][0]
    tm = table_map_for(raw, upd)
    # a table of its own, so that no other layout of mydb.my_table is merged with it
    new_tm = rebuild(raw, tm, table="my_wide_", types=bytes([3]) * ncols, meta=[b""] * ncols,
                     null_bits=b"\xff" * (ncols // 8), optional=[])
    data = bytes(replace_event(raw, tm.event, new_tm))
    upd = [r for r in rows_events(data) if r.event.type == 24][0]
    e = upd.event
    before, after = bytearray(ncols // 8), bytearray(ncols // 8)
    before[0], after[0] = 1, 2  # the before image has column 1 only, the after image column 2 only
    head = data[e.offset : upd.width_at] + packed(ncols) + bytes(before) + bytes(after)
    pair = b"\x00" + (7).to_bytes(4, "little") + b"\x00" + (8).to_bytes(4, "little")
    data = bytes(replace_event(data, e, head + pair * pairs))
    out = assert_rule(write(tmp_path, data), ops=("read_all",))
    table = out.results["read_all"]["mydb.my_wide_"]
    assert table.num_rows == 2 * pairs
    assert table.column("@1").to_pylist()[:4] == [7, None, 7, None]
    assert table.column("@2").to_pylist()[:4] == [None, 8, None, 8]
    assert table.column("@3").null_count == 2 * pairs
    absent = table.column("_absent").slice(0, 2).to_pylist()
    assert absent[0] == [f"@{c}" for c in range(1, ncols + 1) if c != 1]
    assert absent[1] == [f"@{c}" for c in range(1, ncols + 1) if c != 2]


def test_null_vectors_memory(tmp_path):
    """NULLs in a VECTOR(16383) column cost an offset each (list<float32>), not 64 KB of
    fixed-size-list slots (the memory bound of assert_rule holds)."""
    data = _vector_null_rows_file(16383, 2000)  # 16383 is the largest VECTOR MySQL allows
    assert_rule(write(tmp_path, data), ops=("read_all",))


def test_mariadb_gtid_in_a_mysql_file_sums_up_both(tmp_path):
    """A MySQL file whose first GTID_LOG_EVENT (offset 157) is retyped as MariaDB's
    GTID_EVENT (162; found by test_targeted: info() raised a ValueError summing up a GTID set
    of both notations). Expected, from the bytes: the MariaDB item domain-server-seq (body:
    seq_no u64, domain u32; server id from the header), then MySQL's set of the other four."""
    raw = seed_bytes("blackbeam__rust_mysql_common/mysql-enum-string-set.000001")
    at = 157
    assert raw[at + 4] == 33
    mutated = bytearray(raw)
    mutated[at + 4] = 162
    path = write(tmp_path, finish(raw, mutated))
    seq = int.from_bytes(raw[at + 19 : at + 27], "little")
    domain = int.from_bytes(raw[at + 27 : at + 31], "little")
    server = int.from_bytes(raw[at + 5 : at + 9], "little")
    with vecbinlog.open(path) as log:
        gtids = log.info()["files"][0]["gtids"]
    assert gtids["count"] == 5
    assert gtids["set"] == f"{domain}-{server}-{seq},93e95066-a2f4-11ec-9b69-9657f0ae95e2:2-5"


def test_found_text_column_partly_binary_reads_the_same_in_any_batches(tmp_path):
    """Was (test_segment_sizes_agree): a utf8 column with one value made invalid (a byte set to
    0xFF) came back binary, bytes unchanged, from one batch, but raised UnsupportedError (string
    in some batches, binary in others) from several (``segment_bytes=1``, ``batch_rows=2``).
    Expected from the file's bytes: the column is binary in every way of reading it, every value
    the bytes the file holds for it (the mutated byte included)."""
    raw = seed_bytes("osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none")
    at = 9673  # inside a refresh_token value of the WRITE_ROWS event at 9544
    assert raw[at] < 0x80
    mutated = bytearray(raw)
    mutated[at] = 0xFF
    original, path = write(tmp_path, raw), write(tmp_path, finish(raw, mutated))
    with vecbinlog.open(original) as log:
        texts = log.read_table("account_db.refresh_token").column("refresh_token").to_pylist()
    expected = []
    for text in texts:  # each value as the mutated file holds it
        value = text.encode() if text is not None else None
        if value is not None and raw.find(value) <= at < raw.find(value) + len(value):
            value = bytes(mutated[raw.find(value) : raw.find(value) + len(value)])
        expected.append(value)
    assert sum(v is not None and b"\xff" in v for v in expected) == 1
    for kw in ({}, {"segment_bytes": 1}, {"batch_rows": 2}):
        with vecbinlog.open(path, **kw) as log, pytest.warns(vecbinlog.DecodeWarning, match="not valid utf8"):
            table = log.read_table("account_db.refresh_token")
        assert table.schema.field("refresh_token").type == pa.binary(), kw
        assert table.column("refresh_token").to_pylist() == expected, kw
