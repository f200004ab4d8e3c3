"""The small events around the rows: what each holds, and what each says as ``SHOW BINLOG EVENTS`` puts it.

Layouts (control_events.h, statement_events.h, load_data_events.h; MariaDB sql/log_event.h)::

    QUERY_EVENT        post-header  thread_id uint32, exec_time uint32, db_len uint8,
                                    error_code uint16, status_vars_len uint16 (v4: 13 bytes)
                       body         status_vars, db name, 0x00, the statement (to the end)
    XID_EVENT          body         xid uint64
    ROTATE_EVENT       post-header  position uint64; body: the next file's name
    INTVAR_EVENT       body         type uint8 (1 LAST_INSERT_ID, 2 INSERT_ID), value int64
    RAND_EVENT         body         seed1 uint64, seed2 uint64
    USER_VAR_EVENT     body         name_len uint32, name, is_null uint8; unless null:
                                    type uint8 (0 STRING, 1 REAL, 2 INT, 4 DECIMAL),
                                    collation id uint32, value_len uint32, value,
                                    [flags uint8: 1 = UNSIGNED]
                                    (DECIMAL value: precision uint8, scale uint8, then the
                                    binary decimal as in a row image)
    XA_PREPARE_LOG_EVENT body       one_phase uint8, formatID int32, gtrid_len uint32,
                                    bqual_len uint32, gtrid + bqual bytes
    ROWS_QUERY_LOG_EVENT body       length uint8 (ignored), the statement (to the end)
    ANNOTATE_ROWS_EVENT  body       the statement (to the end)
    BINLOG_CHECKPOINT_EVENT         post-header: name_len uint32; body: a binlog file name
    TABLE_MAP_EVENT    see table_map.py; rows events see rows.py; GTID events gtid.py;
    TRANSACTION_PAYLOAD_EVENT and MariaDB's compressed events compression.py

This module is the one owner of these bodies: each is read here, one event at a time
(``parse_query``/``query_at``, ``parse_xid``, ``parse_rotate``/``rotate_at``,
``annotated_statement``) and, where many events are read at once, vectorised over an
:class:`~vecbinlog.binlog.headers.EventIndex` (``query_bounds``); transactions, DDL
tracking and the reader call these. (Unpacking a QUERY_COMPRESSED_EVENT, compression.py reads
the QUERY post-header's two lengths at the offsets layout.py names.)

``info`` texts follow the servers' ``pack_info()`` (MariaDB sql/log_event_server.cc, MySQL
sql/log_event.cc: Query_log_event::pack_info, Gtid_log_event::pack_info,
User_var_log_event::pack_info...) so that they can be compared with ``SHOW BINLOG EVENTS``
(tests/binlog/test_events.py compares every event of a MariaDB workload with the server's own
listing). Types without a ``pack_info`` of their own (STOP_EVENT) give ``""``, as the server
does; types this module does not describe (vendor types, LOAD DATA events, INCIDENT...) None.
"""

from __future__ import annotations

import decimal
import math
import struct
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..collations import collation_for
from ..constants import ROWS_EVENTS, EventType, LogEventFlag
from ..errors import MalformedEventError, MalformedEventWarning, warn
from .compression import MARIADB_COMPRESSED, mariadb_plain_event, payload_info
from .gtid import FL_PREPARED_XA, FL_STANDALONE, gtid_texts, parse_mariadb_gtid, previous_gtids
from .headers import EventIndex
from .eventsource import EventSource, event_path
from .spec import (
    COMMON_HEADER_LEN,
    QUERY_DB_LEN_AT,
    QUERY_POST_HEADER,
    QUERY_POST_HEADER_LEN,
    QUERY_STATUS_LEN_AT,
    ROTATE_POSITION,
    XID,
    Cursor,
)

__all__ = ["QueryEvent", "parse_query", "parse_xid", "parse_rotate", "query_at", "rotate_at", "query_bounds",
           "annotated_statement", "describe_events", "mysql_double_text"]

#: STMT_END_F in the flags of a rows event: the last rows event of a statement.
STMT_END_F = 0x1

