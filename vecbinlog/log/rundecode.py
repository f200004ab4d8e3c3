"""A run's batches: its rows events' CRC32s checked, its row images placed, the rows the
outcome and GTID filters leave out taken out, and the rest decoded, batch by batch.

This runs on any thread (a run decoded in the background: :mod:`.scheduler`): everything it
reads is the run's own (the event sources of its pieces hold their bytes) or the read's frozen
:class:`~.config.ReadConfig`.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from ..binlog.gathered import Gathered, gather
from ..binlog.headers import EventIndex, code_table
from ..binlog.eventsource import EventSource
from ..binlog.transactions import INCOMPLETE, ROLLBACK, TxnContext
from ..decode.batch import RowTransactions, build_batch, table_schema
from ..decode.rows import PlacedRun
from ..groups import ranks
from ..pools import in_pool
from ..tables.table_map import TableMap
from .config import ReadConfig
from .runs import CarriedRun, matched
from .scheduler import Made

__all__ = ["declared_schema", "run_batches"]

_NOT_TAKEN_EFFECT = code_table([ROLLBACK, INCOMPLETE])  # by outcome


def declared_schema(config: ReadConfig, table_map: TableMap, flavor: str) -> pa.Schema:
    """The declared Arrow schema of a layout read with ``config`` (before any text falls back
    to binary): made once per layout and options in the process
    (:func:`~vecbinlog.decode.batch.table_schema`)."""
    return table_schema(table_map, config.decoding.of(table_map.name, flavor), config.queries)


def _unchecked(run: CarriedRun) -> Iterator[tuple[EventSource, EventIndex]]:
    """The pieces of ``run`` whose CRC32s were not found to match on a batch thread already,
    by event source (each source's pieces in one check)."""
    by_source: dict[int, tuple[EventSource, list[EventIndex]]] = {}
    for k, (src, events) in enumerate(zip(run.srcs, run.events)):
        if k >= len(run.checked) or not matched(run.checked[k]):
            by_source.setdefault(id(src), (src, []))[1].append(events)
    for src, pieces in by_source.values():
        yield src, EventIndex.concat(pieces) if len(pieces) > 1 else pieces[0]


def _row_transactions(ctx: TxnContext | None, event: np.ndarray) -> RowTransactions | None:
    if ctx is None:
        return None
    return RowTransactions(ctx, ctx.txn[event], ctx.undone[event], ctx.query[event])


def run_batches(run: CarriedRun, config: ReadConfig, deferred_text: bool = False) -> Iterator[Made]:
    """The batches of one run, checked, placed, filtered and decoded (a run in the background
    takes its CRC32s and rows headers off the reading thread); ``deferred_text``: see
    :class:`~.scheduler.ReadTally`."""
    run = run.regathered()  # a planned run of small files joined, their copy let go of: its events copied again
    name, tm, flavor = run.table, run.layout, run.flavor
    effective = config.effective(name)
    for src, events in _unchecked(run):
        src.verify_checksums_of(events)
    names = list(dict.fromkeys(f.name for f in run.files))
    file_no = [names.index(f.name) for f in run.files]  # per piece
    if run.gathered:  # pieces of several files: their events copied into one buffer
        src, events = gather(list(zip(run.srcs, run.events)), file_no, [f.path for f in dict.fromkeys(run.files)],
                             names)
        file_of_event = src.file_of
    else:
        events = run.events[0] if len(run.events) == 1 else EventIndex.concat(run.events)  # (read, not changed)
        src, file_of_event = run.srcs[0], None
        if isinstance(src, Gathered):  # a step of small files joined: its events' own files (those used)
            used, file_of_event = ranks(np.concatenate(run.file_of))
            names = [src.names[k] for k in used.tolist()]
    ctx = TxnContext.concat(run.txns, file_no) if run.txns is not None else None
    gtids = config.gtids
    gtid_ok = gtids.contains(ctx.gtid) if gtids is not None and ctx is not None else None  # per transaction
    placement = PlacedRun(src, events, tm, max_images=config.batch_rows)
    wanted = None if config.columns is None and config.metadata else config.wants
    options, declared = config.decoding.of(name, flavor, deferred_text), declared_schema(config, tm, flavor)
    for images in placement.batches():
        txn = _row_transactions(ctx, images.event)
        keep_rows = np.ones(len(images), bool)
        left_out = 0
        if not effective or gtid_ok is not None:
            assert txn is not None  # a read that keeps some transactions' changes only follows them
            if not effective:
                took_effect = ~_NOT_TAKEN_EFFECT[txn.outcome()]
                left_out = int((~took_effect).sum())
                keep_rows &= took_effect
            if gtid_ok is not None:
                keep_rows &= (txn.txn >= 0) & gtid_ok[np.maximum(txn.txn, 0)] if len(gtid_ok) else False
            if not keep_rows.all():
                images = images.take(keep_rows)
                txn = RowTransactions(txn.context, txn.txn[keep_rows], txn.undone[keep_rows], txn.query[keep_rows],
                                      txn.outcome()[keep_rows])
        # columns at once only on the reading thread: on a batch thread, runs are what goes on at
        # once (column threads as well measured slower: bench/RESULTS.md)
        columns = 1 if in_pool("batch") else config.threads
        batch, notes = build_batch(images, options, names, txn, config.queries, schema_version=run.version,
                                   incarnation=run.incarnation, threads=columns, declared=declared,
                                   file_of_event=file_of_event, wanted=wanted)
        del images, txn
        yield batch, notes, left_out
        del batch
