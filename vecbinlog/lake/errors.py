"""What a sync into a lake table raises and warns: the lake's own errors, beside the binlog's
(:mod:`vecbinlog.errors`)."""

from __future__ import annotations

from ..errors import SchemaChangedError, VecbinlogError, VecbinlogWarning

__all__ = ["LakeError", "LakeSchemaError", "LakeWarning"]


class LakeError(VecbinlogError, ValueError):
    """The lake table cannot take this sync: it holds another table's changes, it was not
    written by :mod:`vecbinlog.lake` (no position in its commits), or its position is not in
    the archive. Nothing was written."""


class LakeSchemaError(SchemaChangedError):
    """A column of the binlog's table changed its type in a way the lake table cannot follow
    (Delta has no type widening; Iceberg widens int to long, float to double and a decimal's
    precision only). Names the column, both types and where the new layout's changes start;
    nothing of that stretch was written, and the table and its position are as they were."""


class LakeWarning(VecbinlogWarning):
    """Something the lake table cannot hold as the MySQL table does, said once per sync: a
    table without a primary key appended as a change log, GEOMETRY SRIDs the WKB column does
    not keep."""
