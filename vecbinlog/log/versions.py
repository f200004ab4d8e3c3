"""Effective layouts and schema versions: which layout each rows event is written under, and
its ``_schema_version`` and ``_incarnation``.

A rows event's *effective layout* is its TABLE_MAP completed by what the DDL replayed so far (or
``schema=``) says of its table at that event (names, signedness, charsets, labels). A table's
``_schema_version`` counts its distinct effective layouts in log order (0, 1, ...), its
``_incarnation`` the DROP/CREATE/TRUNCATE statements of its name (see
:attr:`vecbinlog.tables.ddl.Catalog.lifetimes`). Both are found from the headers, TABLE_MAPs and DDL,
before any row is decoded, so that neither depends on the filters of a read.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from ..binlog.sources import is_uri, redact
from ..decode.tableplan import TablePlan
from ..groups import group, group_order
from ..tables.table_map import TableMap
from ..tables.tracker import needs_definition
from .logwalk import Step

__all__ = ["VersionState", "SchemaVersions", "SchemaHistory", "WalkedFile", "Versioned", "effective_layouts", "versioned", "followed_by"]


@dataclass(frozen=True)
class VersionState:
    """Where a table's layouts stand at a point of the log: its last effective layout, its
    ``_schema_version`` and ``_incarnation``, and the lifetime count (DROP/CREATE/TRUNCATE
    statements of its name, :attr:`vecbinlog.tables.ddl.Catalog.lifetimes`) it was written under.
    Given to a range read alone (``Split.versions``), it numbers versions and incarnations as a
    read of the whole files does."""

    table_map: TableMap
    version: int
    lifetime: int
    incarnation: int


class SchemaVersions:
    """``_schema_version`` and ``_incarnation`` of each table: 0 for the first effective layout
    (and lifetime) met, +1 at every change; and, per table, the layout of each version."""

    def __init__(self, start: dict[str, VersionState] | None = None, history: bool = False) -> None:
        self.last: dict[str, VersionState] = dict(start or {})
        #: name -> version -> (effective layout, file flavor), in log order
        self.layouts: dict[str, dict[int, tuple[TableMap, str]]] = {}
        #: name -> [((file number, offset of the rows event), state from there on)], with history=True
        self.history: dict[str, list[tuple[tuple[int, int], VersionState]]] | None = {} if history else None

    def only(self, wanted: Callable[[str], bool]) -> SchemaVersions:
        """The versions of the tables ``wanted`` accepts."""
        out = SchemaVersions()
        out.last = {n: s for n, s in self.last.items() if wanted(n)}
        out.layouts = {n: v for n, v in self.layouts.items() if wanted(n)}
        if self.history is not None:
            out.history = {n: h for n, h in self.history.items() if wanted(n)}
        return out

    def assign(self, tables: list[str], table: np.ndarray, code: np.ndarray, resolved: list[TableMap],
               lifetime: list[int], flavor: str, where: tuple[int, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The version and incarnation (int32 each) of rows events in log order, of tables
        ``tables[table]``, effective layouts ``code`` (``resolved[code]``) written under
        ``lifetime[code]``. ``where``: (file number, offset of each event), for the history."""
        version = np.zeros(len(code), np.int32)
        incarnation = np.zeros(len(code), np.int32)
        first, inverse = group(table)  # the tables in order of first appearance
        order = group_order(inverse, len(first))
        bounds = np.concatenate(([0], np.cumsum(np.bincount(inverse, minlength=len(first))))).tolist()
        for g, t in enumerate(table[first].tolist()):
            name = tables[t]
            mine = order[bounds[g]:bounds[g + 1]]  # its events, in log order
            c = code[mine]
            starts = np.concatenate(([0], np.flatnonzero(c[1:] != c[:-1]) + 1))  # runs of one layout: few
            runs = []
            for s in starts.tolist():
                tm, life = resolved[int(c[s])], lifetime[int(c[s])]
                prev = self.last.get(name)
                if prev is None:
                    state = VersionState(tm, 0, life, 0)
                else:
                    state = VersionState(tm, prev.version + (prev.table_map != tm), life,
                                        prev.incarnation + (prev.lifetime != life))
                if state != prev:
                    self.last[name] = state
                    self.layouts.setdefault(name, {}).setdefault(state.version, (tm, flavor))
                    if self.history is not None and where is not None:
                        self.history.setdefault(name, []).append(((where[0], int(where[1][mine[s]])), state))
                runs.append((state.version, state.incarnation))
            lengths = np.diff(np.append(starts, len(c)))
            version[mine] = np.repeat(np.array([r[0] for r in runs], np.int32), lengths)
            incarnation[mine] = np.repeat(np.array([r[1] for r in runs], np.int32), lengths)
        return version, incarnation

    def plan(self, table: str, schema_of: Callable[[TableMap, str], pa.Schema]) -> TablePlan:
        """The TablePlan of ``table`` from the layouts met (their declared schemas,
        ``schema_of(layout, flavor)``)."""
        plan = TablePlan(table)
        for v, (tm, flavor) in sorted(self.layouts.get(table, {}).items()):
            plan.add(v, schema_of(tm, flavor))
        return plan


