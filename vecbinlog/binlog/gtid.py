"""Global transaction identifiers: the GTID events, as text, for many events at once.

Layouts (libs/mysql/binlog/event/control_events.h; MariaDB sql/log_event.h)::

    GTID_LOG_EVENT (33), ANONYMOUS_GTID_LOG_EVENT (34)
        body  flags uint8, sid 16 bytes (a UUID), gno int64, ... (logical clock, timestamps)
        text  "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"; anonymous ones have none
    GTID_TAGGED_LOG_EVENT (42, MySQL 8.3+)   MySQL serialization library format:
        version uint8, payload_size varlen, last_non_ignorable_field_id varlen, then
        fields as (id varlen, value): 0 flags, 1 sid (16 varlen bytes), 2 gno (zig-zag
        varlen), 3 tag (varlen length + bytes), 4.. logical clock, timestamps, ...
        text  "uuid:tag:gno"
    varlen (libs/mysql/serialization/variable_length_integers.h)
        the number n of trailing 1 bits of the first byte says n more bytes follow;
        value = the n + 1 bytes little-endian >> (n + 1); n = 8: the next 8 bytes
    MariaDB GTID_EVENT (162)   (the FDE counts these fields as its post-header)
        body  seq_no uint64, domain_id uint32, flags2 uint8 (1 = FL_STANDALONE: no
              BEGIN/COMMIT around it, 64/128 XA), [commit_id uint64 if flags2 &
              FL_GROUP_COMMIT_ID], [formatID int32, gtrid_len uint8, bqual_len uint8, data
              if flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA)]; server_id is the header's
        text  "domain-server-seq", e.g. "0-1-27"
    PREVIOUS_GTIDS_LOG_EVENT (35): the GTID set before this file
        n_sids uint64 (top byte 1 = tagged format: n_sids in bytes 1..6), then per sid:
        uuid 16 bytes, [tag: varlen length + bytes], n_intervals uint64, intervals
        (start, end exclusive) as 2 x int64
    MariaDB GTID_LIST_EVENT (163): the binlog state before this file
        count uint32 (low 28 bits), then count x (domain_id uint32, server_id uint32,
        seq_no uint64)
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import numbers, strings, to_numpy, valid_mask
from ..constants import EventType
from ..digits import joined_texts
from ..errors import MalformedEventError
from ..groups import group, group_ranges
from .headers import EventIndex, read_uint
from .eventsource import EventSource, event_path
from .spec import COMMON_HEADER_LEN, Cursor

__all__ = ["GTID_EVENTS", "union_gtid_sets", "MariadbGtid", "Gtids", "gtid_texts", "read_gtids", "gtid_parts",
           "parse_mariadb_gtid", "previous_gtids", "GtidSummary", "GtidSet"]

GTID_EVENTS = frozenset({
    EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT, EventType.GTID_TAGGED_LOG_EVENT,
    EventType.GTID_EVENT,
})
# MariaDB Gtid_log_event flags2 (sql/log_event.h)
FL_STANDALONE = 1
FL_GROUP_COMMIT_ID = 2
FL_PREPARED_XA = 64
FL_COMPLETED_XA = 128

_MYSQL_GTID_BODY = 1 + 16 + 8
_MARIADB_GTID_BODY = 8 + 4 + 1


def _uuid_text(raw: bytes) -> str:
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _need(src: EventSource, index: EventIndex, sel: np.ndarray, size: int, name: str) -> None:
    short = index.offset[sel] + COMMON_HEADER_LEN + size > index.body_end[sel]
    if short.any():
        i = int(sel[np.flatnonzero(short)[0]])
        raise MalformedEventError(
            f"event is shorter than the {size} bytes of its GTID", path=event_path(src, i), offset=int(index.pos[i]),
            event_type=name,
        )


@dataclass(frozen=True)
class Gtids:
    """The GTIDs of some GTID events (:func:`read_gtids`): the text of each, and its source and
    number as :func:`gtid_parts` splits a text."""

    texts: pa.Array  #: string; null for an anonymous GTID
    sources: list[str]  #: MySQL uuid (or uuid:tag), MariaDB domain-server; lower case
    source: np.ndarray  #: int32 per GTID: a position in ``sources``; -1 for an anonymous one
    number: np.ndarray  #: uint64 per GTID (0 for an anonymous one)


def gtid_texts(src: EventSource, index: EventIndex, sel: np.ndarray,
               mariadb: tuple[np.ndarray, np.ndarray] | None = None) -> pa.Array:
    """The GTID text of each event ``index[sel]`` (GTID events); null for anonymous ones
    (:func:`read_gtids`)."""
    return read_gtids(src, index, sel, mariadb).texts


def read_gtids(src: EventSource, index: EventIndex, sel: np.ndarray,
               mariadb: tuple[np.ndarray, np.ndarray] | None = None) -> Gtids:
    """The GTIDs of the events ``index[sel]`` (GTID events; anonymous ones have none).

    Texts are built per event type by a compiled formatter (:func:`~vecbinlog.digits.joined_texts`; one
    Python string per distinct server UUID, or MariaDB ``domain-server-`` prefix), then put
    back in the order of ``sel``. ``mariadb``: the ``(seq_no, domain_id)`` of each event of
    ``sel`` already read and checked (by the transactions' walk; used for MariaDB GTID events).
    """
    tc = index.type_code[sel]
    buf = src.buf
    positions: list[np.ndarray] = []
    texts: list[pa.Array] = []
    sources: list[str] = []
    codes: list[np.ndarray] = []
    numbers_of: list[np.ndarray] = []

    mysql = np.flatnonzero(tc == EventType.GTID_LOG_EVENT)
    if len(mysql):
        _need(src, index, sel[mysql], _MYSQL_GTID_BODY, "GTID_LOG_EVENT")
        at = index.offset[sel[mysql]] + (COMMON_HEADER_LEN + 1)
        first, code = group_ranges(buf, at, at + 16)  # one text per distinct server UUID
        uuids = [_uuid_text(bytes(buf[p : p + 16])) for p in at[first].tolist()]
        gno = read_uint(buf, at + 16, 8).view(np.int64)
        positions.append(mysql)
        texts.append(joined_texts([gno], prefix=[u.encode() + b":" for u in uuids], codes=code))
        codes.append(code.astype(np.int32) + len(sources))
        sources += uuids
        numbers_of.append(gno.view(np.uint64))

    maria = np.flatnonzero(tc == EventType.GTID_EVENT)
    if len(maria):
        if mariadb is None:
            _need(src, index, sel[maria], _MARIADB_GTID_BODY, "GTID_EVENT")
            body = index.offset[sel[maria]] + COMMON_HEADER_LEN
            seq, domain = read_uint(buf, body, 8), read_uint(buf, body + 8, 4).astype(np.uint32)
        else:
            seq, domain = mariadb[0][maria], mariadb[1][maria]
        server = index.server_id[sel[maria]].astype(np.uint64)
        # one "domain-server-" prefix per distinct pair (a server writes one or a few)
        first, code = group((domain.astype(np.uint64) << np.uint64(32)) | server)
        pairs = [f"{d}-{s}" for d, s in zip(domain[first].tolist(), server[first].tolist())]
        positions.append(maria)
        texts.append(joined_texts([seq], prefix=[f"{p}-".encode() for p in pairs], codes=code))
        codes.append(code.astype(np.int32) + len(sources))
        sources += pairs
        numbers_of.append(np.asarray(seq, np.uint64))

    tagged = np.flatnonzero(tc == EventType.GTID_TAGGED_LOG_EVENT)
    if len(tagged):  # MySQL 8.3+ only for tagged transactions: one Python parse each
        positions.append(tagged)
        texts.append(strings([
            _tagged_text(src, int(index.offset[i]) + COMMON_HEADER_LEN, int(index.body_end[i]), int(index.pos[i]))
            for i in sel[tagged].tolist()
        ]))
        names, code, number = gtid_parts(texts[-1])
        codes.append(np.where(code >= 0, code + len(sources), -1).astype(np.int32))
        sources += names
        numbers_of.append(number)

    if len(positions) == 1 and len(positions[0]) == len(sel):  # all of one kind: already in order
        return Gtids(texts[0], sources, codes[0], numbers_of[0])
    known = np.zeros(len(sel), bool)
    for where in positions:
        known[where] = True
    rest = np.flatnonzero(~known)  # anonymous GTIDs and the rest: null
    positions.append(rest)
    texts.append(pa.nulls(len(rest), pa.string()))
    codes.append(np.full(len(rest), -1, np.int32))
    numbers_of.append(np.zeros(len(rest), np.uint64))
    where = np.concatenate(positions)
    order = np.empty(len(sel), np.int64)
    order[where] = np.arange(len(where))
    return Gtids(pa.concat_arrays(texts).take(numbers(order)), sources, np.concatenate(codes)[order],
                 np.concatenate(numbers_of)[order])


#: a GTID text: its source (MySQL ``uuid`` or ``uuid:tag``; MariaDB ``domain-server``) and number
_GTID_PARTS = r"^(?P<source>.+)[:-](?P<seq>\d{1,20})$"


def gtid_parts(texts: pa.Array) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The source and number of each GTID text (as :func:`gtid_texts` and :class:`GtidSet` write
    them): (the distinct sources, lower case, in order of first use; each text's source as a
    position in them, -1 for a null or a text that is no GTID; its number, uint64, 0 there)."""
    parts = pc.extract_regex(texts, _GTID_PARTS)
    ok = valid_mask(parts)
    source, seq = pc.struct_field(parts, "source"), pc.struct_field(parts, "seq")
    coded = pc.dictionary_encode(pc.utf8_lower(source.filter(numbers(ok))))
    sources = coded.dictionary.to_pylist()
    codes = np.full(len(texts), -1, np.int32)
    codes[ok] = to_numpy(coded.indices).astype(np.int32)
    numbers_of = np.zeros(len(texts), np.uint64)
    numbers_of[ok] = to_numpy(pc.cast(seq.filter(numbers(ok)), pa.uint64()))
    return sources, codes, numbers_of


@dataclass(frozen=True)
class MariadbGtid:
    """A MariaDB GTID_EVENT, one at a time (:func:`gtid_texts` reads many at once)."""

    seq_no: int
    domain_id: int
    flags2: int
    commit_id: int | None  #: with FL_GROUP_COMMIT_ID
    #: (formatID, gtrid, bqual) of an XA transaction (FL_PREPARED_XA, FL_COMPLETED_XA);
    #: None when there is none or it runs past the end of the event
    xa: tuple[int, bytes, bytes] | None


def parse_mariadb_gtid(src: EventSource, offset: int, body_end: int) -> MariadbGtid:
    """Decode the MariaDB GTID_EVENT at ``offset`` of ``src.buf``."""
    cur = Cursor(src.buf, offset + COMMON_HEADER_LEN, body_end, path=src.path, src=src, event_type="GTID_EVENT")
    seq = cur.uint(8, "seq_no")
    domain = cur.u32("domain_id")
    flags2 = cur.u8("flags2")
    commit_id = cur.uint(8, "commit_id") if flags2 & FL_GROUP_COMMIT_ID else None
    xa = None
    if flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA):
        try:
            format_id = struct.unpack("<i", cur.take(4, "xid format id"))[0]
            gtrid_len, bqual_len = cur.u8("gtrid length"), cur.u8("bqual length")
            xa = (format_id, cur.take(gtrid_len, "gtrid"), cur.take(bqual_len, "bqual"))
        except MalformedEventError:
            pass  # what comes before it is still read (the reader needs only flags2)
    return MariadbGtid(seq, domain, flags2, commit_id, xa)


