"""DuckDB: SQL over a binlog table, streamed (``pip install vecbinlog[duckdb]``).

:func:`scan` plans the read of one table (:class:`vecbinlog.scans.TableScan`) and returns an
object DuckDB reads by its Arrow PyCapsule stream (``__arrow_c_stream__``): a Python variable
holding it is a table in ``duckdb.sql(...)`` (DuckDB's replacement scans), and
``con.register(name, scan)`` names it in a connection. Each query reads it anew, a batch at a
time, in bounded memory; a query that stops early (``LIMIT``) releases the stream, which ends
the read.

DuckDB pushes neither the columns nor the filters of a query into an Arrow stream: give them
to the scan. ``columns=`` reads only those columns; ``since``/``until``, ``gtids``,
``change_types``, ``start``/``stop`` (the options of :func:`vecbinlog.open`) are the read's
filters, and with an archive ``index`` the files that cannot hold such rows are not read at
all. For many queries over the same archive, export the table to Parquet once
(``vecbinlog to-parquet``) and query that: DuckDB then prunes columns and row groups itself
(docs/engines.md).
"""

from __future__ import annotations

from typing import Any

from .scans import TableScan

__all__ = ["scan", "register"]


def scan(files: Any, table: str, *, index: Any = None, **options: Any) -> TableScan:
    """The change log of ``table`` in ``files`` as a table DuckDB reads (each query anew).

    Parameters
    ----------
    files : a folder, a glob, a ``mysql-bin.index``, a file or a list of them, in log order.
    table : ``db.table``.
    index : an archive index location (:func:`vecbinlog.build_index`): the schema and the
        plan come from it, and ``since``/``until``/``gtids`` leave out the files that cannot
        hold rows in them.
    **options : those of :func:`vecbinlog.open`; ``columns``, ``since``, ``until``, ``gtids``,
        ``change_types`` narrow what is read.

    Examples
    --------
    >>> import duckdb, vecbinlog.duckdb                                          # doctest: +SKIP
    >>> orders = vecbinlog.duckdb.scan("archive/", "shop.orders", index="archive-index/",
    ...                                since="2026-11-21", until="2026-11-22")
    >>> duckdb.sql("SELECT status, count(*) FROM orders GROUP BY ALL").show()
    """
    return TableScan.of(files, table, index=index, **options)


def register(con: Any, name: str, files: Any, table: str, *, index: Any = None, **options: Any) -> TableScan:
    """:func:`scan`, registered in the DuckDB connection ``con`` as the view ``name``
    (``con.register``): every query of ``name`` reads the binlogs anew. Returns the scan."""
    found = scan(files, table, index=index, **options)
    con.register(name, found)
    return found
