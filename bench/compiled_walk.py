"""What a compiled row walk would gain: evidence for the design question of the speed issue.

    pip install numba && python bench/compiled_walk.py FILE [FILE ...]

vecbinlog places row images with NumPy (rows.py): the images of one event form a chain (each
starts where the last ended), which NumPy cannot follow one image at a time, so the events of a
segment are walked in lock-step, one round of NumPy calls per image of the longest event. This
script times that placement inside ``read_all(threads=1)`` and, on the very same events (the
arguments ``rows._locate`` receives), a per-event walk compiled with numba that finds where
every value of every image starts (null bitmap, fixed widths, length prefixes, each image
checked to end inside its event). The image counts must agree, or it stops.

numba is not a dependency of vecbinlog: the design card keeps the decoder NumPy only, and
this script exists to measure what leaving that would buy. Only FULL row images (every
column in every image, the bench files' case) are walked here; other groups are left out
of both sums.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    from numba import njit
except ImportError:
    sys.exit("numba is not installed (pip install numba); it is not a dependency of vecbinlog")

import vecbinlog  # noqa: E402
from vecbinlog import rows as R  # noqa: E402


@njit(boundscheck=False)
def walk(buf, cur, end, prefixed, width, nullbytes, off, ln):
    """Every image of events [cur[e], end[e]): off[i, c] = where column c's value starts (-1:
    NULL), ln[i, c] its length prefix. Returns the number of images, -1 when ``off`` is too
    small, -2 when an image runs past its event."""
    n = 0
    for e in range(len(cur)):
        p = cur[e]
        stop = end[e]
        while p < stop:
            if n >= off.shape[0]:
                return -1
            bitmap = p
            p += nullbytes
            if p > stop:
                return -2
            for c in range(len(width)):
                if (buf[bitmap + (c >> 3)] >> (c & 7)) & 1:
                    off[n, c] = -1
                    continue
                w = width[c]
                if prefixed[c]:
                    if p + w > stop:
                        return -2
                    length = 0
                    for k in range(w):
                        length |= np.int64(buf[p + k]) << (8 * k)
                    off[n, c] = p + w
                    ln[n, c] = length
                    p += w + length
                else:
                    off[n, c] = p
                    p += w
            if p > stop:
                return -2
            n += 1
    return n


def main(paths: list[str]) -> int:
    for path in paths:
        numpy_s, groups, images = _numpy_placement(path)
        compiled_s, walked = 0.0, 0
        for buf, cur, end, prefixed, width, n in groups:
            nullbytes = (len(width) + 7) // 8
            off = np.empty((n + 1, len(width)), np.int64)
            ln = np.zeros((n + 1, len(width)), np.int64)
            walk(buf, cur[:0], end[:0], prefixed, width, nullbytes, off, ln)  # compiled before timing
            compiled_s += min(_time(lambda: walk(buf, cur, end, prefixed, width, nullbytes, off, ln)) for _ in range(3))
            got = walk(buf, cur, end, prefixed, width, nullbytes, off, ln)
            if got != n:
                sys.exit(f"{path}: the compiled walk found {got} images where vecbinlog found {n}")
            walked += n
        print(f"{path}: {images} row images; NumPy placement (read_all, threads=1, best of 3) {numpy_s * 1000:.0f} ms; "
              f"compiled walk of the same events (best of 3) {compiled_s * 1000:.0f} ms for the {walked} images "
              "of FULL row images")
    return 0


def _numpy_placement(path: str) -> tuple[float, list, int]:
    """(seconds vecbinlog spends placing images in read_all, best of 3; the groups of events it
    placed whole with FULL images, as the compiled walk needs them; images placed)."""
    groups: list = []
    spent = [0.0]
    counted = [0]
    original = R._locate

    def timed_locate(file, maps, rows, table_map, tables, limit, resume, *a, **k):
        t0 = time.perf_counter()
        pieces, more, n = original(file, maps, rows, table_map, tables, limit, resume, *a, **k)
        spent[0] += time.perf_counter() - t0
        counted[0] += n
        if not groups_done and resume is None and more is None:
            _, present, cur = R._rows_bodies(file, maps, rows, len(table_map.columns))
            if present.all():
                storage = [spec.storage() for spec in table_map.columns]
                groups.append((file.buf, cur, rows.body_end.copy(), np.array([h != "fixed" for h, _ in storage]),
                               np.array([w for _, w in storage], np.int64), n))

        def timed_pieces():
            while True:
                t1 = time.perf_counter()
                try:
                    piece = next(pieces)
                except StopIteration:
                    return
                finally:
                    spent[0] += time.perf_counter() - t1
                yield piece
        return timed_pieces(), more, n

    best = None
    groups_done = False
    R._locate = timed_locate
    try:
        for _ in range(3):
            spent[0], counted[0] = 0.0, 0
            with vecbinlog.open(path, threads=1) as log:
                log.read_all()
            best = spent[0] if best is None else min(best, spent[0])
            groups_done = True
    finally:
        R._locate = original
    return best, groups, counted[0]


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else "usage: python bench/compiled_walk.py FILE [FILE ...]")
