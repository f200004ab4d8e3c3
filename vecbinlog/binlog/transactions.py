"""Transactions: which transaction each event is in, its GTID, its XID, and how it ended.

What the servers write around the changes of a transaction (MySQL binlog.cc,
MYSQL_BIN_LOG::commit / binlog_rollback / binlog_savepoint_rollback; MariaDB log.cc)::

    starts   a GTID event (33, 34, 42; MariaDB 162), or a ``BEGIN`` / ``XA START`` query
             that does not follow a GTID event (servers without GTIDs)
    ends     XID_EVENT                 committed by a transactional engine (InnoDB); has the xid
             ``COMMIT`` query          committed, non-transactional tables only (MyISAM, Aria...)
             ``ROLLBACK`` query        rolled back: the server still writes the transaction when
                                       it changed a non-transactional table
             XA_PREPARE / ``XA PREPARE``  prepared; a later ``XA COMMIT``/``XA ROLLBACK`` decides
             any other statement       when no BEGIN opened the transaction (DDL: GTID + query;
                                       a MariaDB GTID without FL_STANDALONE counts as BEGIN)
    inside   ``SAVEPOINT `x``` ... ``ROLLBACK TO `x```: the changes between them were undone

Every change gets the transaction's outcome (:data:`OUTCOMES`). Each event's control kind is
found for all events of a segment at once with NumPy (:func:`classify`); which transaction
each event is in is a chain (it depends on every event before it), followed by one compiled
walk (:func:`follow_transactions`, the one place the rules above are written), which also
reads the xid of each XID that ends one and the flags of MariaDB GTIDs (where a NumPy form
took some thirty passes over the segment's events). SAVEPOINT/ROLLBACK TO statements, which
are rare, are replayed one by one. A
transaction still open at the end of a segment is resolved by walking the headers after
it up to its end (once per transaction; the walk keeps no index).
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..arrowbuild import numbers, strings
from ..constants import ROWS_EVENTS, UNDECODED_ROWS_EVENTS, EventType
from ..errors import FileChangedError, MalformedEventError, TruncatedWarning
from ..jit import check_spans, kernel, load_word, prefetch
from .compression import unpack_segment
from .events import annotated_statement, parse_xid, query_bounds
from .file import DEFAULT_SEGMENT_BYTES, BinlogFile
from .gtid import FL_STANDALONE, GTID_EVENTS, gtid_texts
from .headers import EventIndex, code_table
from .eventsource import EventSource, event_path
from .spec import COMMON_HEADER_LEN, MAGIC_LEN

__all__ = ["OUTCOMES", "TransactionTracker", "TxnContext", "classify", "follow_transactions", "FileScan",
           "StartScan", "scan_transactions"]


#: ``_outcome`` values, in the order of their codes.
OUTCOMES = ("commit", "rollback", "prepare", "incomplete")
COMMIT, ROLLBACK, PREPARE, INCOMPLETE = range(4)

# control kinds of events (FILE_START: the first event of a file after another's, in a step of
# joined files: a transaction still open before it never ends, as at the end of a file)
NONE, GTID, BEGIN, XID, COMMIT_Q, ROLLBACK_Q, PREPARE_Q, SAVEPOINT, ROLLBACK_TO, OTHER, ANNOTATE, FILE_START = range(12)
_ENDS = code_table([XID, COMMIT_Q, ROLLBACK_Q, PREPARE_Q, FILE_START])  # by kind
_OUTCOME_OF_END = {XID: COMMIT, COMMIT_Q: COMMIT, OTHER: COMMIT, ROLLBACK_Q: ROLLBACK, PREPARE_Q: PREPARE}
#: control kind of a transaction's last event -> outcome code
_OUTCOME_OF_KIND = np.full(FILE_START + 1, INCOMPLETE, np.int8)
for _k, _o in _OUTCOME_OF_END.items():
    _OUTCOME_OF_KIND[_k] = _o

#: the control kind of each event type (QUERY_EVENT: by its statement, :func:`classify`)
_KIND_OF_CODE = np.full(256, NONE, np.int8)
_KIND_OF_CODE[sorted(GTID_EVENTS)] = GTID
_KIND_OF_CODE[[EventType.XID_EVENT]] = XID
_KIND_OF_CODE[[EventType.XA_PREPARE_LOG_EVENT]] = PREPARE_Q
_KIND_OF_CODE[[EventType.ROWS_QUERY_LOG_EVENT, EventType.ANNOTATE_ROWS_EVENT]] = ANNOTATE
_CHANGE_CODES = code_table(sorted({*ROWS_EVENTS, *UNDECODED_ROWS_EVENTS}))
#: (statement text, exact match or prefix, kind), checked in order
_STATEMENTS = (
    (b"BEGIN", True, BEGIN),
    (b"COMMIT", True, COMMIT_Q),
    (b"ROLLBACK", True, ROLLBACK_Q),
    (b"SAVEPOINT ", False, SAVEPOINT),
    (b"ROLLBACK TO ", False, ROLLBACK_TO),
    (b"XA START", False, BEGIN),
    (b"XA BEGIN", False, BEGIN),
    (b"XA END", False, NONE),
    (b"XA PREPARE", False, PREPARE_Q),
)
_PEEK = max(len(s) for s, _, _ in _STATEMENTS)


#: follow_transactions' status: a MariaDB GTID event shorter than its GTID, an XID event shorter than its xid
FOLLOW_OK, SHORT_GTID, SHORT_XID = 0, 1, 2
_MARIADB_GTID = int(EventType.GTID_EVENT)
_XID_LEN = 8
_GTID_FLAGS_AT, _GTID_BODY = 12, 13  # flags2 after seq_no (8) and domain_id (4)


@kernel
def follow_transactions(buf, kind, type_code, offset, body_end, post_header_len, carried, carried_begun, after_gtid,
                        txn, slot_first, slot_end, xid, has_xid, read_xids, gtid_seq, gtid_domain):  # pragma: no cover
    """Which transaction each event of a segment is in (``kind``: control kinds, :func:`classify`).

    A transaction starts at a GTID event, or a BEGIN / XA START that does not follow one
    (``after_gtid``: the event before the segment is a GTID event); it is *begun* when a
    BEGIN opened it (or a MariaDB GTID without FL_STANDALONE, which stands for one), and
    ends at its first XID / COMMIT / ROLLBACK / XA PREPARE (or the first event of another
    file), or at any other statement when it is not begun (DDL). ``carried``: a transaction
    is open before the segment (slot 0; ``carried_begun``: begun).

    Writes ``txn`` (each event's slot, -1 outside any) and per slot ``slot_first`` (its
    first event, -1 for the carried one), ``slot_end`` (the event that ended it, -1: still
    open at the end of the segment or never ended: another start came first), ``xid`` and
    ``has_xid`` (of an XID that ended it, with ``read_xids``), and for a slot a MariaDB GTID
    opens, its ``gtid_seq`` and ``gtid_domain`` (read here, where its flags are read: the
    GTID's text is built from them, :func:`~.gtid.gtid_texts`). Returns ``(slots, begun, status, event)``:
    ``begun`` of the transaction open at the end, and FOLLOW_OK or the status and event of
    a malformed GTID or XID event.
    """
    slots = 0
    cur = -1
    is_open = False
    begun = False
    if carried:
        slot_first[0] = -1
        slot_end[0] = -1
        has_xid[0] = False
        slots, cur, is_open, begun = 1, 0, True, carried_begun
    prev_gtid = after_gtid
    n = len(kind)
    for i in range(n):
        if i + 8 < n and (kind[i + 8] == GTID or kind[i + 8] == XID):  # its body is read: asked for early
            prefetch(buf, offset[i + 8] + COMMON_HEADER_LEN)
        k = kind[i]
        if k == GTID or (k == BEGIN and not prev_gtid):
            cur = slots
            slots += 1
            slot_first[cur] = i
            slot_end[cur] = -1
            has_xid[cur] = False
            is_open = True
            begun = k == BEGIN
            if type_code[i] == _MARIADB_GTID:
                at = offset[i] + COMMON_HEADER_LEN
                if at + _GTID_BODY > body_end[i]:
                    return slots, begun, SHORT_GTID, i
                begun = (buf[at + _GTID_FLAGS_AT] & FL_STANDALONE) == 0
                gtid_seq[cur] = load_word(buf, at)
                gtid_domain[cur] = (np.uint32(buf[at + 8]) | (np.uint32(buf[at + 9]) << np.uint32(8))
                                    | (np.uint32(buf[at + 10]) << np.uint32(16)) | (np.uint32(buf[at + 11]) << np.uint32(24)))
            txn[i] = cur
        else:
            if k == BEGIN:
                begun = True
            txn[i] = cur if is_open else -1
            if _ENDS[k] or (k == OTHER and not begun):
                if is_open and k == XID and read_xids:
                    at = offset[i] + COMMON_HEADER_LEN + post_header_len[i]
                    if at + _XID_LEN > body_end[i]:
                        return slots, begun, SHORT_XID, i
                    v = np.uint64(0)
                    for j in range(_XID_LEN):
                        v |= np.uint64(buf[at + j]) << np.uint64(8 * j)
                    xid[cur] = v
                    has_xid[cur] = True
                if is_open:
                    slot_end[cur] = i
                is_open = False
        prev_gtid = k == GTID
    return slots, begun, FOLLOW_OK, -1


def _malformed(src: EventSource, index: EventIndex, status: int, i: int) -> None:
    """Raise for the event ``index[i]`` that :func:`follow_transactions` found malformed."""
    name, why = (("GTID_EVENT", "event is shorter than the 13 bytes of its GTID") if status == SHORT_GTID
                 else ("XID_EVENT", "XID event shorter than its 8-byte xid"))
    raise MalformedEventError(why, path=event_path(src, i), offset=int(index.pos[i]), event_type=name)


def classify(src: EventSource, index: EventIndex) -> np.ndarray:
    """The control kind (int8) of every event: GTID, BEGIN, XID, COMMIT, ... or NONE (the
    events' bytes checked to be inside ``src.buf`` first: :func:`follow_transactions` reads them)."""
    check_spans(len(src.buf), index.offset, index.body_end, "transactions followed", src.path)
    tc = index.type_code
    kind = _KIND_OF_CODE[tc]  # one look-up per event; QUERY events by their statement below
    q = np.flatnonzero(tc == EventType.QUERY_EVENT)
    if len(q):
        start, end = query_bounds(src, index, q, lenient=True)
        n = end - start
        k = np.arange(_PEEK)
        peek = np.where(k < n[:, None], np.take(src.buf, np.minimum(start[:, None] + k, len(src.buf) - 1)), 0)
        qk = np.full(len(q), OTHER, np.int8)
        done = np.zeros(len(q), bool)
        for text, exact, what in _STATEMENTS:
            pat = np.frombuffer(text, np.uint8)
            hit = ~done & (peek[:, : len(pat)] == pat).all(axis=1) & ((n == len(pat)) if exact else (n >= len(pat)))
            qk[hit] = what
            done |= hit
        kind[q] = qk
    return kind


@dataclass
class _Open:
    """A transaction still open at the end of a segment, carried into the next one."""

    start_pos: int
    gtid: str | None
    begun: bool
    savepoints: list[str] = field(default_factory=list)
    query: str | None = None


@dataclass
class _Ahead:
    """How an open transaction ends, found by walking past the segment."""

    outcome: int
    xid: int | None
    ops: list[tuple[int, int, str]]  #: SAVEPOINT / ROLLBACK_TO statements after the segment: (file offset, kind, name)


@dataclass
class TxnContext:
    """The transactions of one segment.

    Per event (arrays of the segment's length): ``txn`` (slot, -1 outside any transaction),
    ``undone`` (a change undone by ROLLBACK TO SAVEPOINT), ``query`` (index into ``queries``,
    -1 none). Per slot: ``start_pos`` (file offset of the event that opened it), ``gtid``,
    ``xid`` (+ ``has_xid``), ``outcome`` (code into :data:`OUTCOMES`).
    """

    txn: np.ndarray
    undone: np.ndarray
    query: np.ndarray
    start_pos: np.ndarray
    gtid: pa.Array
    xid: np.ndarray
    has_xid: np.ndarray
    outcome: np.ndarray
    queries: pa.Array | None

    def of_events(self, ev: np.ndarray | slice) -> TxnContext:
        """The context of the events at positions ``ev`` (or a slice) alone: their per-event arrays
        (copies), and only the slots and queries they use, renumbered in order (a run kept for
        later holds no more than its own transactions)."""
        own = isinstance(ev, slice)  # (a slice's views copied: the context holds no larger one)
        txn, query, undone = self.txn[ev], self.query[ev], self.undone[ev]
        if own:
            query, undone = query.copy(), undone.copy()
        slots, txn = _used(txn, len(self.start_pos))
        texts = None
        if self.queries is not None:
            used_q, query = _used(query, len(self.queries))
            texts = self.queries.take(numbers(used_q, pa.int64()))
        return TxnContext(txn, undone, query, self.start_pos[slots], self.gtid.take(numbers(slots, pa.int64())),
                          self.xid[slots], self.has_xid[slots], self.outcome[slots], texts)

    @staticmethod
    def concat(parts: list[TxnContext], files: list[int] | None = None) -> TxnContext:
        """The contexts of runs, in log order, as one; a transaction that two of them hold (it
        spans their segments: the same start in the same file) is one slot, as in one
        segment. ``files``: the file of each part (default: all of one file)."""
        if len(parts) == 1:
            return parts[0]
        start_pos = np.concatenate([p.start_pos for p in parts])
        first = np.ones(len(start_pos), bool)
        np.not_equal(start_pos[1:], start_pos[:-1], out=first[1:])
        if files is not None:  # transactions do not cross files: equal starts in two files are two
            file_of = np.repeat(np.asarray(files, np.int64), [len(p.start_pos) for p in parts])
            first[1:] |= file_of[1:] != file_of[:-1]
        slot_of = (np.cumsum(first) - 1).astype(np.int32)  # merged slot -> slot
        txn, query, base, qbase = [], [], 0, 0
        for p in parts:
            t = np.full(len(p.txn), -1, np.int32)
            inside = p.txn >= 0  # the others are outside any transaction
            t[inside] = slot_of[p.txn[inside] + base]
            txn.append(t)
            query.append(np.where(p.query >= 0, p.query + qbase, -1).astype(np.int32))
            base += len(p.start_pos)
            qbase += len(p.queries) if p.queries is not None else 0
        queries = None if parts[0].queries is None else pa.concat_arrays([p.queries for p in parts])
        gtid = pa.concat_arrays([p.gtid for p in parts])
        xid, has_xid = np.concatenate([p.xid for p in parts]), np.concatenate([p.has_xid for p in parts])
        outcome = np.concatenate([p.outcome for p in parts])
        if not first.all():  # (usually all: no transaction spans two parts; then no copy of the GTID texts again)
            kept = np.flatnonzero(first)
            start_pos, gtid, xid, has_xid, outcome = (
                start_pos[kept], gtid.take(numbers(kept, pa.int64())), xid[kept], has_xid[kept], outcome[kept])
        return TxnContext(np.concatenate(txn), np.concatenate([p.undone for p in parts]), np.concatenate(query),
                          start_pos, gtid, xid, has_xid, outcome, queries)


def _used(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the codes of ``range(n)`` that ``codes`` uses, in order; ``codes`` as positions among
    them, -1 kept). Codes in log order do not decrease (a run's events: transactions do not
    interleave): then by their changes, in the run's length; else by marks over ``range(n)``."""
    inside = codes >= 0
    vals = codes[inside]
    if bool((vals[1:] >= vals[:-1]).all()):
        new = np.empty(len(vals), bool)
        new[:1] = True
        np.not_equal(vals[1:], vals[:-1], out=new[1:])
        out = np.full(len(codes), -1, np.int32)
        out[inside] = np.cumsum(new, dtype=np.int32) - 1
        return vals[new].astype(np.int64), out
    mark = np.zeros(n + 1, bool)  # the last one for -1
    mark[codes] = True
    mark[n] = False
    renumber = np.cumsum(mark, dtype=np.int32) - 1
    renumber[n] = -1
    return np.flatnonzero(mark), renumber[codes]


def _savepoint_names(src: EventSource, index: EventIndex, kind: np.ndarray, sp: np.ndarray) -> dict[int, str]:
    """{event number: savepoint name} of the SAVEPOINT / ROLLBACK TO statements ``index[sp]``."""
    if not len(sp):
        return {}
    start, end = query_bounds(src, index, sp)
    mem = src.buf.data
    return {i: _savepoint_name(bytes(mem[a:b]), 10 if kind[i] == SAVEPOINT else 12)
            for i, a, b in zip(sp.tolist(), start.tolist(), end.tolist())}


def _savepoint_name(raw: bytes, prefix_len: int) -> str:
    name = raw[prefix_len:].strip()
    if name.upper().startswith(b"SAVEPOINT "):
        name = name[10:].strip()
    if len(name) >= 2 and name[:1] == b"`" and name[-1:] == b"`":
        name = name[1:-1].replace(b"``", b"`")
    return name.decode("utf-8", "replace")


class TransactionTracker:
    """Follows the transactions of one file, segment after segment, in order."""

    def __init__(self, file: BinlogFile, *, queries: bool = False):
        self.file = file
        self.queries = queries
        self.open: _Open | None = None
        self.after_gtid = False  #: the last event of the previous segment was a GTID event
        self._ahead: dict[int, _Ahead] = {}

    def assign(self, src: EventSource, index: EventIndex, seg_end: int,
               file_starts: np.ndarray | None = None) -> TxnContext:
        """Classify the events of a segment (``src``/``index``, unpacked) ending at file offset
        ``seg_end``; ``file_starts``: the first event of each file but the first, when the
        segment is whole files joined (transactions do not cross files: one open at the end
        of a file is incomplete, as in a walk of the files one by one)."""
        E = len(index)
        kind = classify(src, index)
        if file_starts is not None:
            kind[file_starts] = FILE_START
        carry = self.open
        room = E + 1
        txn = np.empty(E, np.int32)
        slot_first, slot_end = np.empty(room, np.int64), np.empty(room, np.int64)
        xid, has_xid = np.zeros(room, np.uint64), np.empty(room, np.bool_)
        seq, domain = np.empty(room, np.uint64), np.empty(room, np.uint32)
        n_slots, begun, status, bad = follow_transactions(
            src.buf, kind, index.type_code, index.offset, index.body_end, index.post_header_len,
            carry is not None, carry is not None and carry.begun, self.after_gtid, txn, slot_first, slot_end, xid, has_xid,
            True, seq, domain)
        if status != FOLLOW_OK:
            _malformed(src, index, status, bad)
        slot_first, slot_end, xid, has_xid = slot_first[:n_slots], slot_end[:n_slots], xid[:n_slots], has_xid[:n_slots]
        base = 1 if carry is not None else 0
        starts = slot_first[base:]
        ended = slot_end >= 0
        outcome = np.full(n_slots, INCOMPLETE, np.int8)
        outcome[ended] = _OUTCOME_OF_KIND[kind[slot_end[ended]]]
        open_slot = n_slots - 1 if n_slots and not ended[-1] else None
        changes = _CHANGE_CODES[index.type_code]

        start_pos = np.concatenate([[carry.start_pos] if carry is not None else [], index.pos[starts]]).astype(np.int64)
        gtid = gtid_texts(src, index, starts, mariadb=(seq[base:n_slots], domain[base:n_slots]))  # null: BEGIN starts
        if carry is not None:
            gtid = pa.concat_arrays([strings([carry.gtid]), gtid])

        ahead = None
        if open_slot is not None and (changes & (txn == open_slot)).any():
            ahead = self._look_ahead(int(start_pos[open_slot]), seg_end)
            outcome[open_slot] = ahead.outcome
            if ahead.xid is not None:
                xid[open_slot], has_xid[open_slot] = ahead.xid, True

        undone = np.zeros(E, bool)
        carried_savepoints = self._savepoints(src, index, kind, txn, carry, open_slot, ahead, undone)

        query = np.full(E, -1, np.int32)
        queries = None
        if self.queries:
            query, queries, last_query = self._queries(src, index, kind, txn, starts, carry)
        # carry the open transaction into the next segment
        if open_slot is not None:
            self.open = _Open(
                start_pos=int(start_pos[open_slot]), gtid=gtid[open_slot].as_py(),
                begun=bool(begun),
                savepoints=carried_savepoints, query=last_query if self.queries else None,
            )
        else:
            self.open = None
        self.after_gtid = bool(E and kind[-1] == GTID) or (not E and self.after_gtid)
        return TxnContext(txn, undone, query, start_pos, gtid, xid, has_xid, outcome, queries)

    def _savepoints(self, src: EventSource, index: EventIndex, kind: np.ndarray, txn: np.ndarray,
                    carry: _Open | None, open_slot: int | None, ahead: _Ahead | None, undone: np.ndarray) -> list[str]:
        """Mark changes undone by ROLLBACK TO; returns the open transaction's savepoints."""
        sp = np.flatnonzero(((kind == SAVEPOINT) | (kind == ROLLBACK_TO)) & (txn >= 0))
        slots = set(txn[sp].tolist())
        if carry is not None and carry.savepoints:
            slots.add(0)
        if ahead is not None and ahead.ops:
            slots.add(open_slot)
        carried: list[str] = []
        if not slots:
            return carried
        texts = _savepoint_names(src, index, kind, sp)
        E = len(index)
        for slot in sorted(slots):
            ops = [(-1, SAVEPOINT, n) for n in (carry.savepoints if slot == 0 and carry is not None else [])]
            ops += [(i, int(kind[i]), texts[i]) for i in sp.tolist() if txn[i] == slot]
            n_here = len(ops)
            if slot == open_slot and ahead is not None:
                ops += [(E, k, n) for _, k, n in ahead.ops]
            stack: list[tuple[str, int]] = []
            for j, (i, k, name) in enumerate(ops):
                if k == SAVEPOINT:
                    stack = [s for s in stack if s[0] != name] + [(name, i)]
                else:
                    hits = [m for m, s in enumerate(stack) if s[0] == name]
                    if hits:
                        m = hits[-1]
                        lo = stack[m][1]
                        undone[max(lo + 1, 0) : min(i, E)] |= txn[max(lo + 1, 0) : min(i, E)] == slot
                        stack = stack[: m + 1]
                if j == n_here - 1 and slot == open_slot:
                    carried = [s[0] for s in stack]
            if slot == open_slot and n_here == 0:
                carried = []
        return carried

    def _queries(self, src: EventSource, index: EventIndex, kind: np.ndarray, txn: np.ndarray, starts: np.ndarray,
                 carry: _Open | None) -> tuple[np.ndarray, pa.Array, str | None]:
        """The statement (ROWS_QUERY / ANNOTATE_ROWS) each event's changes came from
        (``starts``: the events that start a transaction)."""
        E = len(index)
        idx = np.arange(E)
        inside = txn >= 0
        last_start = np.full(E, -1, np.int64)
        last_start[starts] = starts
        last_start = np.maximum.accumulate(last_start) if E else last_start
        ann = np.flatnonzero(kind == ANNOTATE)
        texts: list[str | None] = [carry.query if carry is not None else None]
        texts += [annotated_statement(src, index, i).decode("utf-8", "replace") for i in ann.tolist()]
        slot_of = np.full(E, -1, np.int64)
        slot_of[ann] = 1 + np.arange(len(ann))
        last_ann = np.maximum.accumulate(np.where(kind == ANNOTATE, idx, -1)) if E else idx
        la = np.maximum(last_ann, 0)
        in_txn = last_ann > last_start
        query = np.where(last_ann >= 0, slot_of[la], -1)
        query = np.where(in_txn & (last_ann >= 0), query, np.where((last_start < 0) & inside, 0, -1))
        query = np.where(query == 0, 0 if texts[0] is not None else -1, query)
        last = None
        if E and inside[-1]:
            q = int(query[-1])
            last = texts[q] if q >= 0 else None
        return query.astype(np.int32), strings(texts), last

    def _look_ahead(self, start_pos: int, seg_end: int) -> _Ahead:
        """How the transaction opened at ``start_pos`` ends, walking the file after ``seg_end``.

        Only called for a transaction with changes in the segment, hence one opened by BEGIN
        (or a MariaDB GTID): statements inside it do not end it.
        """
        hit = self._ahead.get(start_pos)
        if hit is not None:  # walked from an earlier segment's end: the ops after this one's
            return _Ahead(hit.outcome, hit.xid, [op for op in hit.ops if op[0] >= seg_end])
        f = self.file
        ops: list[tuple[int, int, str]] = []
        result = _Ahead(INCOMPLETE, None, ops)
        for seg in f.segments(1 << 20, start=seg_end, release=False):
            unpacked = unpack_segment(seg.src, seg.index)
            src, index = unpacked if unpacked is not None else (seg.src, seg.index)
            kind = classify(src, index)
            stop = np.flatnonzero((kind == GTID) | (kind == BEGIN) | _ENDS[kind])
            first = int(stop[0]) if len(stop) else len(index)
            sp = np.flatnonzero((kind == SAVEPOINT) | (kind == ROLLBACK_TO))
            sp = sp[sp < first]
            ops += [(int(index.pos[i]), int(kind[i]), name) for i, name in _savepoint_names(src, index, kind, sp).items()]
            if len(stop):
                k = int(kind[first])
                if k in _OUTCOME_OF_END:  # else a new transaction starts: this one never ended
                    result.outcome = _OUTCOME_OF_END[k]
                if k == XID:
                    try:
                        result.xid = parse_xid(src, int(index.offset[first]), int(index.body_end[first]),
                                               int(index.post_header_len[first]))
                    except MalformedEventError:
                        pass  # a short XID event: the outcome is known, not the xid
                break
        self._ahead = {start_pos: result}
        return result


# -- where transactions start and end, from the headers alone -----------------------------------------
@dataclass
class FileScan:
    """What a walk of a file's headers from ``start`` (outside any transaction) found."""

    start: int  #: where the walk started
    walked: int  #: where it ended: the end of the file, or the offset of an event not all there
    open_start: int | None  #: the start of the last transaction when its end is not before ``walked``
    starts: np.ndarray  #: int64 (n,): offsets of the transaction starts in [start, walked)
    stamps: np.ndarray | None  #: uint32 (n,): the header timestamp of each start event (None: from an archive index)
    size: int | None = None  #: the file's size when it was walked

    @property
    def complete(self) -> int:
        """The end of the last complete transaction (and of the events after it): where a
        reader of a file still being written stops."""
        return self.walked if self.open_start is None else self.open_start


class StartScan:
    """The transaction starts of a file, segment by segment in order (each segment's events
    unpacked): what :func:`scan_transactions` and the archive index's walk
    (:mod:`vecbinlog.log.summary`) both follow, by the one rule (:func:`follow_transactions`)."""

    def __init__(self, start: int = MAGIC_LEN) -> None:
        self.start = self.walked = start
        self.open_start: int | None = None
        self.begun = False  # the open transaction was opened by BEGIN (or a MariaDB GTID that stands for one)
        self.prev_gtid = False  # the last event walked is a GTID event (a BEGIN after it starts nothing)
        self._starts: list[np.ndarray] = []
        self._stamps: list[np.ndarray] = []

    def feed(self, src: EventSource, index: EventIndex, end: int) -> np.ndarray:
        """Follow the events of one segment (unpacked) that ends at file offset ``end``;
        returns the positions in ``index`` of the events that start a transaction."""
        kind = classify(src, index)
        E = len(index)
        carried = self.open_start is not None
        slot_first, slot_end = np.empty(E + 1, np.int64), np.empty(E + 1, np.int64)
        n_slots, begun, status, bad = follow_transactions(
            src.buf, kind, index.type_code, index.offset, index.body_end, index.post_header_len, carried, self.begun,
            self.prev_gtid, np.empty(E, np.int32), slot_first, slot_end, np.zeros(E + 1, np.uint64),
            np.empty(E + 1, np.bool_), False, np.empty(E + 1, np.uint64), np.empty(E + 1, np.uint32))
        if status != FOLLOW_OK:
            _malformed(src, index, status, bad)
        here = slot_first[1 if carried else 0 : n_slots]
        self._starts.append(index.pos[here])
        self._stamps.append(index.timestamp[here])
        if n_slots:
            last = n_slots - 1
            if slot_end[last] >= 0:
                self.open_start, self.begun = None, False
            else:
                if slot_first[last] >= 0:
                    self.open_start = int(index.pos[slot_first[last]])
                self.begun = bool(begun)
        if E:
            self.prev_gtid = bool(kind[-1] == GTID)
        self.walked = end
        return here

    def result(self, size: int | None) -> FileScan:
        """What the walk found (``size``: the file's size when it was walked)."""
        found = np.concatenate(self._starts) if self._starts else np.zeros(0, np.int64)
        stamps = np.concatenate(self._stamps) if self._stamps else np.zeros(0, np.uint32)
        return FileScan(self.start, self.walked, self.open_start, found.astype(np.int64), stamps.astype(np.uint32), size)


def scan_transactions(f: BinlogFile, start: int = MAGIC_LEN, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                      stop: int | None = None) -> FileScan:
    """Walk the headers of ``f`` from ``start`` (an offset outside any transaction) to its end
    (or to the first event boundary at or after ``stop``).

    A last event cut in the middle (a file still being written) ends the walk there, with no
    warning: that is what a growing file looks like; so does a file found shorter than it was
    when opened (the newest file, cut back by a server recovering from a crash: what is
    complete is what was walked before it). Only headers are read, plus the first
    bytes of QUERY events (``BEGIN``, ``COMMIT``...) and the flags of MariaDB GTID events;
    compressed events are unpacked (their BEGIN/XID count).
    """
    scan = StartScan(start)
    with warnings.catch_warnings(), contextlib.suppress(FileChangedError):
        warnings.simplefilter("ignore", TruncatedWarning)
        for seg in f.segments(segment_bytes, start=start, stop=stop):
            unpacked = unpack_segment(seg.src, seg.index)
            src, index = unpacked if unpacked is not None else (seg.src, seg.index)
            scan.feed(src, index, seg.end)
    return scan.result(f.size)
