"""The small events around the rows: what each says, as ``SHOW BINLOG EVENTS`` puts it.

Layouts (control_events.h; MariaDB sql/log_event.h)::

    QUERY_EVENT        post-header  thread_id uint32, exec_time uint32, db_len uint8,
                                    error_code uint16, status_vars_len uint16 (v4: 13 bytes)
                       body         status_vars, db name, 0x00, the statement (to the end)
    XID_EVENT          body         xid uint64
    ROTATE_EVENT       post-header  position uint64; body: the next file's name
    TABLE_MAP_EVENT    see table_map.py; rows events see rows.py

``Info`` texts follow the servers' ``pack_info()`` so they can be compared with
``SHOW BINLOG EVENTS`` (Query_log_event::pack_info, Xid_log_event::pack_info, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from .constants import ROWS_EVENTS, EventType, LogEventFlag
from .errors import MalformedEventError
from .file import BinlogFile
from .index import EventIndex
from .layout import COMMON_HEADER_LEN, QUERY_POST_HEADER, ROTATE_POSITION, XID, Cursor

__all__ = ["QueryEvent", "parse_query", "parse_xid", "parse_rotate", "describe_events"]

#: STMT_END_F in the flags of a rows event: the last rows event of a statement.
STMT_END_F = 0x1


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


def parse_query(file: BinlogFile, offset: int, body_end: int, post_header_len: int) -> QueryEvent:
    """Decode the QUERY_EVENT at ``offset``."""
    cur = Cursor(file.buf, offset + COMMON_HEADER_LEN, body_end, path=file.path, src=file, event_type="QUERY_EVENT")
    head = cur.take(QUERY_POST_HEADER.size, "query post-header")
    thread_id, exec_time, db_len, error_code = QUERY_POST_HEADER.unpack(head)
    status_len = cur.u16("status_vars_len") if post_header_len >= 13 else 0
    if post_header_len > 13:
        cur.take(post_header_len - 13, "query post-header")
    cur.take(status_len, "status variables")
    db = cur.take(db_len, "database name")
    cur.u8("database name terminator")
    return QueryEvent(thread_id, exec_time, error_code, _text(db), cur.take(cur.remaining(), "statement"))


def parse_xid(file: BinlogFile, offset: int, body_end: int, post_header_len: int) -> int:
    cur = Cursor(file.buf, offset + COMMON_HEADER_LEN + post_header_len, body_end, path=file.path, src=file, event_type="XID_EVENT")
    return XID.unpack(cur.take(XID.size, "xid"))[0]


def parse_rotate(file: BinlogFile, offset: int, body_end: int, post_header_len: int) -> tuple[str, int]:
    """(next file name, position in it) of the ROTATE_EVENT at ``offset``."""
    cur = Cursor(file.buf, offset + COMMON_HEADER_LEN, body_end, path=file.path, src=file, event_type="ROTATE_EVENT")
    position = ROTATE_POSITION.unpack(cur.take(ROTATE_POSITION.size, "rotate position"))[0] if post_header_len >= 8 else 4
    return _text(cur.take(cur.remaining(), "next file name")), position


def describe_events(file: BinlogFile, index: EventIndex) -> list[str | None]:
    """The ``Info`` text of each event (None for the types not described yet)."""
    out: list[str | None] = []
    for off, t, fmt, end, flags in zip(
        index.offset.tolist(), index.type_code.tolist(), index.fmt.tolist(), index.body_end.tolist(), index.flags.tolist()
    ):
        ph = file.formats[fmt].post_header_len(t)
        try:
            out.append(_describe(file, off, t, end, ph, flags))
        except MalformedEventError:
            out.append(None)  # events() is for looking; reading the data reports the error
    return out


def _describe(file: BinlogFile, off: int, t: int, end: int, ph: int, flags: int) -> str | None:
    if t == EventType.QUERY_EVENT:
        q = parse_query(file, off, end, ph)
        use = ""
        if q.database and not flags & LogEventFlag.LOG_EVENT_SUPPRESS_USE_F:
            use = f"use {_quote(q.database)}; "
        return use + _text(q.query)
    if t == EventType.XID_EVENT:
        return f"COMMIT /* xid={parse_xid(file, off, end, ph)} */"
    if t == EventType.ROTATE_EVENT:
        name, pos = parse_rotate(file, off, end, ph)
        return f"{name};pos={pos}"
    if t == EventType.FORMAT_DESCRIPTION_EVENT:
        f = next(f for f in file.formats if f.offset == off)
        return f"Server ver: {f.server_version}, Binlog ver: {f.binlog_version}"
    if t == EventType.TABLE_MAP_EVENT or t in ROWS_EVENTS:
        id_len = 4 if ph == 6 else 6
        cur = Cursor(file.buf, off + COMMON_HEADER_LEN, end, path=file.path, src=file)
        table_id = cur.uint(id_len, "table_id")
        ev_flags = cur.u16("flags")
        if t in ROWS_EVENTS:
            return f"table_id: {table_id}" + (" flags: STMT_END_F" if ev_flags & STMT_END_F else "")
        db = _text(cur.take(cur.u8("db name length"), "db name"))
        cur.u8("terminator")
        tbl = _text(cur.take(cur.u8("table name length"), "table name"))
        return f"table_id: {table_id} ({db}.{tbl})"
    return None
