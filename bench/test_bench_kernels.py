"""The compiled checks against what they replaced, on the same bytes in the same run.

    pytest bench/test_bench_kernels.py --benchmark-enable --benchmark-group-by=group

* ``utf8``: whether 64 MB of text values (one byte in six not ASCII, as the bench files'
  text) are well-formed UTF-8: :func:`vecbinlog.decode.decoders.utf8.valid_values` against Arrow's
  ``validate(full=True)`` (what vecbinlog used before);
* ``crc32``: the CRC32 of 64 MB of events of 100 B-8 KiB: :func:`vecbinlog.binlog.checksum.first_mismatch`
  (folded with PCLMULQDQ on x86-64) against zlib's ``crc32`` called from the compiled loop
  (what vecbinlog used before, and still does on other CPUs).

GB/s are in extra_info.
"""

from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pytest

from vecbinlog.binlog import checksum
from vecbinlog.decode.decoders.utf8 import valid_values

SIZE = 64 << 20


@pytest.fixture(scope="module")
def text_values() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    words = [w.encode() for w in ("order", "café", "naïve", "東京", "data", "Grüße", "ok", "json", "🙂", "value")]
    picks = rng.integers(0, len(words), SIZE // 5)
    data = np.frombuffer(b" ".join(words[i] for i in picks)[:SIZE], np.uint8)
    data = data[: np.flatnonzero(data < 0x80)[-1] + 1]  # end on a whole character
    cuts = np.flatnonzero(data == 0x20)[::40] + 1  # values of ~200 bytes, cut after a space
    offsets = np.concatenate([[0], cuts, [len(data)]]).astype(np.int64)
    return offsets, data


@pytest.mark.benchmark(group="utf8")
@pytest.mark.parametrize("how", ["vecbinlog", "arrow"])
def test_utf8_check(benchmark, text_values, how):
    offsets, data = text_values
    if how == "vecbinlog":
        ok = benchmark(valid_values, offsets, data)
    else:
        arr = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))
        ok = benchmark(lambda: arr.validate(full=True) is None)
    assert ok is True
    benchmark.extra_info["GB/s"] = round(len(data) / benchmark.stats.stats.min / 1e9, 2)


@pytest.fixture(scope="module")
def events() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    sizes = rng.integers(100, 8192, SIZE // 4000)
    parts, start, end, at = [], [], [], 0
    for n in sizes.tolist():
        body = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        parts += [body, zlib.crc32(body).to_bytes(4, "little")]
        start.append(at)
        end.append(at + n)
        at += n + 4
    return np.frombuffer(b"".join(parts), np.uint8), np.array(start, np.int64), np.array(end, np.int64)


@pytest.mark.benchmark(group="crc32")
@pytest.mark.parametrize("how", ["vecbinlog", "zlib"])
def test_crc32(benchmark, events, how):
    buf, start, end = events
    checksum._kernel()  # zlib's crc32 registered for compiled code
    check = checksum.first_mismatch if how == "vecbinlog" else (lambda *a: checksum._mismatch(*a, 0))
    assert benchmark(check, buf, start, end) == -1
    benchmark.extra_info["GB/s"] = round(len(buf) / benchmark.stats.stats.min / 1e9, 2)