#: Intvar_log_event::get_var_type_name()
INTVAR_NAMES = {1: "LAST_INSERT_ID", 2: "INSERT_ID"}

# User_var_log_event value types (Item_result) and flags
STRING_RESULT, REAL_RESULT, INT_RESULT, DECIMAL_RESULT = 0, 1, 2, 4
UNSIGNED_F = 1
#: the fewest value bytes of each type: a double, an int64, precision and scale
_VALUE_BYTES = {REAL_RESULT: 8, INT_RESULT: 8, DECIMAL_RESULT: 2}

#: bytes of a binary-decimal group of 0..9 digits (strings/decimal.c, dig2bytes)
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)

#: my_gcvt (strings/dtoa.c): the field width User_var_log_event::pack_info gives it
#: (MY_GCVT_MAX_FIELD_WIDTH = DBL_DIG + 4 + MAX(5, MAX_DECPT_FOR_F_FORMAT)), and how far the
#: decimal point may be from the digits before the 'e' format is used though 'f' would fit.
_GCVT_WIDTH = 34
_MAX_DECPT_FOR_F_FORMAT = 15

_DOUBLE = struct.Struct("<d")


@dataclass(frozen=True)
class QueryEvent:
    thread_id: int
    exec_time: int
    error_code: int
    database: str
    query: bytes  #: the statement, in the bytes the client sent (charset in the status vars)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def parse_query(src: EventSource, offset: int, body_end: int, post_header_len: int) -> QueryEvent:
    """Decode the QUERY_EVENT at ``offset`` of ``src.buf``."""
    cur = Cursor(src.buf, offset + COMMON_HEADER_LEN, body_end, path=src.path, src=src, event_type="QUERY_EVENT")
    head = cur.take(QUERY_POST_HEADER.size, "query post-header")
    thread_id, exec_time, db_len, error_code = QUERY_POST_HEADER.unpack(head)
    status_len = cur.u16("status_vars_len") if post_header_len >= QUERY_POST_HEADER_LEN else 0
    if post_header_len > QUERY_POST_HEADER_LEN:
        cur.take(post_header_len - QUERY_POST_HEADER_LEN, "query post-header")
    cur.take(status_len, "status variables")
    db = cur.take(db_len, "database name")
    cur.u8("database name terminator")
    return QueryEvent(thread_id, exec_time, error_code, _text(db), cur.take(cur.remaining(), "statement"))


def query_at(src: EventSource, index: EventIndex, i: int) -> QueryEvent:
    """Decode the QUERY_EVENT ``index[i]``."""
    return parse_query(src, int(index.offset[i]), int(index.body_end[i]), int(index.post_header_len[i]))