def _varlen(cur: Cursor, what: str) -> int:
    first = cur.u8(what)
    n = 0
    while n < 8 and first >> n & 1:
        n += 1
    if n == 8:
        return cur.uint(8, what)
    rest = cur.uint(n, what) if n else 0
    return (first | rest << 8) >> (n + 1)


def _tagged_text(src: EventSource, start: int, end: int, pos: int) -> str:
    """``uuid:tag:gno`` (or ``uuid:gno`` when the tag is empty) of a GTID_TAGGED_LOG_EVENT."""
    cur = Cursor(src.buf, start, end, path=src.path, src=src, event_type="GTID_TAGGED_LOG_EVENT")
    cur.u8("serialization version")
    _varlen(cur, "payload size")
    _varlen(cur, "last non-ignorable field id")
    sid = gno = None
    tag = ""
    while cur.remaining() and (sid is None or gno is None or not tag):
        field = _varlen(cur, "field id")
        if field == 0:
            _varlen(cur, "flags")
        elif field == 1:
            sid = bytes(_varlen(cur, "sid byte") & 0xFF for _ in range(16))
        elif field == 2:
            z = _varlen(cur, "gno")
            gno = (z >> 1) ^ -(z & 1)
        elif field == 3:
            tag = cur.take(_varlen(cur, "tag length"), "tag").decode("ascii", "replace")
        else:
            break  # later fields (logical clock, timestamps...) are not needed
    if sid is None or gno is None:
        raise MalformedEventError("tagged GTID without a sid or gno field", path=src.path, offset=pos,
                                  event_type="GTID_TAGGED_LOG_EVENT")
    return f"{_uuid_text(sid)}:{tag}:{gno}" if tag else f"{_uuid_text(sid)}:{gno}"


