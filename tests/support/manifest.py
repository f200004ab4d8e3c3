"""The shared corpus's MANIFEST.md, read into rows: what its compiler recorded of each file
(tests/test_reference.py checks the reference decoder against it)."""

from __future__ import annotations

import functools
import re

from ..conftest import corpus_path

_COUNT_RE = re.compile(r"\((\d+)\)×(\d+)")
_STOP_RE = re.compile(r"walk stopped: \{'trailing_bytes': (\d+)\}")
_COLTYPES_RE = re.compile(r"column types: ([^.]*)\.")
_OPTMETA_RE = re.compile(r"TABLE_MAP optional metadata: ([A-Z_, ]*)\.")
_UNSIGNED_RE = re.compile(r"UNSIGNED numeric columns flagged in SIGNEDNESS metadata: (\d+)")


@functools.cache
def manifest_rows() -> dict[str, dict]:
    """The corpus MANIFEST.md's rows by file name: column types, optional metadata, UNSIGNED
    columns, server version, checksum, event counts by type, trailing bytes, the note."""
    rows = {}
    for line in corpus_path("MANIFEST.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 11 or not cells[0].isdigit():
            continue
        name = cells[1].strip("`")
        counts = {int(t): int(n) for t, n in _COUNT_RE.findall(cells[9])}
        stop = _STOP_RE.search(cells[10])
        coltypes = _COLTYPES_RE.search(cells[10])
        optmeta = _OPTMETA_RE.search(cells[10])
        unsigned = _UNSIGNED_RE.search(cells[10])
        rows[name] = {
            "column_types": {k: int(v) for k, v in re.findall(r"(\w+)×(\d+)", coltypes.group(1))}
            if coltypes else {},
            "optional_metadata": set(optmeta.group(1).split(", ")) if optmeta else set(),
            "unsigned": int(unsigned.group(1)) if unsigned else 0,
            "server_version": cells[7].strip("`"),
            "checksum": cells[8],
            "counts": counts,
            "trailing_bytes": int(stop.group(1)) if stop else None,
            "note": cells[10],
        }
    return rows