@dataclass(frozen=True)
class WalkedFile:
    """What a walk of a whole file found that a plan of its splits needs."""

    size: int | None  #: its bytes then
    seekable: bool  #: false: a compressed file, one split
    second_format: int | None  #: the offset of a second FORMAT_DESCRIPTION_EVENT (a relay log: no cut after it)
    starts: np.ndarray  #: int64: its transaction starts (binlog/transactions.py's rule)


@dataclass
class SchemaHistory:
    """Every table's layouts in the files read, found without decoding a row
    (:meth:`Binlog.history`): each table's :class:`~vecbinlog.decode.tableplan.TablePlan`, and where
    layouts and DDL stand at any offset, for ranges read alone (splits)."""

    paths: list[str]
    plans: dict[str, TablePlan]
    #: name -> [((file number, offset), state from that rows event on)], in log order
    history: dict[str, list[tuple[tuple[int, int], VersionState]]]
    #: [((file number, offset), DDL state after the DDL statement at that offset)], in log order
    ddl: list[tuple[tuple[int, int], Any]]
    #: what the walk found of each file for planning splits (None: not kept, e.g. from an index):
    #: :func:`vecbinlog.splits.plan_splits` with ``history=`` plans from them, walking no file again
    walked: list[WalkedFile] | None = None

    def file_number(self, path: str) -> int:
        """The place of ``path`` among the files walked (a ValueError when it is not one)."""
        def same(p: str) -> str:  # a file's path is its URI without credentials (BinlogFile.path)
            return redact(p) if is_uri(p) else os.path.realpath(p)

        numbers = self.__dict__.get("_numbers")
        if numbers is None:  # once: a plan asks for each of its splits (976 files: 28 s of realpath)
            numbers = self.__dict__["_numbers"] = {}
            for k, p in enumerate(self.paths):
                numbers.setdefault(same(p), k)
        number = numbers.get(same(path))
        if number is None:
            raise ValueError(f"{redact(path)} is not one of the files {self.paths}")
        return number

    def start_state(self, path: str, offset: int) -> tuple[Any, dict[str, VersionState]]:
        """(DDL state, layout states) in force where a range of ``path`` starting at ``offset``
        starts: after every DDL statement and rows event before it."""
        at = (self.file_number(path), offset)
        ddl = None
        for where, state in self.ddl:
            if where >= at:
                break
            ddl = state
        layouts = {}
        for name, changes in self.history.items():
            before = [state for where, state in changes if where < at]
            if before:
                layouts[name] = before[-1]
        return ddl, layouts


