"""vecbinlog.decode.decoders.utf8 against Python's strict ``utf-8`` codec (and Arrow's check): every
2-byte sequence, every lead of 3 and 4 bytes with the continuation bytes at the edges of
their ranges, at every position of a compiled step, and values cut anywhere in valid text."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from vecbinlog.decode.decoders import utf8
from vecbinlog.decode.decoders.utf8 import LANES, valid_values
from vecbinlog.jit import host_x86_has


@pytest.fixture(autouse=True, params=["lookup", "rules"])
def check(request, monkeypatch) -> str:
    """Every test runs with the table lookups (x86-64 with AVX2 only) and with the comparisons."""
    if request.param == "lookup" and not host_x86_has("avx2"):
        pytest.skip("this CPU has no AVX2 (or NUMBA_CPU_NAME is set): the lookups are not used")
    monkeypatch.setattr(utf8, "_LOOKUP", request.param == "lookup")
    return request.param


def python_says(values: list[bytes]) -> bool:
    try:
        for v in values:
            v.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def ours(values: list[bytes]) -> bool:
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    return valid_values(offsets, np.frombuffer(b"".join(values) + b"\xff" * 8, np.uint8))


#: continuation bytes at the edges of the ranges the rules name, and bytes that are not one
EDGES = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF]


def test_every_two_byte_sequence_in_every_position_of_a_step() -> None:
    seen = {True: 0, False: 0}
    for a, b in itertools.product(range(256), repeat=2):
        seq = bytes([a, b])
        expected = python_says([seq])
        for before in (0, 1, 3, LANES - 1, LANES + 2, 2 * LANES):  # in the prologue, a step, across steps
            value = b"x" * before + seq + b"y" * 5
            assert ours([value]) == expected, (seq, before)
        seen[expected] += 1
    assert seen[True] == 128 * 128 + 30 * 64  # two ASCII bytes, or a lead C2-DF and a continuation byte


def test_three_and_four_byte_sequences() -> None:
    checked = 0
    for lead in range(0xE0, 0x100):
        for rest in itertools.product(EDGES, repeat=3 if lead >= 0xF0 else 2):
            seq = bytes([lead, *rest])
            expected = python_says([seq])
            for before in (1, LANES - 2):  # in the prologue; across two steps
                for after in (0, 40):
                    value = b"z" * before + seq + b"w" * after
                    assert ours([value]) == expected, (seq, before, after)
                    checked += 1
    assert checked == 4 * (16 * 18**2 + 16 * 18**3)


def test_text_cut_into_values_anywhere() -> None:
    text = ("naïve café — 東京 🙂 ok; " * 40).encode()
    rng = np.random.default_rng(7)
    results = set()
    for _ in range(400):
        cuts = np.sort(rng.choice(len(text), size=int(rng.integers(1, 12)), replace=False))
        values = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        expected = python_says(values)
        assert ours(values) == expected, cuts
        arrow = pa.array(values, pa.binary()).cast(pa.large_binary())
        offsets = np.frombuffer(arrow.buffers()[1], np.int64)[: len(values) + 1]
        strings = pa.LargeStringArray.from_buffers(len(values), arrow.buffers()[1], arrow.buffers()[2])
        try:
            strings.validate(full=True)
            arrow_ok = True
        except pa.ArrowInvalid:
            arrow_ok = False
        assert arrow_ok == expected and int(offsets[-1]) == len(text)
        results.add(expected)
    assert results == {True, False}  # both kinds of cut were met


@pytest.mark.parametrize("length", [0, 1, 2, 3, 34, 35, 36, 67, 1000])
def test_incomplete_end_and_empty_values(length: int) -> None:
    body = b"a" * length
    assert ours([body]) is True
    assert ours([body, b"", body]) is True
    assert ours([body + b"\xe2\x82"]) is False  # € cut short
    assert ours([body + b"\xe2\x82", b"\xac"]) is False  # … and finished in the next value
    assert ours([body + b"\xe2\x82\xac", b""]) is True
    assert ours([]) is True
