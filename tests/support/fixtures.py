"""The pytest fixtures that several test modules share: the MariaDB server
(:class:`tests.support.mariadb.MariaDBServer`) and its globals, moto's S3 server, the tests'
SparkSession, the net-changes workload, the timed archive.

tests/conftest.py imports them, which makes them available to every test module; a test
module asks for one by name and never imports it.

A missing/broken MariaDB is a test *failure*, unless the environment variable
VECBINLOG_ALLOW_SKIP_MARIADB=1 turns it into a skip. A missing pyspark skips the Spark tests
(:func:`require_pyspark`), except under CI.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable, Iterator

import pytest

from .mariadb import MariaDBServer, ensure_mariadb
from .networkload import run_net_workload
from .engines import write_minimal, write_spread
from .timed import write_timed_archive

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


# -- moto's S3 server ----------------------------------------------------------------------------
#: the credentials a deployment would give, in the environment while the S3 server runs
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                  "AWS_EC2_METADATA_DISABLED": "true"}


#: the requests the S3 server of the ``s3`` fixture answered: (method, path, Range header or None)
S3_REQUESTS: list[tuple[str, str, str | None]] = []


def _logged(app):
    """The server's WSGI ``app``, each request put in :data:`S3_REQUESTS` first."""

    def logged(environ, start_response):
        S3_REQUESTS.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), environ.get("HTTP_RANGE")))
        return app(environ, start_response)

    return logged


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server on 127.0.0.1 (a free port), a bucket ``binlogs``, credentials in the
    environment (as a deployment gives them); yields (boto3 client, URI query, endpoint).
    The requests it answers are in :data:`S3_REQUESTS`."""
    pytest.importorskip("moto.server")
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as env:
        for k, v in S3_CREDENTIALS.items():
            env.setenv(k, v)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        server._server.app = _logged(server._server.app)  # werkzeug's server calls its ``app`` per request
        try:
            host, port = server.get_host_and_port()
            endpoint = f"{host}:{port}"
            client = boto3.client("s3", endpoint_url=f"http://{endpoint}")
            client.create_bucket(Bucket="binlogs")
            yield client, f"?endpoint_override={endpoint}&scheme=http&region=us-east-1", endpoint
        finally:
            server.stop()


# -- Spark -----------------------------------------------------------------------------------
def require_pyspark() -> None:
    """Called at the top of a Spark test module: without pyspark, its tests are skipped, except
    in CI (the ``CI`` environment variable), where a missing pyspark is a failure."""
    try:
        importlib.import_module("pyspark")
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("pyspark is not installed (pip install -e '.[test,spark]')", allow_module_level=True)


@pytest.fixture(scope="session")
def spark():
    """A local SparkSession with 2 cores; its Python workers import vecbinlog from this tree."""
    from vecbinlog import spark as vspark

    from ..conftest import ROOT  # here: tests/conftest.py imports this module

    env = {
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("vecbinlog-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    vspark.register(session)
    try:
        yield session
    finally:
        session.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# -- the net-changes workload ------------------------------------------------------------------
@pytest.fixture(scope="module")
def net_workload(mariadb_server, tmp_path_factory):
    """The net-changes workload (tests/support/networkload.py): its files (copied), and the
    server's rows, GTID and position at A, B and the end."""
    return run_net_workload(mariadb_server, tmp_path_factory.mktemp("net"))


@pytest.fixture(scope="session")
def timed(mariadb_server, tmp_path_factory):
    """(binlog copies, index location) of the timed archive (tests/support/timed.py)."""
    return write_timed_archive(mariadb_server, tmp_path_factory.mktemp("timed"))


@pytest.fixture(scope="session")
def spread(mariadb_server, tmp_path_factory):
    """(binlog copies, index location) of the spread archive (tests/support/engines.py)."""
    return write_spread(mariadb_server, tmp_path_factory.mktemp("spread"))


@pytest.fixture(scope="session")
def minimal(mariadb_server, tmp_path_factory):
    """(the workload's run, binlog copies, index location) of the table-changes workload with
    MINIMAL row images (tests/support/engines.py)."""
    return write_minimal(mariadb_server, tmp_path_factory.mktemp("minimal"))
