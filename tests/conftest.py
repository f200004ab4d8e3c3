"""Shared test fixtures: where the corpus, the seeds and the sample data are (found from this
file, never the cwd).

The shared corpus (``../shared/corpus`` beside the clone, or ``VECBINLOG_CORPUS``) and the
seeds' hex dumps (``../shared/seeds``, or ``VECBINLOG_SEEDS``) are not in the repository.
Without them the tests that read them skip, with one reason naming the variable; under CI
(the ``CI`` environment variable set, as ``.ci/run`` runs) they fail instead. What the core
must prove on its own runs on the files of ``data/`` and ``tests/data/`` or on binlogs the
test server writes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
#: small third-party binlogs copied from the corpus for the tests that must run without it (README.md there)
TEST_DATA = Path(__file__).resolve().parent / "data"
CORPUS_ENV, SEEDS_ENV = "VECBINLOG_CORPUS", "VECBINLOG_SEEDS"
CORPUS = Path(os.environ.get(CORPUS_ENV, ROOT.parent / "shared" / "corpus")).resolve()
SEEDS = Path(os.environ.get(SEEDS_ENV, ROOT.parent / "shared" / "seeds")).resolve()


def _missing(what: str, env: str) -> str:
    """Why a test that needs the shared folder ``what`` does not run: one text for them all."""
    folder = CORPUS if what == "corpus" else SEEDS
    return (f"the shared {what} is not at {folder}: set {env} to its folder "
            f"(../shared/{what} beside the clone); CI (the CI variable set) requires it")


def shared_missing(what: str, env: str, module: bool = False) -> NoReturn:
    """Skip (fail under CI) a test that needs the shared folder ``what`` ("corpus", "seeds"),
    absent: one reason for every such test, naming the variable that says where it is
    (``module``: every test of the calling module, from its top level)."""
    reason = _missing(what, env)
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=module)


def corpus_path(name: str) -> Path:
    """A file of the shared corpus. The corpus absent: skipped (failed under CI); the corpus
    there but not this file: FileNotFoundError (an incomplete corpus is never skipped)."""
    if not CORPUS.is_dir():
        shared_missing("corpus", CORPUS_ENV)
    p = CORPUS / name
    if not p.exists():
        raise FileNotFoundError(f"{p}: not in the corpus at {CORPUS} ({CORPUS_ENV})")
    return p


def seed_path(name: str) -> Path:
    """A file of the shared seeds (the hex dumps of the seed documents), as :func:`corpus_path`."""
    if not SEEDS.is_dir():
        shared_missing("seeds", SEEDS_ENV)
    p = SEEDS / name
    if not p.exists():
        raise FileNotFoundError(f"{p}: not in the seeds at {SEEDS} ({SEEDS_ENV})")
    return p


def corpus_files() -> list[Path]:
    """Every file of the corpus (none when it is absent: the tests parametrized by them are
    then left out; under CI the corpus must be there)."""
    if not CORPUS.is_dir():
        if os.environ.get("CI"):
            raise FileNotFoundError(f"the shared corpus is not at {CORPUS}: set {CORPUS_ENV} (CI requires it)")
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "MANIFEST.md")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the corpus, the tests parametrized by its files (:func:`corpus_files`) have none:
    pytest skips them as "got empty parameter set"; say why, with the corpus's one reason."""
    if CORPUS.is_dir():
        return
    for item in items:
        reasons = [str(m.kwargs.get("reason", "")) for m in item.iter_markers("skip")]
        if any(r.startswith("got empty parameter set") for r in reasons):
            item.add_marker(pytest.mark.skip(reason=_missing("corpus", CORPUS_ENV)), append=False)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Where the corpus and the seeds are, or that the tests needing them skip."""
    lines = []
    for what, env, folder in (("corpus", CORPUS_ENV, CORPUS), ("seeds", SEEDS_ENV, SEEDS)):
        state = "" if folder.is_dir() else (" -- absent: " + ("CI requires it" if os.environ.get("CI")
                                                              else f"tests that need it skip (set {env})"))
        lines.append(f"vecbinlog {what}: {folder}{state}")
    return lines


@pytest.fixture
def corpus():
    return corpus_path


# The shared fixtures (tests/support/fixtures.py), available to every test module: the MariaDB
# server (one session server for every test that asks for it) and its globals, moto's S3
# server, the SparkSession, the net-changes workload.
from .support.fixtures import (  # noqa: E402,F401
    mariadb_globals,
    mariadb_server,
    minimal,
    net_workload,
    s3,
    spark,
    spread,
    timed,
)


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