def previous_gtids(src: EventSource, offset: int, end: int, type_code: int) -> str:
    """The GTID set of a PREVIOUS_GTIDS (MySQL) or GTID_LIST (MariaDB) event, as the server prints it."""
    if type_code == EventType.GTID_LIST_EVENT:
        cur = Cursor(src.buf, offset + COMMON_HEADER_LEN, end, path=src.path, src=src, event_type="GTID_LIST_EVENT")
        count = cur.u32("count") & 0x0FFFFFFF
        cur.need(16 * count, "GTIDs")
        return ",".join(f"{cur.u32('domain')}-{cur.u32('server')}-{cur.uint(8, 'seq')}" for _ in range(count))
    cur = Cursor(src.buf, offset + COMMON_HEADER_LEN, end, path=src.path, src=src, event_type="PREVIOUS_GTIDS_LOG_EVENT")
    head = cur.uint(8, "n_sids")
    tagged = head >> 56 == 1
    n_sids = (head >> 8) & ((1 << 48) - 1) if tagged else head
    cur.need(16 * min(n_sids, 1 << 20), "sids")
    parts: dict[str, list[str]] = {}
    for _ in range(n_sids):
        uuid = _uuid_text(cur.take(16, "sid"))
        tag = cur.take(_varlen(cur, "tag length"), "tag").decode("ascii", "replace") if tagged else ""
        n = cur.uint(8, "n_intervals")
        cur.need(16 * n, "intervals")
        ivs = []
        for _ in range(n):
            a, b = cur.uint(8, "start"), cur.uint(8, "end")
            ivs.append(str(a) if b == a + 1 else f"{a}-{b - 1}")
        parts.setdefault(uuid, []).append(":".join(([tag] if tag else []) + ivs))
    return ",".join(f"{u}:{':'.join(p)}" for u, p in parts.items())


