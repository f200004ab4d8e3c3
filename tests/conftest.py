"""Shared test fixtures: where the corpus and the sample data are (found from this file, never the cwd)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
CORPUS = Path(os.environ.get("VECBINLOG_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()


def corpus_path(name: str) -> Path:
    """A file of the shared corpus; fails (does not skip) when the corpus is missing,
    unless VECBINLOG_ALLOW_MISSING_CORPUS=1."""
    p = CORPUS / name
    if not p.exists():
        if os.environ.get("VECBINLOG_ALLOW_MISSING_CORPUS") == "1":
            pytest.skip(f"corpus file {p} not present")
        raise FileNotFoundError(f"{p}: set VECBINLOG_CORPUS to the shared corpus folder")
    return p


def corpus_files() -> list[Path]:
    if not CORPUS.exists():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "MANIFEST.md")


@pytest.fixture
def corpus():
    return corpus_path


# The MariaDB server fixtures (one session server for every test that asks for it).
from .support.fixtures import mariadb_globals, mariadb_server  # noqa: E402,F401


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """The walk's kernels compiled (or loaded from numba's cache) once, before any test that
    bounds its own time runs: with an empty cache (CI's NUMBA_BOUNDSCHECK=1 run) the first
    decode compiles them."""
    import vecbinlog

    with vecbinlog.open(DATA / "sample" / "mariadb-bin.000001") as log:
        log.read_all()
        log.verify()
    yield
