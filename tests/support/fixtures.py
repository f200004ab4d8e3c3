"""pytest fixtures around :class:`tests.support.mariadb.MariaDBServer`.

Import them where needed (a conftest or a test module)::

    from tests.support.fixtures import mariadb_server, mariadb_globals  # noqa: F401

A missing/broken MariaDB is a test *failure*, unless the environment variable
VECBINLOG_ALLOW_SKIP_MARIADB=1 turns it into a skip.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from tests.support.mariadb import MariaDBServer, ensure_mariadb

ALLOW_SKIP_ENV = "VECBINLOG_ALLOW_SKIP_MARIADB"

# Server options of the session server (also the globals tests start from).
SERVER_GLOBALS: dict[str, str] = {
    "binlog_row_metadata": "FULL",
    "binlog_row_image": "FULL",
    "binlog_checksum": "CRC32",
    "log_bin_compress": "OFF",
}


def require_mariadb() -> None:
    """ensure_mariadb(), turning failure into pytest.skip only when VECBINLOG_ALLOW_SKIP_MARIADB=1."""
    try:
        ensure_mariadb()
    except RuntimeError as e:
        if os.environ.get(ALLOW_SKIP_ENV) == "1":
            pytest.skip(f"MariaDB unavailable ({ALLOW_SKIP_ENV}=1): {e}")
        raise


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[MariaDBServer]:
    """One MariaDB server for the whole session (temp dir removed at the end).

    Tests that change globals should use :func:`mariadb_globals` so the next
    test sees the values of SERVER_GLOBALS again.
    """
    require_mariadb()
    server = MariaDBServer(options=dict(SERVER_GLOBALS))
    try:
        server.start()
    except RuntimeError as e:
        if os.environ.get(ALLOW_SKIP_ENV) == "1":
            pytest.skip(f"MariaDB did not start ({ALLOW_SKIP_ENV}=1): {e}")
        raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mariadb_globals(mariadb_server: MariaDBServer) -> Iterator[Callable[..., None]]:
    """``set_globals(binlog_row_image="MINIMAL", ...)``; every changed global gets its old value back after the test."""
    original: dict[str, str] = {}

    def set_globals(**values: str) -> None:
        for name, value in values.items():
            if name not in original:
                original[name] = str(mariadb_server.query(f"SELECT @@GLOBAL.{name}")[0][0])
            mariadb_server.set_global(name, value)

    yield set_globals
    for name, value in original.items():
        mariadb_server.set_global(name, value)