def query_bounds(src: EventSource, index: EventIndex, sel: np.ndarray,
                 lenient: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (in ``src.buf``) of the statement text of QUERY events ``index[sel]``:
    the vectorised :func:`parse_query`, for many events at once.

    A malformed event raises, or with ``lenient`` gets an empty text and a warning.
    """
    off = index.offset[sel]
    ph = index.post_header_len[sel]
    body = off + COMMON_HEADER_LEN
    end = index.body_end[sel]
    short = body + np.maximum(ph, QUERY_POST_HEADER_LEN) > end
    safe = np.where(short, off, body)
    db_len = np.take(src.buf, safe + QUERY_DB_LEN_AT).astype(np.int64)
    status = (np.take(src.buf, safe + QUERY_STATUS_LEN_AT).astype(np.int64)
              | np.take(src.buf, safe + QUERY_STATUS_LEN_AT + 1).astype(np.int64) << 8)
    start = body + ph + status + db_len + 1
    bad = short | (start > end)
    if bad.any():
        i = int(sel[np.flatnonzero(bad)[0]])
        why = "status variables and database name run past the end of the event"
        if not lenient:
            raise MalformedEventError(why, path=event_path(src, i), offset=int(index.pos[i]), event_type="QUERY_EVENT")
        warn(
            f"{event_path(src, i)}: offset {int(index.pos[i])}: QUERY_EVENT: {why}; "
            f"{int(bad.sum())} such event(s) taken as statements that neither start nor end a transaction",
            MalformedEventWarning,
        )
        start = np.where(bad, end, start)
    return start, end


def parse_xid(src: EventSource, offset: int, body_end: int, post_header_len: int) -> int:
    """The xid of the XID_EVENT at ``offset`` (after its post-header, empty in every server's
    format, as the server reads it)."""
    cur = Cursor(src.buf, offset + COMMON_HEADER_LEN + post_header_len, body_end, path=src.path, src=src,
                 event_type="XID_EVENT")
    return XID.unpack(cur.take(XID.size, "xid"))[0]


def annotated_statement(src: EventSource, index: EventIndex, i: int) -> bytes:
    """The statement of the ROWS_QUERY_LOG_EVENT or ANNOTATE_ROWS_EVENT ``index[i]`` (empty
    when the event is too short for one)."""
    start = int(index.offset[i]) + COMMON_HEADER_LEN + int(index.post_header_len[i])
    if index.type_code[i] == EventType.ROWS_QUERY_LOG_EVENT:
        start += 1  # a length byte, ignored by the server itself (it is wrong for long statements)
    return bytes(src.buf.data[start : max(int(index.body_end[i]), start)])


def parse_rotate(src: EventSource, offset: int, body_end: int, post_header_len: int) -> tuple[str, int]:
    """(next file name, position in it) of the ROTATE_EVENT at ``offset``."""
    cur = Cursor(src.buf, offset + COMMON_HEADER_LEN, body_end, path=src.path, src=src, event_type="ROTATE_EVENT")
    position = ROTATE_POSITION.unpack(cur.take(ROTATE_POSITION.size, "rotate position"))[0] if post_header_len >= 8 else 4
    return _text(cur.take(cur.remaining(), "next file name")), position


def rotate_at(src: EventSource, index: EventIndex, i: int) -> tuple[str, int]:
    """(next file name, position in it) of the ROTATE_EVENT ``index[i]``."""
    return parse_rotate(src, int(index.offset[i]), int(index.body_end[i]), int(index.post_header_len[i]))


# ---------------------------------------------------------------------------------------
# info texts
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Event:
    """One event to describe: where it is and what its format description says of it."""

    file: EventSource
    offset: int
    type_code: int
    fmt: int  #: which of the file's FORMAT_DESCRIPTION_EVENTs governs it
    body_end: int  #: end of the body (before the checksum)
    post_header_len: int
    table_id_width: int  #: 4 or 6 (TABLE_MAP and rows events)
    flags: int
    server_id: int
    flavor: str  #: "mysql" or "mariadb"
    gtid: str | None  #: the GTID text of a MySQL GTID event (gtid.py), None otherwise

    def body(self, what: str) -> Cursor:
        """A cursor at the body, after the post-header."""
        start = self.offset + COMMON_HEADER_LEN + self.post_header_len
        return Cursor(self.file.buf, start, self.body_end, path=self.file.path, src=self.file, event_type=what)


def describe_events(file: EventSource, index: EventIndex) -> list[str | None]:
    """The ``Info`` text of each event of ``index`` (None for the types not described)."""
    gtids = _mysql_gtid_texts(file, index)
    out: list[str | None] = []
    for i, (off, t, fmt, end, ph, id_len, flags, sid) in enumerate(zip(
        index.offset.tolist(), index.type_code.tolist(), index.fmt.tolist(), index.body_end.tolist(),
        index.post_header_len.tolist(), index.table_id_width.tolist(), index.flags.tolist(), index.server_id.tolist(),
    )):
        describe = _DESCRIBE.get(t)
        if describe is None:
            out.append(None)
            continue
        event = _Event(file, off, t, fmt, end, ph, id_len, flags, sid, file.formats[fmt].flavor, gtids.get(i))
        try:
            out.append(describe(event))
        except MalformedEventError:
            out.append(None)  # events() is for looking; reading the data reports the error
    return out


def _mysql_gtid_texts(file: EventSource, index: EventIndex) -> dict[int, str | None]:
    """{event number: GTID text} of the MySQL GTID events (gtid.py; None for anonymous ones);
    a malformed one is left out (its info is None), the others are still described."""
    sel = np.flatnonzero(np.isin(index.type_code, list(_MYSQL_GTIDS)))
    if not len(sel):
        return {}
    try:
        return dict(zip(sel.tolist(), gtid_texts(file, index, sel).to_pylist()))
    except MalformedEventError:
        out = {}
        for i in sel.tolist():
            try:
                out[i] = gtid_texts(file, index, np.array([i])).to_pylist()[0]
            except MalformedEventError:
                pass
        return out


def _query(e: _Event) -> str:
    q = parse_query(e.file, e.offset, e.body_end, e.post_header_len)
    use = ""
    if q.database and not e.flags & LogEventFlag.LOG_EVENT_SUPPRESS_USE_F:
        use = f"use {_quote(q.database)}; "
    return use + _text(q.query)


def _query_compressed(e: _Event) -> str:
    """Query_compressed_log_event is a Query_log_event whose statement is inflated first."""
    plain = mariadb_plain_event(e.file, e.offset, e.body_end, e.type_code, e.post_header_len)
    return _query(_Event(plain, 0, EventType.QUERY_EVENT, e.fmt, len(plain.buf), e.post_header_len, e.table_id_width,
                         e.flags, e.server_id, e.flavor, None))


def _xid(e: _Event) -> str:
    return f"COMMIT /* xid={parse_xid(e.file, e.offset, e.body_end, e.post_header_len)} */"


def _rotate(e: _Event) -> str:
    name, pos = parse_rotate(e.file, e.offset, e.body_end, e.post_header_len)
    return f"{name};pos={pos}"


def _format_description(e: _Event) -> str:
    f = e.file.formats[e.fmt]  # an FDE governs itself
    return f"Server ver: {f.server_version}, Binlog ver: {f.binlog_version}"


def _table_map_or_rows(e: _Event) -> str:
    cur = Cursor(e.file.buf, e.offset + COMMON_HEADER_LEN, e.body_end, path=e.file.path, src=e.file)
    table_id = cur.uint(e.table_id_width, "table_id")
    ev_flags = cur.u16("flags")
    if e.type_code != EventType.TABLE_MAP_EVENT:
        return f"table_id: {table_id}" + (" flags: STMT_END_F" if ev_flags & STMT_END_F else "")
    db = _text(cur.take(cur.u8("db name length"), "db name"))
    cur.u8("terminator")
    tbl = _text(cur.take(cur.u8("table name length"), "table name"))
    return f"table_id: {table_id} ({db}.{tbl})"


def _xid_text(format_id: int, gtrid: bytes, bqual: bytes) -> str:
    """An XA transaction id as the servers serialize it (XID::serialize, serialize_xid)."""
    return f"X'{gtrid.hex()}',X'{bqual.hex()}',{format_id}"


def _mariadb_gtid(e: _Event) -> str:
    g = parse_mariadb_gtid(e.file, e.offset, e.body_end)
    if g.flags2 & FL_STANDALONE:
        head = "GTID "
    elif g.flags2 & FL_PREPARED_XA:
        if g.xa is None:
            raise MalformedEventError("the XA transaction id runs past the end of the event")
        head = f"XA START {_xid_text(*g.xa)} GTID "
    else:
        head = "BEGIN GTID "
    return f"{head}{g.domain_id}-{e.server_id}-{g.seq_no}" + (f" cid={g.commit_id}" if g.commit_id is not None else "")


_MYSQL_GTIDS = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT, EventType.GTID_TAGGED_LOG_EVENT})


def _mysql_gtid(e: _Event) -> str | None:
    """Gtid_log_event::to_string: the statement a replica would run."""
    if e.gtid is None and e.type_code != EventType.ANONYMOUS_GTID_LOG_EVENT:
        return None  # malformed (see _mysql_gtid_texts)
    return f"SET @@SESSION.GTID_NEXT= '{e.gtid or 'ANONYMOUS'}'"


def _gtid_list(e: _Event) -> str:
    return "[" + previous_gtids(e.file, e.offset, e.body_end, e.type_code) + "]"


def _previous_gtids(e: _Event) -> str:
    """Gtid_set::to_string with the default format: one UUID's intervals per line."""
    return previous_gtids(e.file, e.offset, e.body_end, e.type_code).replace(",", ",\n")


def _binlog_checkpoint(e: _Event) -> str:
    cur = Cursor(e.file.buf, e.offset + COMMON_HEADER_LEN, e.body_end, path=e.file.path, src=e.file,
                 event_type="BINLOG_CHECKPOINT_EVENT")
    n = cur.u32("binlog file name length")
    return _text(e.body("BINLOG_CHECKPOINT_EVENT").take(n, "binlog file name"))


def _annotate_rows(e: _Event) -> str:
    cur = e.body("ANNOTATE_ROWS_EVENT")
    return _text(cur.take(cur.remaining(), "statement"))


def _rows_query(e: _Event) -> str:
    cur = e.body("ROWS_QUERY_LOG_EVENT")
    cur.u8("statement length")
    return "# " + _text(cur.take(cur.remaining(), "statement"))


def _intvar(e: _Event) -> str:
    cur = e.body("INTVAR_EVENT")
    kind = cur.u8("type")
    value = struct.unpack("<q", cur.take(8, "value"))[0]
    return f"{INTVAR_NAMES.get(kind, 'INVALID_INT')}={value}"


def _rand(e: _Event) -> str:
    cur = e.body("RAND_EVENT")
    return f"rand_seed1={cur.uint(8, 'seed1')},rand_seed2={cur.uint(8, 'seed2')}"


def _xa_prepare(e: _Event) -> str:
    cur = e.body("XA_PREPARE_LOG_EVENT")
    one_phase = cur.u8("one_phase")
    format_id = struct.unpack("<i", cur.take(4, "xid format id"))[0]
    gtrid_len, bqual_len = cur.u32("gtrid length"), cur.u32("bqual length")
    xid = _xid_text(format_id, cur.take(gtrid_len, "gtrid"), cur.take(bqual_len, "bqual"))
    return f"XA COMMIT {xid} ONE PHASE" if one_phase else f"XA PREPARE {xid}"


def _user_var(e: _Event) -> str | None:
    cur = e.body("USER_VAR_EVENT")
    name = _text(cur.take(cur.u32("name length"), "name"))
    head = f"@{_quote(name)}="
    if cur.u8("is_null"):
        return head + "NULL"
    kind = cur.u8("value type")
    collation = cur.u32("collation id")
    value = cur.take(cur.u32("value length"), "value")
    flags = cur.u8("flags") if cur.remaining() else 0
    if len(value) < _VALUE_BYTES.get(kind, 0):
        raise cur.error(f"a user variable of type {kind} needs {_VALUE_BYTES[kind]} value bytes, it has {len(value)}")
    if kind == REAL_RESULT:
        return head + mysql_double_text(_DOUBLE.unpack(value[:8])[0])
    if kind == INT_RESULT:
        return head + str(int.from_bytes(value[:8], "little", signed=not flags & UNSIGNED_F))
    if kind == DECIMAL_RESULT:
        return head + _binary_decimal_text(value[2:], value[0], value[1])
    if kind == STRING_RESULT:
        names = collation_for(collation, e.flavor)
        if names is None:
            return head + "???"
        coll, charset = names
        empty = '""' if e.flavor == "mariadb" else "''"  # str_to_hex of an empty value
        return f"{head}_{charset} {f'X{chr(39)}{value.hex().upper()}{chr(39)}' if value else empty} COLLATE {coll}"
    return None  # ROW_RESULT: never logged


def _binary_decimal_text(raw: bytes, precision: int, scale: int) -> str:
    """A DECIMAL(precision, scale) in MySQL's binary format as its exact text (bin2decimal):
    groups of 9 digits in 4 bytes big-endian, a partial group at each end, the sign in the
    top bit (all bytes inverted when negative)."""
    if not 0 <= scale <= precision <= 65:
        raise MalformedEventError(f"DECIMAL({precision},{scale}) is not a decimal type MySQL has")
    intg = precision - scale
    lead, full_int = intg % 9, intg // 9
    full_frac, trail = scale // 9, scale % 9
    sizes = [_DIG2BYTES[lead]] * bool(lead) + [4] * (full_int + full_frac) + [_DIG2BYTES[trail]] * bool(trail)
    data = bytearray(raw[: sum(sizes)])
    if len(data) < sum(sizes):
        raise MalformedEventError(f"DECIMAL({precision},{scale}) needs {sum(sizes)} bytes, the value has {len(data)}")
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    groups, pos = [], 0
    for size in sizes:
        groups.append(int.from_bytes(data[pos : pos + size], "big"))
        pos += size
    n_int = bool(lead) + full_int
    integer = "".join(f"{g:0{9 if k else lead or 9}d}" for k, g in enumerate(groups[:n_int])).lstrip("0") or "0"
    widths = [9] * full_frac + [trail] * bool(trail)
    fraction = "".join(f"{g:0{w}d}" for g, w in zip(groups[n_int:], widths))
    return ("-" if negative else "") + integer + ("." + fraction if scale else "")


def mysql_double_text(x: float) -> str:
    """A DOUBLE as the server prints a user variable (``my_gcvt(x, MY_GCVT_ARG_DOUBLE, 34)``):
    the shortest digits that read back as ``x`` (as Python's ``repr``), in the 'f' format when
    it fits the field and the decimal point is within 15 places of the digits, else
    ``M.MMMe[-]X`` (no '+', no leading zeros in the exponent); zero (and -0.0) is ``0``."""
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == 0:
        return "0"  # -0.0 too (the server prints "0" for it)
    sign = "-" if x < 0 else ""
    d = decimal.Decimal(repr(abs(x))).normalize()
    _, digit_tuple, exp = d.as_tuple()
    digits = "".join(map(str, digit_tuple))
    n, decpt = len(digits), len(digits) + int(exp)
    width = _GCVT_WIDTH - bool(sign)
    f_len = n - decpt + 2 if decpt <= 0 else n + 1 if decpt < n else decpt
    if f_len <= width and decpt >= 1 - _MAX_DECPT_FOR_F_FORMAT and (decpt <= _MAX_DECPT_FOR_F_FORMAT or n > decpt):
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt < n:
            return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
        return sign + digits + "0" * (decpt - n)
    return f"{sign}{digits[0]}{'.' + digits[1:] if n > 1 else ''}e{decpt - 1}"


def _stop(e: _Event) -> str:
    return ""  # Log_event::pack_info: no text of its own


def _transaction_payload(e: _Event) -> str:
    return payload_info(e.file, e.offset, e.body_end)


#: event type -> its info text (the server's pack_info)
_DESCRIBE: dict[int, Callable[[_Event], str | None]] = {
    EventType.QUERY_EVENT: _query,
    EventType.QUERY_COMPRESSED_EVENT: _query_compressed,
    EventType.XID_EVENT: _xid,
    EventType.ROTATE_EVENT: _rotate,
    EventType.FORMAT_DESCRIPTION_EVENT: _format_description,
    EventType.TABLE_MAP_EVENT: _table_map_or_rows,
    **{code: _table_map_or_rows for code in (*ROWS_EVENTS, *(c for c in MARIADB_COMPRESSED if c != EventType.QUERY_COMPRESSED_EVENT))},
    EventType.GTID_EVENT: _mariadb_gtid,
    **{code: _mysql_gtid for code in _MYSQL_GTIDS},
    EventType.GTID_LIST_EVENT: _gtid_list,
    EventType.PREVIOUS_GTIDS_LOG_EVENT: _previous_gtids,
    EventType.BINLOG_CHECKPOINT_EVENT: _binlog_checkpoint,
    EventType.ANNOTATE_ROWS_EVENT: _annotate_rows,
    EventType.ROWS_QUERY_LOG_EVENT: _rows_query,
    EventType.INTVAR_EVENT: _intvar,
    EventType.RAND_EVENT: _rand,
    EventType.USER_VAR_EVENT: _user_var,
    EventType.XA_PREPARE_LOG_EVENT: _xa_prepare,
    EventType.STOP_EVENT: _stop,
    EventType.TRANSACTION_PAYLOAD_EVENT: _transaction_payload,
}
