"""What the fuzz tests share (tests/test_fuzz.py, tests/test_fuzz_index.py): how many examples
they run (``VECBINLOG_FUZZ_EXAMPLES``), the hard alarm that catches a hang, and the one byte
mutator, whatever the bytes are of (a binlog, an archive index's Parquet file): a list of edits
drawn by hypothesis, then applied."""

from __future__ import annotations

import contextlib
import os
import signal
import warnings

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Hypothesis imports its patch writer (libcst, which trips a DeprecationWarning from
# mypy_extensions) while reporting a failure; under filterwarnings=error that turns every
# falsifying example into an INTERNALERROR (or a FlakyStrategyDefinition). Import it now, quietly.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        import hypothesis.extra._patching  # noqa: F401
    except Exception:  # pragma: no cover - optional dependency of hypothesis
        pass

#: ``VECBINLOG_FUZZ_EXAMPLES`` multiplies every ``max_examples`` (default 1).
SCALE = float(os.environ.get("VECBINLOG_FUZZ_EXAMPLES", "1"))

#: Bytes that mean something to a packed-integer reader, and the extremes.
BOUNDARY_BYTES = [0x00, 0x01, 0x7F, 0x80, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF]
BOUNDARY_U32 = [0, 1, 18, 19, 20, 23, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]


#: Per operation: the hard alarm that catches a hang (or a walk gone quadratic). No test asserts a
#: tighter time: a 5 s limit once failed on a 1 257-byte file that reads in 0.03 s, when this
#: shared VM stalled (CI, 2026-11-25).
ALARM_S = 20.0


class Hang(BaseException):
    """The hard alarm went off: a call took longer than ALARM_S."""


def _on_alarm(signum, frame):
    raise Hang(f"still running after {ALARM_S} s")


@contextlib.contextmanager
def alarm(seconds: float):
    if not hasattr(signal, "setitimer"):
        yield
        return
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def settings_for(n: int, **kw) -> settings:
    """``n`` examples (times :data:`SCALE`), the same ones every run (derandomized), no deadline."""
    return settings(
        max_examples=max(1, int(n * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
        **kw,
    )


@st.composite
def byte_mutations(draw, size: int, lo: int = 0, hi: int | None = None, *, runs: bool = False, cuts: bool = False):
    """A list of edits at positions in [lo, hi): bit flips, bytes and 16/32-bit words set to
    boundary or random values; with ``runs``, runs of up to 256 bytes zeroed; with ``cuts``,
    the bytes cut short (the edits after a cut past the new end do nothing)."""
    hi = size if hi is None else hi
    pos = st.integers(lo, max(lo, hi - 1))
    edits = [
        st.tuples(st.just("flip"), pos, st.integers(0, 7)),
        st.tuples(st.just("set"), pos, st.sampled_from(BOUNDARY_BYTES)),
        st.tuples(st.just("set"), pos, st.integers(0, 255)),
        st.tuples(st.just("u32"), pos, st.sampled_from(BOUNDARY_U32)),
        st.tuples(st.just("u16"), pos, st.sampled_from([0, 1, 0xFF, 0x100, 0x7FFF, 0xFFFF])),
    ]
    edits += [st.tuples(st.just("zero"), pos, st.integers(1, 256))] if runs else []
    edits += [st.tuples(st.just("cut"), pos, st.just(0))] if cuts else []
    return draw(st.lists(st.one_of(*edits), min_size=1, max_size=8))


def apply_edits(data: bytearray, edits) -> bytearray:
    """``data`` with ``edits`` (:func:`byte_mutations`) made, in order."""
    for kind, pos, v in edits:
        if pos >= len(data):
            continue
        if kind == "flip":
            data[pos] ^= 1 << v
        elif kind == "set":
            data[pos] = v
        elif kind == "u32":
            data[pos : pos + 4] = v.to_bytes(4, "little")[: len(data) - pos]
        elif kind == "u16":
            data[pos : pos + 2] = v.to_bytes(2, "little")[: len(data) - pos]
        elif kind == "zero":
            data[pos : pos + v] = bytes(len(data[pos : pos + v]))
        elif kind == "cut":
            del data[pos:]
    return data
