"""Shared test fixtures: where the corpus, the seeds and the sample data are (found from this
file, never the cwd).

The shared corpus (``../shared/corpus`` beside the clone, or ``VECBINLOG_CORPUS``) and the
seeds' hex dumps (``../shared/seeds``, or ``VECBINLOG_SEEDS``) are not in the repository.
Without them the tests that read them skip, each with one reason naming the variable; under CI
(the ``CI`` environment variable set, as ``.ci/run`` runs) they fail instead. Collection never
reads them: tests are parametrized by a file's name (``tests/support/corpus.py`` lists the
corpus's) and ask for the file when they run. What the core must prove on its own runs on the
files of ``data/`` and ``tests/data/`` or on binlogs the test server writes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from .support.corpus import CorpusName

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
#: small third-party binlogs copied from the corpus for the tests that must run without it (README.md there)
TEST_DATA = Path(__file__).resolve().parent / "data"
CORPUS_ENV, SEEDS_ENV = "VECBINLOG_CORPUS", "VECBINLOG_SEEDS"
CORPUS = Path(os.environ.get(CORPUS_ENV, ROOT.parent / "shared" / "corpus")).resolve()
SEEDS = Path(os.environ.get(SEEDS_ENV, ROOT.parent / "shared" / "seeds")).resolve()


#: True while pytest collects: the corpus and the seeds are never read then (see corpus_path)
_collecting = False


def pytest_collection(session: pytest.Session) -> None:
    global _collecting
    _collecting = True


def pytest_collection_finish(session: pytest.Session) -> None:
    global _collecting
    _collecting = False


def _missing(what: str, env: str) -> str:
    """Why a test that needs the shared folder ``what`` does not run: one text for them all."""
    folder = CORPUS if what == "corpus" else SEEDS
    return (f"the shared {what} is not at {folder}: set {env} to its folder "
            f"(../shared/{what} beside the clone); CI (the CI variable set) requires it")


def shared_missing(what: str, env: str) -> NoReturn:
    """Skip (fail under CI) a test that needs the shared folder ``what`` ("corpus", "seeds"),
    absent: one reason for every such test, naming the variable that says where it is."""
    reason = _missing(what, env)
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def _shared_file(what: str, env: str, folder: Path, name: str) -> Path:
    if _collecting:  # a skip there would be a collection error in a clone without ../shared
        raise RuntimeError(f"{what} file {name!r} asked for while pytest collects (a module's top level, "
                           f"a parametrize, a class body): parametrize by its name and ask for it in "
                           f"the test or a fixture")
    if not folder.is_dir():
        shared_missing(what, env)
    p = folder / name
    if not p.exists():
        raise FileNotFoundError(f"{p}: not in the {what} at {folder} ({env})")
    return p


def corpus_path(name: str) -> Path:
    """A file of the shared corpus, asked for when a test runs (never while pytest collects:
    a RuntimeError). The corpus absent: skipped (failed under CI); the corpus there but not
    this file: FileNotFoundError (an incomplete corpus is never skipped). The corpus's files
    by name, for a parametrize: ``tests/support/corpus.py``."""
    return _shared_file("corpus", CORPUS_ENV, CORPUS, name)


def seed_path(name: str) -> Path:
    """A file of the shared seeds (the hex dumps of the seed documents), as :func:`corpus_path`."""
    return _shared_file("seeds", SEEDS_ENV, SEEDS, name)


#: what makes a test slow (the ``slow`` marker, pyproject.toml; ``pytest -m "not slow"`` is the
#: quick tier): the fixtures it uses, directly or through another fixture (``spark``: every test
#: of tests/spark but those that call the data source without a session)...
SLOW_FIXTURES = {"mariadb_server": "starts the MariaDB server", "spark": "starts a SparkSession"}
#: ... the modules it is in
SLOW_PATHS = {"test_fuzz.py": "fuzz", "test_fuzz_regressions.py": "fuzz", "test_fuzz_index.py": "fuzz"}


def slow_reason(item: pytest.Item) -> str | None:
    """Why ``item`` is in the slow tier, or None: it starts a server (the MariaDB one, or a
    SparkSession), is parametrized by the corpus list (a test per file of the corpus,
    tests/support/corpus.py), fuzzes, or is marked ``slow`` or ``mariadb`` itself."""
    used = [why for name, why in SLOW_FIXTURES.items() if name in getattr(item, "fixturenames", ())]
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(v, CorpusName) for v in params.values()):
        used.append("a test per file of the corpus")
    tests = ROOT / "tests"
    rel = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
    used += [why for part, why in SLOW_PATHS.items() if part in rel]
    used += [m.name for m in item.iter_markers() if m.name in ("slow", "mariadb")]
    return ", ".join(used) or None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tests slow, by what they use (:func:`slow_reason`), and those that use the
    MariaDB server ``mariadb``."""
    for item in items:
        if slow_reason(item) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if "mariadb_server" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("mariadb"):
            item.add_marker(pytest.mark.mariadb)


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
