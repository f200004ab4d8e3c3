"""Binlog archives landed in lake tables: one call takes what is new in an archive and MERGEs
it into a Delta Lake or Apache Iceberg table that looks like the MySQL table, each change
once, on one machine, without Spark.

.. code-block:: python

    from vecbinlog.lake import sync_delta, sync_iceberg
    sync_delta("s3://binlogs/prod/", "shop.orders", "s3://lake/orders")           # pip install "vecbinlog[delta]"
    sync_iceberg("archive/", "shop.orders", "shop.orders",
                 catalog="sqlite:///lake/catalog.db")                              # pip install "vecbinlog[iceberg]"

Run it again (cron, a loop, an orchestrator) and it goes on from the position the last run
wrote into the table, in the same commit as its rows (:mod:`vecbinlog.lake.sync`). The
command line is ``vecbinlog sync``; docs/lake.md has the type mapping (:mod:`vecbinlog.lake.types`),
the exactly-once rule and the limits.

The package: :mod:`~vecbinlog.lake.source` (the table's changes in the archive, piece by
piece), :mod:`~vecbinlog.lake.sync` (the run, the same for every format),
:mod:`~vecbinlog.lake.types` (lake types, schema evolution), :mod:`~vecbinlog.lake.delta`
and :mod:`~vecbinlog.lake.iceberg` (the formats; imported when first used, so that neither
package is needed for the other), :mod:`~vecbinlog.lake.errors`.
"""

from __future__ import annotations

from typing import Any

from .errors import LakeError, LakeSchemaError, LakeWarning
from .source import DEFAULT_MAX_BYTES
from .sync import CHANGE_LOG_COLUMNS, POSITION, SyncResult, SyncStep
from .types import lake_type

__all__ = ["sync_delta", "sync_iceberg", "iceberg_catalog", "SyncResult", "SyncStep", "LakeError",
           "LakeSchemaError", "LakeWarning", "lake_type", "POSITION", "CHANGE_LOG_COLUMNS", "DEFAULT_MAX_BYTES"]

#: what each format's functions need: (module, the package to install, the extra that installs it)
_LAZY = {"sync_delta": ("delta", "deltalake", "delta"), "sync_iceberg": ("iceberg", "pyiceberg", "iceberg"),
         "iceberg_catalog": ("iceberg", "pyiceberg", "iceberg")}


def __getattr__(name: str) -> Any:
    """``sync_delta`` and ``sync_iceberg``, imported with their format's package when first asked for."""
    if name not in _LAZY:
        raise AttributeError(f"module 'vecbinlog.lake' has no attribute {name!r}")
    module, package, extra = _LAZY[name]
    try:
        found = __import__(f"{__name__}.{module}", fromlist=[name])
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] == package:
            raise ImportError(f"vecbinlog.lake.{name} needs the {package} package: pip install "
                              f"\"vecbinlog[{extra}]\"", name=package) from exc
        raise
    return getattr(found, name)