class GtidSummary:
    """The GTIDs of a file's transactions, summed up as the server would print the set.

    MySQL: ``uuid:1-5:7`` (tags as ``uuid:tag:1-3``); MariaDB: the last ``domain-server-seq``
    of each domain and server (the form of ``gtid_binlog_state``).
    """

    def __init__(self) -> None:
        self.count = 0
        self.first: str | None = None
        self.last: str | None = None
        self._texts: list[pa.Array] = []

    def add(self, texts: pa.Array) -> None:
        texts = texts.drop_null()
        if not len(texts):
            return
        self.count += len(texts)
        self.first = self.first or texts[0].as_py()
        self.last = texts[-1].as_py()
        self._texts.append(texts)

    def gtid_set(self) -> str | None:
        if not self._texts:
            return None
        texts = pa.concat_arrays(self._texts)
        mysql = pc.match_substring(texts, ":")  # uuid:gno; MariaDB's are domain-server-seq
        # (a file holds one kind; a damaged one may hold both: each is summed up on its own)
        parts = [_mariadb_set(texts.filter(pc.invert(mysql))), _mysql_set(texts.filter(mysql))]
        return ",".join(p for p in parts if p)


def _mariadb_set(texts: pa.Array) -> str:
    """The last sequence number of each domain and server, as ``domain-server-seq`` items."""
    if not len(texts):
        return ""
    parts = np.array(pc.split_pattern(texts, "-").flatten().to_pylist(), object).reshape(-1, 3)
    dom, srv, seq = (parts[:, j].astype(np.uint64) for j in range(3))
    order = np.lexsort((seq, srv, dom))
    dom, srv, seq = dom[order], srv[order], seq[order]
    last = np.ones(len(dom), bool)
    last[:-1] = (dom[1:] != dom[:-1]) | (srv[1:] != srv[:-1])
    return ",".join(f"{d}-{s}-{q}" for d, s, q in zip(dom[last].tolist(), srv[last].tolist(), seq[last].tolist()))


