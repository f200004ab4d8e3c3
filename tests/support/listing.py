"""The server's own listing of a binlog (``SHOW BINLOG EVENTS``): an oracle for where each
transaction ends, and so where a reader of a file cut anywhere must stop."""

from __future__ import annotations

import re


def server_events(server, name: str) -> list[dict]:
    """``SHOW BINLOG EVENTS IN name``: pos, end, type, info of every event."""
    return [{"pos": int(r[1]), "end": int(r[4]), "type": r[2], "info": r[5] or ""}
            for r in server.query(f"SHOW BINLOG EVENTS IN '{name}'")]


def transaction_end(events: list[dict], i: int) -> int | None:
    """Where the transaction started by the GTID event ``events[i]`` ends, as the server lists
    it: its XID or COMMIT/ROLLBACK query (``BEGIN GTID``), or its one statement (``GTID``)."""
    begun = events[i]["info"].startswith("BEGIN GTID")
    for e in events[i + 1:]:
        query = e["type"].startswith("Query")  # Query, Query_compressed
        if begun and (e["type"] == "Xid" or (query and e["info"] in ("COMMIT", "ROLLBACK"))):
            return e["end"]
        if not begun and query:
            return e["end"]
    return None


def complete_end(events: list[dict], cut: int) -> int | None:
    """Where a reader of the file's first ``cut`` bytes stops: after the last whole event when no
    transaction is left open there, else at the start of the open one; None before the first
    event is whole."""
    whole = [e for e in events if e["end"] <= cut]
    if not whole:
        return None
    walked = whole[-1]["end"]
    starts = [i for i, e in enumerate(events) if e["type"] == "Gtid" and e["pos"] < walked]
    if not starts:
        return walked
    end = transaction_end(events, starts[-1])
    return walked if end is not None and end <= walked else events[starts[-1]]["pos"]


def kept_starts(starts: list[int]) -> list[int]:
    """What an archive index keeps of ``starts`` (every transaction start of a file, in file
    order), by its documented rule: all of them when they are no more than ``KEPT_STARTS``;
    else the first of each block of the least power of two of bytes that keeps no more."""
    from vecbinlog.log import summary

    spacing = 1
    while True:
        kept = [p for i, p in enumerate(starts) if i == 0 or p // spacing != starts[i - 1] // spacing]
        if len(kept) <= summary.KEPT_STARTS:
            return kept
        spacing *= 2


_PRINTED = re.compile(r"^#\d{6} .* end_log_pos (\d+) .*?\t(.*)$", re.M)
#: what mariadb-binlog prints of an event (the start of it) -> the type SHOW BINLOG EVENTS names
_PRINTED_TYPES = {"GTID ": "Gtid", "Gtid list": "Gtid_list", "Binlog checkpoint": "Binlog_checkpoint",
                  "Start:": "Format_desc", "Rotate to": "Rotate"}


def printed_events(text: str) -> list[dict]:
    """:func:`server_events` of a file from ``mariadb-binlog``'s print of it instead of the
    server (``data/sample/mariadb-binlog-vv.txt``): each event's header line, in file order
    (an event starts where the one before it ends: its ``end_log_pos``; the print's ``# at``
    lines are not all in order); its type as the server names it (Gtid, Query, Xid,
    Table_map...), its info as far as :func:`complete_end` asks (``BEGIN GTID d-s-n`` for a
    GTID that begins a transaction, ``GTID d-s-n`` for one of a statement alone, a Query's
    COMMIT or ROLLBACK)."""
    found = list(_PRINTED.finditer(text))
    events, pos = [], 4
    for k, m in enumerate(found):
        end, what = int(m.group(1)), m.group(2)
        body = text[m.end():found[k + 1].start() if k + 1 < len(found) else len(text)].splitlines()
        kind = next((t for start, t in _PRINTED_TYPES.items() if what.startswith(start)), what.split()[0].rstrip(":"))
        info = ""
        if kind == "Gtid":
            gtid, scope = what.split()[1:3]
            info = f"BEGIN GTID {gtid}" if scope == "trans" else f"GTID {gtid}"
        elif kind == "Query":
            info = next((s for s in ("COMMIT", "ROLLBACK") if f"{s}/*!*/;" in body), "")
        events.append({"pos": pos, "end": end, "type": kind, "info": info})
        pos = end
    return events
