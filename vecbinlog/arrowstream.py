"""A ``pyarrow.RecordBatchReader`` over a generator of batches, that ends the generator when it
is closed or dropped.

``pa.RecordBatchReader.from_batches(schema, generator)`` keeps the generator until the reader
object is garbage: its ``close()`` leaves it suspended, with the files and the background
tasks of the read it runs (pyarrow 26). A reader *imported* from the Arrow C stream of
that one lets go of the stream it imported when it is closed (the C stream's ``release``), and
with it of the reader that held the generator: the generator is then dropped, which closes it
(``GeneratorExit`` at its ``yield``, its ``finally`` run) in the call to ``close()``. The same
happens when the reader is dropped unread, and when a consumer of its C stream (DuckDB, Polars,
another process's reader) releases the stream.
"""

from __future__ import annotations

from typing import Generator

import pyarrow as pa

__all__ = ["closing_reader"]


def closing_reader(schema: pa.Schema, batches: Generator[pa.RecordBatch, None, None]) -> pa.RecordBatchReader:
    """A RecordBatchReader of ``schema`` over ``batches`` (each of that schema), whose ``close()``,
    or its being dropped or its C stream released, closes ``batches``; read to the end, the
    generator has ended already. Nothing is read before the first batch is asked for."""
    inner = pa.RecordBatchReader.from_batches(schema, batches)
    del batches  # the inner reader holds the generator alone: letting go of it closes the generator
    return pa.RecordBatchReader.from_stream(inner)