def _mysql_set(texts: pa.Array) -> str:
    """MySQL's notation: ``uuid:1-5:7`` per source (``uuid:tag:...`` for tagged GTIDs)."""
    if not len(texts):
        return ""
    parts = pc.split_pattern(texts, ":", max_splits=1, reverse=True).flatten()
    pairs = np.array(parts.to_pylist(), object).reshape(-1, 2)
    key, gno = pairs[:, 0], pairs[:, 1].astype(np.int64)
    out: dict[str, dict[str, str]] = {}
    for k in dict.fromkeys(key.tolist()):
        g = np.unique(gno[key == k])
        cuts = np.flatnonzero(np.diff(g) != 1) + 1
        ivs = [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in np.split(g, cuts)]
        uuid, _, tag = k.partition(":")
        out.setdefault(uuid, {})[tag] = ":".join(([tag] if tag else []) + ivs)
    # per source, as the server prints it: untagged intervals first, then the tags in order
    return ",".join(f"{u}:{':'.join(p[t] for t in sorted(p))}" for u, p in out.items())


class GtidSet:
    """A set of GTIDs to keep, in the servers' notation: MySQL ``uuid:1-5:7`` (several sets
    comma-separated, tags as ``uuid:tag:1-3``) or MariaDB ``domain-server-seq`` items, with
    ``domain-server-first..last`` for a range (MariaDB itself has no range notation).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.intervals: dict[str, list[tuple[int, int]]] = {}
        for item in (t.strip() for t in text.split(",")):
            if not item:
                continue
            maria = re.fullmatch(r"(\d+)-(\d+)-(\d+)(?:\.\.(\d+))?", item)
            if maria:
                lo = int(maria.group(3))
                hi = int(maria.group(4)) if maria.group(4) else lo
                self._add(f"{maria.group(1)}-{maria.group(2)}", lo, hi, item)
                continue
            parts = item.split(":")
            if len(parts) < 2 or not re.fullmatch(r"[0-9a-fA-F-]{36}", parts[0]):
                raise ValueError(f"gtids: {item!r} is neither uuid:intervals nor domain-server-seq")
            key = parts[0].lower()
            for part in parts[1:]:
                m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
                if m:
                    self._add(key, int(m.group(1)), int(m.group(2) or m.group(1)), item)
                elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,31}", part):
                    key = f"{parts[0].lower()}:{part.lower()}"  # the intervals after a tag are the tag's
                else:
                    raise ValueError(f"gtids: {part!r} in {item!r} is not an interval (N or N-M) or a tag")
        if not self.intervals:
            raise ValueError("gtids: an empty GTID set")

    def _add(self, key: str, lo: int, hi: int, item: str) -> None:
        if hi < lo:
            raise ValueError(f"gtids: {item!r}: the range ends before it starts")
        if hi >= 1 << 64:  # (GTID numbers are 64-bit: MySQL's gno signed, MariaDB's seq_no unsigned)
            raise ValueError(f"gtids: {item!r}: a GTID number is at most {(1 << 64) - 1}")
        self.intervals.setdefault(key, []).append((lo, hi))

    def intersection(self, other: GtidSet) -> GtidSet:
        """The GTIDs in both sets (it may hold none: then it keeps no transaction)."""
        both = GtidSet.__new__(GtidSet)
        both.intervals = {}
        for key in self.intervals.keys() & other.intervals.keys():
            ivs = [(max(a, c), min(b, d)) for a, b in self.intervals[key] for c, d in other.intervals[key]
                   if max(a, c) <= min(b, d)]
            if ivs:
                both.intervals[key] = sorted(ivs)
        maria = {k for k in both.intervals if re.fullmatch(r"\d+-\d+", k)}  # (MySQL's are uuid[:tag])
        both.text = ",".join([f"{k}-{a}..{b}" for k in sorted(maria) for a, b in both.intervals[k]]
                             + [f"{k}:{a}-{b}" for k in sorted(both.intervals.keys() - maria) for a, b in both.intervals[k]])
        return both

    def contains(self, texts: pa.Array) -> np.ndarray:
        """bool per GTID text (null: False)."""
        sources, codes, seq = gtid_parts(texts)
        return self.holds(sources, codes, seq)

    def holds(self, sources: list[str], codes: np.ndarray, seq: np.ndarray,
              last: np.ndarray | None = None) -> np.ndarray:
        """bool per GTID (:func:`gtid_parts`: ``sources``, the source of each as a position in
        them or -1, its number); with ``last``, per range of numbers ``seq`` to ``last``: whether
        one of them is in the set."""
        hit = np.zeros(len(codes), bool)
        last = seq if last is None else last
        for code, source in enumerate(sources):
            ivs = self.intervals.get(source)
            mine = np.flatnonzero(codes == code)
            if ivs is None or not len(mine):
                continue
            ivs = sorted(ivs)
            lo = np.array([a for a, _ in ivs], np.uint64)
            hi = np.maximum.accumulate(np.array([b for _, b in ivs], np.uint64))
            j = np.searchsorted(lo, last[mine], side="right") - 1  # the last interval starting at or before the range's end
            hit[mine] = (j >= 0) & (seq[mine] <= hi[np.maximum(j, 0)])
        return hit


def union_gtid_sets(a: str | None, b: str | None) -> str | None:
    """The set of two :meth:`GtidSummary.gtid_set` texts, the second of GTIDs after the first's
    (a file's parts, in order), as the summary of their GTIDs together prints it: MariaDB's
    ``domain-server-seq`` items first (the last of each domain and server), then MySQL's
    sources in order of appearance, their intervals joined."""
    if not a or not b:
        return a or b
    mariadb: dict[tuple[int, int], int] = {}
    mysql: dict[str, dict[str, list[list[int]]]] = {}  # uuid -> tag ("": none) -> intervals
    for text in (a, b):
        for item in text.split(","):
            if ":" not in item:
                dom, srv, seq = (int(x) for x in item.split("-"))
                mariadb[(dom, srv)] = max(seq, mariadb.get((dom, srv), seq))
                continue
            uuid, *rest = item.split(":")
            tags = mysql.setdefault(uuid, {})
            tag = ""
            for part in rest:
                if not part[:1].isdigit():
                    tag = part
                    continue
                first, _, last = part.partition("-")
                tags.setdefault(tag, []).append([int(first), int(last or first)])
    items = [f"{d}-{s}-{q}" for (d, s), q in sorted(mariadb.items())]
    for uuid, tags in mysql.items():
        parts = []
        for tag, ivs in sorted(tags.items()):
            joined: list[list[int]] = []
            for lo, hi in sorted(ivs):
                if joined and lo <= joined[-1][1] + 1:
                    joined[-1][1] = max(joined[-1][1], hi)
                else:
                    joined.append([lo, hi])
            parts.append(":".join(([tag] if tag else []) + [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in joined]))
        items.append(f"{uuid}:{':'.join(parts)}")
    return ",".join(items)