def effective_layouts(step: Step, sel: np.ndarray) -> tuple[np.ndarray, list[TableMap], list[int]]:
    """The effective layout of rows events ``sel`` of a step: a code per event (int64),
    the TABLE_MAP of each code, completed by the table's definition at that event, and the
    lifetime of the table's name it was written under (see SchemaTracker.tracked)."""
    lay, gen = step.layout[sel], step.generation[sel]
    span = int(gen.max()) + 1 if len(gen) else 1
    pair_keys = lay * span + gen
    first, inverse = group(pair_keys)  # (layout, generation) pairs in order of appearance
    keys = pair_keys[first]
    pairs = np.stack([keys // span, keys % span], axis=1)
    flavor = step.file.formats[0].flavor
    codes: dict[tuple[int, int], int] = {}
    resolved: list[TableMap] = []
    lifetimes: list[int] = []
    of_pair = np.zeros(len(pairs), np.int64)
    for k, ((lid, g), i) in enumerate(zip(pairs.tolist(), first.tolist())):
        tm = step.maps.layouts[lid]
        ver, definition, lifetime = step.schema.tracked(tm.name, g, definition=needs_definition(tm))
        if (lid, ver) not in codes:
            where = f"{step.file.path}: offset {int(step.index.pos[step.rows_pos[sel[i]]])}"
            codes[(lid, ver)] = len(resolved)
            resolved.append(step.schema.resolve(tm, definition, flavor, where))
            lifetimes.append(lifetime)
        of_pair[k] = codes[(lid, ver)]
    return of_pair[inverse], resolved, lifetimes


@dataclass
class Versioned:
    """The rows events of a step that a read keeps, with their effective layouts, versions and
    incarnations (one entry per event, in log order)."""

    sel: np.ndarray  #: positions in ``step.rows_pos``
    code: np.ndarray  #: effective layout, an index in ``resolved``
    resolved: list[TableMap]
    version: np.ndarray  #: int32 ``_schema_version``
    incarnation: np.ndarray  #: int32 ``_incarnation``
    table: np.ndarray  #: an index in ``tables``
    tables: list[str]


def versioned(step: Step, keep: Callable[[str], bool], versions: SchemaVersions, file_no: int) -> Versioned | None:
    """The rows events of a step of the tables ``keep`` accepts, with their effective layouts,
    versions and incarnations, before any other filter (so that neither depends on the
    filters); None when there are none."""
    rows_pos, layout = step.rows_pos, step.layout
    if len(rows_pos) == 0:
        return None
    # layout id -> table name, kept as Python strings (NumPy would drop trailing NULs)
    name_of = [tm.name for tm in step.maps.layouts]
    sel = np.flatnonzero(np.array([keep(n) for n in name_of], bool)[layout])
    if not len(sel):
        return None
    # the effective layout of each rows event: its TABLE_MAP with what the DDL as of that
    # event, or schema=, says
    code, resolved, lifetime = effective_layouts(step, sel)
    tables = list(dict.fromkeys(name_of))
    table_of_layout = np.array([tables.index(n) for n in name_of], np.int64)
    table = table_of_layout[layout[sel]]
    where = (file_no, step.index.pos[rows_pos[sel]]) if versions.history is not None else None
    version, incarnation = versions.assign(tables, table, code, resolved, lifetime, step.file.formats[0].flavor, where)
    return Versioned(sel, code, resolved, version, incarnation, table, tables)


def followed_by(head: SchemaHistory, then: SchemaHistory) -> SchemaHistory:
    """One history of ``head``'s files, then ``then``'s, the files after them, walked from the
    states at the end of ``head`` (its ``_schema_version`` s go on from ``head``'s): an
    archive's history replayed from its index up to a file, then walked
    (:meth:`vecbinlog.streaming.StreamHistory.walk`)."""
    shift = len(head.paths)

    def moved(where: tuple[int, int]) -> tuple[int, int]:
        return where[0] + shift, where[1]

    plans = dict(head.plans)
    for name, plan in then.plans.items():
        mine = plans.get(name)
        if mine is None:
            plans[name] = plan
            continue
        mine = plans[name] = copy.deepcopy(mine)
        for version in plan.versions:
            mine.add(version, plan.layout_schema(version))
    history = {name: list(changes) for name, changes in head.history.items()}
    for name, changes in then.history.items():
        history.setdefault(name, []).extend((moved(where), state) for where, state in changes)
    ddl = list(head.ddl) + [(moved(where), state) for where, state in then.ddl]
    return SchemaHistory(head.paths + then.paths, plans, history, ddl)
