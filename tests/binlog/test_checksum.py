"""vecbinlog.binlog.checksum against ``zlib.crc32``: events of every length around the folding
steps, at every alignment, each one-byte change found in the event it is in."""

from __future__ import annotations

import platform
import zlib
from pathlib import Path

import numpy as np
import pytest

from vecbinlog.binlog import checksum


def events(lengths: list[int], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random event bodies of ``lengths``, each followed by zlib's CRC32 of it, after a gap of
    0-15 bytes (so that bodies start at every alignment): (bytes, starts, ends)."""
    rng = np.random.default_rng(seed)
    parts, start, end, at = [], [], [], 0
    for n in lengths:
        gap = int(rng.integers(0, 16))
        body = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        parts += [bytes(gap), body, zlib.crc32(body).to_bytes(4, "little")]
        start.append(at + gap)
        end.append(at + gap + n)
        at += gap + n + 4
    return np.frombuffer(b"".join(parts), np.uint8).copy(), np.array(start, np.int64), np.array(end, np.int64)


LENGTHS = list(range(0, 700)) + [1023, 1024, 1025, 4096 + 3, 65536 + 15, 1 << 20]


def test_crc32_of_every_length_equals_zlibs() -> None:
    buf, start, end = events(LENGTHS, 1)
    assert checksum.first_mismatch(buf, start, end) == -1
    assert checksum.first_mismatch(buf, start, end, first=len(start) - 1) == -1
    checksum._kernel()  # zlib's crc32 registered for the compiled checks
    for check in (checksum._mismatch, checksum._python_mismatch):  # the fallbacks, the same
        assert check(buf, start, end, 0) == -1
        buf[start[700]] ^= 1
        assert check(buf, start, end, 0) == 700
        buf[start[700]] ^= 1


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_changed_byte_is_found_in_its_event(where: str) -> None:
    buf, start, end = events(LENGTHS, 2)
    rng = np.random.default_rng(3)
    for k in [0, *rng.choice(len(start), 60, replace=False).tolist(), len(start) - 1]:
        n = int(end[k] - start[k])
        if n == 0:
            continue
        at = int(start[k]) + {"first": 0, "middle": n // 2, "last": n - 1}[where]
        buf[at] ^= 0x10
        assert checksum.first_mismatch(buf, start, end) == k, (k, n)
        assert checksum.first_mismatch(buf, start, end, first=k + 1) == -1
        buf[at] ^= 0x10


def test_the_folding_constants_are_those_published() -> None:
    # Gopal et al. (Intel, 2009) and Linux's crc32-pclmul_asm.S, for the reflected polynomial
    assert [hex(k) for k in (checksum._K1, checksum._K2, checksum._K3, checksum._K4, checksum._K5)] == [
        "0x154442bd4", "0x1c6e41596", "0x1751997d0", "0xccaa009e", "0x163cd6124"]
    assert (hex(checksum._MU), hex(checksum._P)) == ("0x1f7011641", "0x1db710641")


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="PCLMULQDQ is x86-64's")
def test_x86_64_with_pclmulqdq_folds() -> None:
    flags = Path("/proc/cpuinfo").read_text().split() if platform.system() == "Linux" else []
    if "pclmulqdq" not in flags:
        pytest.skip("this CPU has no PCLMULQDQ")
    assert checksum._kernel() is checksum._mismatch_folded
