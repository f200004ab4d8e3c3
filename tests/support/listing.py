"""The server's own listing of a binlog (``SHOW BINLOG EVENTS``): an oracle for where each
transaction ends, and so where a reader of a file cut anywhere must stop."""

from __future__ import annotations


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
