"""The compiled walks of rows events (vecbinlog/decode/rowwalk.py) against the reference decoder:
on the corpus files, the rows headers (where the bitmaps and the first image are, how many
columns each image holds) and, image by image, every column's raw bytes (copied fixed-width
values, positions and lengths of the length-prefixed ones), NULLs, absent columns and
partial-JSON flags are the reference's; a walk in small steps (``cap``) gives the same images
as one walk; a value running past its event is reported at the column the reference names."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pytest

from vecbinlog.decode import rowwalk as walk

from ..conftest import DATA, corpus_path
from ..support import builder as b
from ..support import reference as ref
from ..support.corpus import corpus_names

PARTIAL = ref.PARTIAL_UPDATE_ROWS_EVENT


@lru_cache(maxsize=None)
def decoded(path) -> tuple[bytes, ref.RefBinlog | None]:
    data = path.read_bytes()
    try:
        return data, ref.decode_bytes(data)
    except ref.RefDecodeError:
        return data, None


#: the corpus's files with rows events the reference reads to the last image (not MariaDB
#: 10.0's TIMESTAMP(n) of tests/test_reference.py's KNOWN_UNDECODABLE), and the sample
WITH_ROWS = [*(n for n in corpus_names(rows=True) if n != "pingcap__tiflow/mysql-bin.000001"),
             "sample/mariadb-bin.000001"]


def rows_file(name: str):
    """A file of WITH_ROWS (found when the test runs): its path; the reference reads its images."""
    path = DATA / name if name.startswith("sample/") else corpus_path(name)
    r = decoded(path)[1]
    assert r is not None and any(e.inner is None and e.version > 0 for e in r.rows_events), name
    return path


@dataclass
class Plan:
    """How the walk is asked to store each column (walk_row_images' per-column arrays),
    written here from the docstring: fixed-width columns one after another in ``fixed``,
    ``cap`` values each then PADDING bytes; prefixed ones one row each of the position arrays."""

    how: np.ndarray
    width: np.ndarray
    at: np.ndarray
    json_slot: np.ndarray
    fixed_size: int
    n_var: int
    n_json: int


def plan_of(tm: ref.RefTableMap, cap: int) -> Plan | None:
    n = tm.ncols
    how, width, at, json_slot = (np.zeros(n, np.int8), np.zeros(n, np.int64), np.zeros(n, np.int64),
                                 np.full(n, -1, np.int64))
    fixed = n_var = n_json = 0
    for c, (t, m) in enumerate(zip(tm.column_types, tm.column_meta)):
        try:
            kind, w = ref.value_storage(t, m)
        except ref.RefDecodeError:
            return None
        width[c] = w
        if kind == "fixed":
            at[c], fixed = fixed, fixed + cap * w + walk.PADDING
        else:
            how[c], at[c], n_var = walk.PREFIXED, n_var, n_var + 1
        if t == ref.T_JSON:
            json_slot[c], n_json = n_json, n_json + 1
    return Plan(how, width, at, json_slot, fixed, n_var, n_json)


@dataclass
class Run:
    """Rows events of one table layout, as the walk takes them, with the reference's view."""

    tm: ref.RefTableMap
    events: list[ref.RefRowsEvent]
    heads: list[ref.RefRowsHeader]
    offset: np.ndarray
    post_header: np.ndarray
    end: np.ndarray
    is_update: np.ndarray
    partial: np.ndarray


def runs(path) -> list[Run]:
    """The file's rows events (v1, v2; not in payloads) grouped by the TABLE_MAP in force."""
    data, r = decoded(path)
    fmt = r.formats[0]
    bounds = {e.offset: e for e in ref.walk_events(data)[0]}
    in_force: dict[int, ref.RefTableMap] = {}
    groups: dict[int, list[ref.RefRowsEvent]] = {}
    maps = {pos: tm for pos, tm in r.table_maps.items() if isinstance(pos, int)}
    rows = {e.pos: e for e in r.rows_events if e.inner is None and e.version > 0}
    for e in r.events:
        if e.pos in maps:
            in_force[maps[e.pos].table_id] = maps[e.pos]
        elif e.pos in rows:
            groups.setdefault(in_force[rows[e.pos].table_id].pos, []).append(rows[e.pos])
    out = []
    for pos, events in groups.items():
        heads = [ref.read_rows_header(data, fmt, bounds[e.pos]) for e in events]
        out.append(Run(maps[pos], events, heads, np.array([e.pos for e in events], np.int64),
                       np.array([fmt.post_header(e.type) for e in events], np.int64),
                       np.array([h.body_end for h in heads], np.int64),
                       np.array([e.kind == "update" for e in events], bool),
                       np.array([e.type == PARTIAL for e in events], bool)))
    return out


def walk_headers(buf: np.ndarray, run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(run.offset)
    first, bitmaps, present = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros((n, 2), np.int64)
    code, _, _ = walk.walk_rows_headers(buf, run.offset, run.post_header, run.end, run.is_update, run.tm.ncols,
                                        first, bitmaps, present)
    assert code == 0, walk.ROWS_ERRORS[code]
    return first, bitmaps, present


def walk_images(buf: np.ndarray, run: Run, cap: int) -> list[tuple[int, int, list]]:
    """Every image the walk finds, in calls of at most ``cap`` images: (event, image number,
    per column ABSENT / None / the raw bytes / ("partial", raw bytes))."""
    ncols = run.tm.ncols
    plan = plan_of(run.tm, cap)
    first, bitmaps, present = walk_headers(buf, run)
    e, p, k, out = 0, int(first[0]), 0, []
    while e < len(run.offset):
        ev_, num, start = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
        valid, absent = np.empty((ncols, cap), bool), np.empty((ncols, cap), bool)
        fixed = np.empty(plan.fixed_size, np.uint8)
        var_start, var_len = np.empty((plan.n_var, cap), np.int64), np.empty((plan.n_var, cap), np.int64)
        partial = np.empty((plan.n_json if run.partial.any() else 0, cap), bool)
        n, e, p, k, code, image, column = walk.walk_row_images(
            buf, bitmaps, run.end, run.is_update, run.partial, present, ncols, plan.how, plan.width, plan.at,
            plan.json_slot, e, p, k, cap, ev_, num, start, valid, absent, fixed, var_start, var_len, partial,
            np.empty((0, cap), np.int64))
        assert code == 0, walk.IMAGE_ERRORS[code]
        for i in range(n):
            values = []
            for c in range(ncols):
                a, w = int(plan.at[c]), int(plan.width[c])
                if absent[c, i]:
                    values.append(ref.ABSENT)
                elif not valid[c, i]:
                    values.append(None)
                elif plan.how[c] == walk.FIXED:
                    values.append(bytes(fixed[a + i * w: a + (i + 1) * w]))
                else:
                    raw = bytes(buf[var_start[a, i]: var_start[a, i] + var_len[a, i]])
                    j = plan.json_slot[c]
                    values.append(("partial", raw) if len(partial) and j >= 0 and partial[j, i] else raw)
            out.append((int(ev_[i]), int(num[i]), values))
    return out


def walk_once(buf: np.ndarray, run: Run, cap: int) -> tuple:
    """One call of the walk over ``run`` (no partial-JSON flags asked for) from its
    first image, at most ``cap`` images: its result (n, e, p, k, code, image, column)."""
    ncols = run.tm.ncols
    first, bitmaps, present = walk_headers(buf, run)
    plan = plan_of(run.tm, cap)
    outs = [np.empty(cap, np.int64) for _ in range(3)] + [
        np.empty((ncols, cap), bool), np.empty((ncols, cap), bool), np.empty(plan.fixed_size, np.uint8),
        np.empty((plan.n_var, cap), np.int64), np.empty((plan.n_var, cap), np.int64), np.empty((0, cap), bool),
        np.empty((0, cap), np.int64)]
    return walk.walk_row_images(buf, bitmaps, run.end, run.is_update, run.partial, present, ncols, plan.how,
                                plan.width, plan.at, plan.json_slot, 0, int(first[0]), 0, cap, *outs)

def expected_images(run: Run) -> list[tuple[int, int, list]]:
    return [(e, k, [("partial", v.raw) if isinstance(v, ref.PartialJson) else v for v in image])
            for e, ev in enumerate(run.events) for k, image in enumerate(ev.images)]


@pytest.mark.parametrize("name", WITH_ROWS)
def test_rows_headers_are_the_references(name):
    path = rows_file(name)
    data, _ = decoded(path)
    buf = np.frombuffer(data, np.uint8)
    for run in runs(path):
        first, bitmaps, present = walk_headers(buf, run)
        assert first.tolist() == [h.images_at for h in run.heads]
        assert bitmaps.tolist() == [h.width_end for h in run.heads]
        assert present[:, 0].tolist() == [sum(h.present_before) for h in run.heads]
        for h, update, counts in zip(run.heads, run.is_update, present):
            assert counts[1] == (sum(h.present_after) if update else counts[0])


@pytest.mark.parametrize("name", WITH_ROWS)
def test_row_images_are_the_references(name):
    """Every image of every layout, once walked whole and once 3 images at a time (an
    UPDATE's two images never split: the calls end between rows)."""
    path = rows_file(name)
    data, _ = decoded(path)
    buf = np.frombuffer(data, np.uint8)
    for run in runs(path):
        if plan_of(run.tm, 1) is None:
            continue
        expected = expected_images(run)
        assert walk_images(buf, run, max(len(expected), 2)) == expected, run.tm.table
        assert walk_images(buf, run, 3) == expected, run.tm.table


def test_value_past_its_event_is_reported_at_the_references_column():
    """A VARCHAR's length made to run past the event: the walk stops at that image and
    column, which is the column the reference's error names."""
    w = b.BinlogWriter(checksum=False)
    w.add(19, b.table_map_body(5, "d", "t", [3, 15, 3], [b"", (60).to_bytes(2, "little"), b""]))
    good = b.row_image([(1).to_bytes(4, "little"), b.prefixed(b"abc", 1), (2).to_bytes(4, "little")])
    bad = b.row_image([(3).to_bytes(4, "little"), bytes([200]) + b"xyz", (4).to_bytes(4, "little")])
    w.add(30, b.rows_body(5, 3, good + bad, extra=b""))
    data = w.bytes()
    with pytest.raises(ref.RefDecodeError, match="value of column 2"):
        ref.decode_bytes(data)
    path_runs = runs_of(data)
    buf = np.frombuffer(data, np.uint8)
    run = path_runs[0]
    n, e, p, k, code, image, column = walk_once(buf, run, 4)
    assert n == 1 and code in (2, 3) and (image, column + 1) == (1, 2)


@pytest.mark.parametrize("types, widths", [
    ([3, 1, 8], [4, 1, 8]),  # LONG, TINY, LONGLONG: none wider than a word
    ([3, 246, 1], [4, 9, 1]),  # ... a DECIMAL(20,0) of 9 bytes
], ids=["narrow", "wide"])
def test_images_ending_at_the_end_of_the_buffer_are_read_whole(types, widths):
    """A file without checksums whose last event is a rows event of fixed-width columns:
    the last value ends at the buffer's last byte, where a word read at a value's start runs
    past the buffer. Every image's bytes are the ones written, and an image made one byte
    longer than its event runs past it (code 3), whatever is past the buffer."""
    meta = [b"\x14\x00" if t == 246 else b"" for t in types]
    images = [[bytes([(i * 31 + c * 7 + j) % 256 for j in range(w)]) for c, w in enumerate(widths)] for i in range(5)]
    for cut in (False, True):
        w = b.BinlogWriter(checksum=False)
        w.add(19, b.table_map_body(5, "d", "t", types, meta))
        body = b.rows_body(5, len(types), b"".join(b.row_image(image) for image in images), extra=b"")
        w.add(30, body[:-1] if cut else body)
        data = w.bytes()
        run = runs_of(data)[0]
        buf = np.frombuffer(data, np.uint8)
        assert run.end[-1] == len(buf)
        if not cut:
            got = walk_images(buf, run, 8)
            assert [values for _, _, values in got] == images
            continue
        n, e, p, k, code, image, column = walk_once(buf, run, 8)
        assert (n, code, image) == (4, 3, 4)

def test_columns_gathered_at_once_are_each_columns_values():
    """gather_columns copies the values of several columns row after row: each column's are
    its values' bytes in row order (Python slices of the buffer), none where not valid; a
    value outside the buffer gives None (each column's gather_var then says which)."""
    from vecbinlog.decode.decoders.common import gather_columns

    rng = np.random.default_rng(7)
    buf = rng.integers(0, 256, 5000, dtype=np.uint8)
    n, k = 300, 3
    starts = [rng.integers(0, 4000, n).astype(np.int64) for _ in range(k)]
    lengths = [rng.integers(0, 40, n).astype(np.int64) for _ in range(k)]
    valid = [rng.random(n) < 0.8 for _ in range(k)]
    out = gather_columns(buf, starts, lengths, valid)
    raw = buf.tobytes()
    for c, (offsets, data) in enumerate(out):
        values = [raw[s:s + m] if v else b"" for s, m, v in zip(starts[c].tolist(), lengths[c].tolist(), valid[c].tolist())]
        assert offsets.tolist() == np.concatenate([[0], np.cumsum([len(v) for v in values])]).tolist()
        assert data.tobytes() == b"".join(values)
    starts[1][100] = 4990  # 10 bytes left: a value of more runs out of the buffer
    lengths[1][100], valid[1][100] = 20, True
    assert gather_columns(buf, starts, lengths, valid) is None


def runs_of(data: bytes) -> list[Run]:
    """``runs`` of a file in memory whose images the reference cannot all read: its rows
    events' headers, no images."""
    fmt = ref.format_of(data)
    bounds = ref.walk_events(data)[0]
    tm = ref.read_table_map(data, fmt, bounds[1])
    heads = [ref.read_rows_header(data, fmt, e) for e in bounds[2:]]
    return [Run(tm, [], heads, np.array([e.offset for e in bounds[2:]], np.int64),
                np.array([fmt.post_header(e.type) for e in bounds[2:]], np.int64),
                np.array([h.body_end for h in heads], np.int64), np.zeros(len(heads), bool),
                np.zeros(len(heads), bool))]


# -- loading the kernels --------------------------------------------------------------------------
_LOAD_CHILD = r"""
import json, sys
import pyarrow as pa
import vecbinlog
from vecbinlog.binlog import checksum, headers
from vecbinlog.decode import rowwalk
with vecbinlog.open(sys.argv[1]) as log:
    table = log.read_table("shop.orders")
with pa.OSFile(sys.argv[2], "wb") as f, pa.ipc.new_file(f, table.schema) as w:
    w.write_table(table)
kernels = (headers.walk_event_headers, rowwalk.walk_rows_headers, rowwalk.walk_row_images, checksum._KERNEL)
print(json.dumps({
    "hits": sum(sum(k.stats.cache_hits.values()) for k in kernels),
    "misses": sum(sum(k.stats.cache_misses.values()) for k in kernels),
    "registries": [m for m in ("numba.cpython.unicode", "numba.np.arraymath", "numba.typed.typeddict") if m in sys.modules],
}))
"""


def test_kernels_load_from_cache_without_numbas_registries(tmp_path):
    """A process that finds its kernels in numba's cache loads them without numba's context
    refresh (vecbinlog.jit: 0.10-0.16 s of every start): numba's implementation modules stay
    unimported, and what it reads equals what this process (whose kernels were compiled or
    loaded before) reads."""
    import json
    import subprocess
    import sys

    import pyarrow as pa
    import vecbinlog

    sample = DATA / "sample" / "mariadb-bin.000001"
    out = tmp_path / "orders.arrow"
    runs = []
    for _ in range(2):  # the first may compile (an empty cache), the second loads
        p = subprocess.run([sys.executable, "-c", _LOAD_CHILD, str(sample), str(out)], capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        runs.append(json.loads(p.stdout))
    assert runs[1]["misses"] == 0 and runs[1]["hits"] >= 4, runs  # the CRC kernel: the self-check and the file
    assert runs[1]["registries"] == []
    with vecbinlog.open(sample) as log:
        expected = log.read_table("shop.orders")
    with pa.memory_map(str(out)) as f:
        assert pa.ipc.open_file(f).read_all().equals(expected)
