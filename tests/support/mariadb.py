"""A real MariaDB server for tests, and a parser for ``mariadb-binlog -vv`` output.

Tests compare vecbinlog's decoder with the vendor: they start a throwaway
``mariadbd`` (:class:`MariaDBServer`), run SQL, decode the binlog file it wrote
with ``mariadb-binlog -vv --base64-output=DECODE-ROWS`` (:func:`run_mariadb_binlog_vv`)
and turn the printed row images into Python values (:func:`parse_vv`,
:func:`vv_python_value`).

Facts about the ``-vv`` output of MariaDB 10.11 that the parser relies on
(all checked against a real server, see tests/test_support_mariadb.py):

* Row values are printed one per line:
  ``###   @3=-1 (255) /* TINYINT meta=0 nullable=1 is_null=0 */``.
* Integers are printed as the *signed* reading of the stored bytes; when that is
  negative the *unsigned* reading follows in parentheses: ``-1 (255)``.  The
  tool does this for every integer column, signed or not (it ignores the
  column's signedness, even with binlog_row_metadata=FULL).
* FLOAT is printed with C ``%-20g`` (6 significant digits, padded with spaces),
  DOUBLE with ``%.20g`` (exact).
* String-like values (CHAR, VARCHAR, BINARY, TEXT, BLOB, also DATETIME & co.)
  are quoted with ``'``.  Inside the quotes only bytes 0x00-0x1f are escaped, as
  ``\\xNN`` (two lowercase hex digits).  Everything else, including ``'``,
  ``\\``, 0x7f and all bytes >= 0x80, is written raw.  So the text is not
  UTF-8 in general, and a value holding the four characters ``\\x0a`` prints the
  same as one holding a newline (the only ambiguity).
* Rows events of one statement are buffered: when a statement's rows span
  several events, the tool prints all their headers first and then all the
  row images, after the last event (the one with STMT_END_F).  The
  ``# at N`` lines are likewise not next to their headers (an Annotate_rows
  header comes after the following Table_map's ``# at``).  Each event still has
  exactly one ``# at`` line and one header line, both in file order, so they
  are matched first-in first-out.
* With binlog_row_image=MINIMAL only some columns are printed (before image:
  the primary key; after image and INSERT: the columns that were set).
* With binlog_checksum=NONE the header has no ``CRC32 0x...`` part.
"""

from __future__ import annotations

import collections
import ctypes
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import pymysql

# --------------------------------------------------------------------------
# Finding / installing the server
# --------------------------------------------------------------------------

_TOOLS = ("mariadbd", "mariadb-install-db", "mariadb-binlog")
_EXTRA_DIRS = ("/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/mysql/bin")
_apt_updated = False


def find_tool(name: str) -> str | None:
    """Path of a MariaDB program; also looks in sbin dirs that a non-root PATH lacks."""
    found = shutil.which(name)
    if found:
        return found
    for d in _EXTRA_DIRS:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def _missing_tools() -> list[str]:
    return [t for t in _TOOLS if find_tool(t) is None]


def _run_apt(args: list[str]) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-4000:]
        raise RuntimeError(f"{' '.join(args)} failed with exit code {proc.returncode}:\n{tail}")


def ensure_mariadb() -> dict[str, str]:
    """Return paths of mariadbd, mariadb-install-db and mariadb-binlog, installing them if needed.

    When a tool is missing and we are root on a Debian-like system, runs
    ``apt-get update`` (once per process) and
    ``apt-get install -y mariadb-server mariadb-client``.  While installing, a
    temporary ``/usr/sbin/policy-rc.d`` stops the package from starting a
    system-wide server.  Raises RuntimeError when the tools cannot be had.
    """
    global _apt_updated
    missing = _missing_tools()
    if missing:
        apt = shutil.which("apt-get")
        if os.geteuid() != 0 or apt is None:
            why = "not running as root" if os.geteuid() != 0 else "apt-get not found"
            raise RuntimeError(
                f"MariaDB tools not found: {', '.join(missing)}; cannot install them ({why}). "
                "Install mariadb-server and mariadb-client (apt-get install mariadb-server mariadb-client)."
            )
        policy = Path("/usr/sbin/policy-rc.d")
        made_policy = False
        try:
            if not policy.exists():
                policy.write_text("#!/bin/sh\nexit 101\n")
                policy.chmod(0o755)
                made_policy = True
            if not _apt_updated:
                _run_apt([apt, "update"])
                _apt_updated = True
            _run_apt([apt, "install", "-y", "mariadb-server", "mariadb-client"])
        finally:
            if made_policy:
                policy.unlink(missing_ok=True)
        missing = _missing_tools()
        if missing:
            raise RuntimeError(f"MariaDB tools still missing after apt-get install: {', '.join(missing)}")
    return {t: find_tool(t) for t in _TOOLS}  # type: ignore[misc]


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------

_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 60.0
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Small-footprint defaults; keys use '_' and may be overridden by `options`.
_DEFAULT_OPTIONS: dict[str, str] = {
    "server_id": "1",
    "binlog_format": "ROW",
    "innodb_buffer_pool_size": "64M",
    "innodb_log_file_size": "16M",
    "innodb_log_buffer_size": "4M",
    "innodb_use_native_aio": "0",  # io_uring/libaio often fail in containers
    "innodb_flush_log_at_trx_commit": "2",
    "sync_binlog": "0",
    "key_buffer_size": "1M",
    "max_connections": "32",
    "table_open_cache": "200",
    "performance_schema": "OFF",
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_general_ci",
}


def _pdeathsig_hook() -> Callable[[], None] | None:
    """A preexec_fn making the kernel SIGTERM mariadbd if the test process dies without stopping it.

    (PR_SET_PDEATHSIG fires when the *thread* that started the server exits;
    tests start servers from the main thread.)
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, int(signal.SIGTERM))  # 1 == PR_SET_PDEATHSIG


#: When set, every server copies its binlog files into a new folder under this one when it
#: stops: the MariaDB workloads of the tests, kept to compare two versions' output on them.
KEEP_BINLOGS_ENV = "VECBINLOG_KEEP_BINLOGS"


class MariaDBServer:
    """A throwaway mariadbd on a unix socket in a temp dir.

    The binary log goes to ``<workdir>/binlog/mysql-bin.NNNNNN`` (ROW format,
    server id 1).  `options` are extra ``--name=value`` server options (e.g.
    ``{"binlog_row_metadata": "FULL"}``), overriding the small-memory defaults.
    With ``workdir=None`` a temp dir is created and removed by :meth:`stop`; a
    given workdir is left in place.

    Every :meth:`execute` / :meth:`query` call opens a *fresh* connection, so
    session variables that are initialised from globals at connect time
    (binlog_row_image, binlog_format, ...) always follow the latest
    :meth:`set_global`.  ``SET SESSION`` inside one execute() call applies to the
    later statements of that same call only.
    """

    def __init__(self, workdir: Path | None = None, options: dict[str, str] | None = None):
        self._own_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="vecbinlog-mariadb-")) if workdir is None else Path(workdir)
        self.options = dict(options or {})
        self.datadir = self.workdir / "data"
        self.binlog_dir = self.workdir / "binlog"
        self.error_log = self.workdir / "mariadbd.err"
        self.pid_file = self.workdir / "mariadbd.pid"
        self._sock_dir: Path | None = None
        sock = self.workdir / "mariadbd.sock"
        if len(str(sock)) > 100:  # sun_path is limited to 108 bytes
            self._sock_dir = Path(tempfile.mkdtemp(prefix="vbl-sock-"))
            sock = self._sock_dir / "m.sock"
        self.socket = sock
        self._proc: subprocess.Popen[bytes] | None = None

    # -- lifecycle ---------------------------------------------------------

    def _server_args(self) -> list[str]:
        opts = dict(_DEFAULT_OPTIONS)
        for k, v in self.options.items():
            opts[k.replace("-", "_")] = str(v)
        return [f"--{k.replace('_', '-')}={v}" for k, v in opts.items()]

    def start(self) -> "MariaDBServer":
        """Initialise the data dir and start mariadbd; waits (30 s max) until it accepts connections."""
        if self._proc is not None:
            return self
        tools = ensure_mariadb()
        as_root = ["--user=root"] if os.geteuid() == 0 else []
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.binlog_dir.mkdir(exist_ok=True)
        if not (self.datadir / "mysql").is_dir():
            install = subprocess.run(
                [
                    tools["mariadb-install-db"],
                    "--no-defaults",
                    "--auth-root-authentication-method=normal",
                    f"--datadir={self.datadir}",
                    "--skip-test-db",
                    "--skip-name-resolve",
                    *as_root,
                    *[a for a in self._server_args() if a.startswith("--innodb")],
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if install.returncode != 0:
                self.stop()
                raise RuntimeError(
                    f"mariadb-install-db failed ({install.returncode}):\n{install.stdout[-3000:]}\n{install.stderr[-3000:]}"
                )
        args = [
            tools["mariadbd"],
            "--no-defaults",
            *as_root,
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.error_log}",
            "--skip-networking",
            f"--log-bin={self.binlog_dir / 'mysql-bin'}",
            *self._server_args(),
        ]
        with open(self.workdir / "mariadbd.out", "ab") as out:
            self._proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_pdeathsig_hook()
            )
        deadline = time.monotonic() + _START_TIMEOUT
        last_err: Exception | None = None
        while True:
            if self._proc.poll() is not None:
                self._fail_start(f"mariadbd exited with code {self._proc.returncode}")
            if self.socket.exists():
                try:
                    self._connect().close()
                    return self
                except pymysql.err.OperationalError as e:
                    last_err = e
            if time.monotonic() > deadline:
                self._fail_start(f"mariadbd not ready after {_START_TIMEOUT:.0f} s (last error: {last_err})")
            time.sleep(0.05)

    def _fail_start(self, why: str) -> None:
        log = self.error_log.read_text(errors="replace")[-6000:] if self.error_log.exists() else "(no error log)"
        out = self.workdir / "mariadbd.out"
        extra = out.read_text(errors="replace")[-2000:] if out.exists() else ""
        self.stop()
        raise RuntimeError(f"{why}\n--- error log ---\n{log}\n--- output ---\n{extra}")

    def stop(self) -> None:
        """Shut the server down cleanly (SIGTERM, then wait) and remove owned temp dirs."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=_STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._sock_dir is not None:
            shutil.rmtree(self._sock_dir, ignore_errors=True)
            self._sock_dir = None
        keep = os.environ.get(KEEP_BINLOGS_ENV)
        if keep and self.binlog_dir.is_dir():  # the workloads' binlogs, for bench/compare_checkouts.py
            dest = Path(tempfile.mkdtemp(prefix="server-", dir=Path(keep).mkdir(parents=True, exist_ok=True) or keep))
            for f in sorted(self.binlog_dir.glob("mysql-bin.[0-9]*")):
                shutil.copy2(f, dest / f.name)
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> "MariaDBServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- SQL ---------------------------------------------------------------

    def _connect(self, database: str | None = None, multi_statements: bool = False) -> pymysql.connections.Connection:
        return pymysql.connect(
            unix_socket=str(self.socket),
            user="root",
            password="",
            database=database,
            charset="utf8mb4",
            autocommit=True,
            connect_timeout=5,
            client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS if multi_statements else 0,
        )

    def connect(self, database: str | None = None, multi_statements: bool = False) -> pymysql.connections.Connection:
        """A new autocommit connection (the caller closes it); ``multi_statements``: one
        ``execute`` may send several statements separated by ``;``, their results read in turn
        with ``cursor.nextset()`` (bench/shapegen.py sends single-row workloads so)."""
        return self._connect(database, multi_statements)

    def execute(self, *sql: str, database: str | None = None) -> None:
        """Run statements in order on one fresh autocommit connection."""
        conn = self._connect(database)
        try:
            with conn.cursor() as cur:
                for stmt in sql:
                    cur.execute(stmt)
        finally:
            conn.close()

    def query(self, sql: str, database: str | None = None) -> list[tuple]:
        """Rows of one query as pymysql returns them (int, Decimal, str, bytes, datetime, ...)."""
        conn = self._connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall())
        finally:
            conn.close()

    def set_global(self, name: str, value: str) -> None:
        """SET GLOBAL name = value (numbers, DEFAULT, ON, OFF raw; anything else as a quoted string).

        Note: changing binlog_checksum makes the server rotate to a new binlog file.
        """
        if not _NAME_RE.match(name):
            raise ValueError(f"bad variable name {name!r}")
        val = str(value)
        if re.fullmatch(r"-?\d+|DEFAULT|ON|OFF", val, re.IGNORECASE):
            lit = val
        else:
            lit = pymysql.converters.escape_string(val).join("''")
        self.execute(f"SET GLOBAL {name} = {lit}")

    def flush_binary_logs(self) -> None:
        """Close the current binlog file and start the next one."""
        self.execute("FLUSH BINARY LOGS")

    def binlog_files(self) -> list[Path]:
        """Absolute paths of the binlog files, oldest first (SHOW BINARY LOGS)."""
        base = Path(self.query("SELECT @@log_bin_basename")[0][0]).parent
        return [base / row[0] for row in self.query("SHOW BINARY LOGS")]

    def current_binlog(self) -> Path:
        """The binlog file the server is writing now."""
        return self.binlog_files()[-1]

    def capture_binlog(self, *sql: str, database: str | None = None) -> Path:
        """Flush, run `sql` (one execute() call), flush again; return the file holding just that workload."""
        self.flush_binary_logs()
        path = self.current_binlog()
        self.execute(*sql, database=database)
        self.flush_binary_logs()
        return path


def copy_binlogs(files: list[Path], folder: Path) -> tuple[list[Path], Path]:
    """Copies of a server's binlog files in ``folder``, with a ``mysql-bin.index`` listing them
    as the server does (``./name``): (copies, index)."""
    copies = []
    for f in files:
        shutil.copy(f, folder / f.name)
        copies.append(folder / f.name)
    index = folder / "mysql-bin.index"
    index.write_text("".join(f"./{f.name}\n" for f in copies))
    return copies, index


def hexlit(data: bytes) -> str:
    """SQL literal for arbitrary bytes: X'...' (X'' for empty)."""
    return f"X'{data.hex()}'"


# --------------------------------------------------------------------------
# Parsing `mariadb-binlog -vv --base64-output=DECODE-ROWS`
# --------------------------------------------------------------------------


@dataclass
class VVValue:
    """One printed column value of a row image."""

    index: int  # 1-based column number (@N)
    text: str | None  # printed value text (FLOAT padding stripped); None when printed as NULL
    typestr: str  # inside /* ... */ before meta=, e.g. "INT", "VARSTRING(60)", "LONGINT"
    meta: int
    nullable: bool
    is_null: bool


@dataclass
class VVRowImage:
    """One row image (SET or WHERE part) printed for a rows event.

    `pos`/`end_log_pos` are the byte range of the rows event.  When a statement's
    rows were split over several rows events, mariadb-binlog prints all images
    after the last event, so which event an image came from is unknown: then
    `pos` is the first event's start, `end_log_pos` the last event's end and
    `event_positions` lists every event's start (it is ``(pos,)`` normally).
    """

    pos: int
    end_log_pos: int
    table: str  # "db.table" without backticks
    kind: str  # "insert" | "update_before" | "update_after" | "delete"
    values: list[VVValue]  # only the printed columns (MINIMAL images print fewer)
    event_positions: tuple[int, ...] = field(default=())

    def as_dict(self) -> dict[int, object]:
        """{column number: vv_python_value(...)} for the printed columns."""
        return {v.index: vv_python_value(v) for v in self.values}


def run_mariadb_binlog_vv(path: Path, extra_args: tuple[str, ...] | list[str] = ()) -> str:
    """Output of ``mariadb-binlog -vv --base64-output=DECODE-ROWS PATH``.

    The bytes are decoded as UTF-8 with ``surrogateescape``, so raw non-UTF-8
    bytes of values survive and :func:`vv_python_value` can recover them.
    """
    tool = find_tool("mariadb-binlog") or ensure_mariadb()["mariadb-binlog"]
    proc = subprocess.run(
        [tool, "--no-defaults", "-vv", "--base64-output=DECODE-ROWS", *extra_args, str(path)],
        capture_output=True,
        timeout=300,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")
        raise RuntimeError(f"mariadb-binlog failed on {path} (exit {proc.returncode}):\n{err}")
    return proc.stdout.decode("utf-8", "surrogateescape")


_AT_RE = re.compile(r"^# at (\d+)$")
_HEADER_RE = re.compile(
    r"^#\d{6} +\d{1,2}:\d{2}:\d{2} server id \d+ +end_log_pos (\d+)(?: CRC32 0x[0-9a-fA-F]+)? *\t(.*)$"
)
_ROWS_EVENT_RE = re.compile(r"^(?:Write|Update|Delete)_\w*rows\w*: table id \d+( flags: STMT_END_F)?")
_IDENT = r"`((?:[^`]|``)*)`"
_IMAGE_START_RE = re.compile(rf"^### (INSERT INTO|UPDATE|DELETE FROM) {_IDENT}\.{_IDENT}$")
_VALUE_RE = re.compile(r"^###   @(\d+)=(.*) /\* (.*?) meta=(\d+) nullable=([01]) is_null=([01]) \*/$")


def parse_vv(text: str | bytes) -> list[VVRowImage]:
    """Row images of ``mariadb-binlog -vv --base64-output=DECODE-ROWS`` output, in printed order."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    images: list[VVRowImage] = []
    pending_at: collections.deque[int] = collections.deque()
    prev_end: int | None = None
    group: list[tuple[int, int]] = []  # (pos, end) of the rows events printed together
    group_closed = True  # saw STMT_END_F: the next rows event starts a new group
    in_images = False  # between a STMT_END_F header and the next '# at' / header
    stmt = ""
    table = ""
    current: VVRowImage | None = None

    for lineno, line in enumerate(text.split("\n"), 1):
        m = _AT_RE.match(line)
        if m:
            pending_at.append(int(m.group(1)))
            in_images = False
            continue
        m = _HEADER_RE.match(line)
        if m:
            in_images = False
            end = int(m.group(1))
            # Without '# at' lines (--skip-print-row-event-positions) events are contiguous.
            pos = pending_at.popleft() if pending_at else (prev_end if prev_end is not None else 4)
            prev_end = end
            rm = _ROWS_EVENT_RE.match(m.group(2))
            if rm:
                if group_closed:
                    group, group_closed = [], False
                group.append((pos, end))
                if rm.group(1):
                    group_closed = in_images = True
            continue
        if not in_images or not line.startswith("###"):
            continue
        m = _IMAGE_START_RE.match(line)
        if m:
            stmt = m.group(1)
            table = f"{m.group(2).replace('``', '`')}.{m.group(3).replace('``', '`')}"
            current = None
            continue
        if line in ("### WHERE", "### SET"):
            if not stmt:
                raise ValueError(f"line {lineno}: {line!r} without INSERT/UPDATE/DELETE")
            if stmt == "UPDATE":
                kind = "update_before" if line == "### WHERE" else "update_after"
            else:
                kind = "delete" if stmt == "DELETE FROM" else "insert"
            current = VVRowImage(
                pos=group[0][0],
                end_log_pos=group[-1][1],
                table=table,
                kind=kind,
                values=[],
                event_positions=tuple(p for p, _ in group),
            )
            images.append(current)
            continue
        m = _VALUE_RE.match(line)
        if m:
            if current is None:
                raise ValueError(f"line {lineno}: value outside a row image")
            is_null = m.group(6) == "1"
            raw = m.group(2).rstrip(" ")
            current.values.append(
                VVValue(
                    index=int(m.group(1)),
                    text=None if is_null else raw,
                    typestr=m.group(3),
                    meta=int(m.group(4)),
                    nullable=m.group(5) == "1",
                    is_null=is_null,
                )
            )
            continue
        raise ValueError(f"line {lineno}: unexpected row image line {line[:200]!r} (is this -vv output?)")
    return images


class VVInt(NamedTuple):
    """Both readings of a printed integer: ``-1 (255)`` -> VVInt(signed=-1, unsigned=255).

    mariadb-binlog does not know a column's signedness, so pick the reading
    that matches the column: ``v.value(unsigned=True)``.
    """

    signed: int
    unsigned: int

    def value(self, unsigned: bool) -> int:
        return self.unsigned if unsigned else self.signed


INT_BITS: dict[str, int] = {"TINYINT": 8, "SHORTINT": 16, "MEDIUMINT": 24, "INT": 32, "LONGINT": 64}
_INT_TEXT_RE = re.compile(r"^(-?\d+)(?: \((\d+)\))?$")
_STRING_TYPE_RE = re.compile(r"^(?:STRING|VARSTRING)\(\d+\)$|^(?:TINY|MEDIUM|LONG)?BLOB/(?:TINY|MEDIUM|LONG)?TEXT$")
_ESCAPE_RE = re.compile(rb"\\x([01][0-9a-f])")


def vv_unescape(quoted: str) -> bytes:
    """Bytes of a printed quoted value: strip the quotes and turn ``\\xNN`` (NN < 0x20) back into bytes.

    The tool writes every other byte raw; :func:`run_mariadb_binlog_vv` keeps raw
    bytes in the str via surrogateescape, which this undoes.  Ambiguity: data
    that literally contains ``\\x00``..``\\x1f`` as text comes back as one byte.
    """
    if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
        raise ValueError(f"not a quoted value: {quoted[:80]!r}")
    raw = quoted[1:-1].encode("utf-8", "surrogateescape")
    return _ESCAPE_RE.sub(lambda m: bytes([int(m.group(1), 16)]), raw)


def vv_python_value(v: VVValue) -> object:
    """Python value of a printed column, to compare with a decoded Arrow value.

    * NULL -> None
    * TINYINT/SHORTINT/MEDIUMINT/INT/LONGINT -> :class:`VVInt` (signed and unsigned reading)
    * FLOAT/DOUBLE -> float (FLOAT is rounded to 6 significant digits by the
      tool; compare with :func:`vv_float_text`)
    * STRING/VARSTRING/*BLOB/*TEXT -> bytes, exactly as stored (CHAR loses
      trailing spaces in the binlog; see :func:`vv_unescape` for the one ambiguity)
    * anything else -> the printed text unchanged
    """
    if v.is_null or v.text is None:
        return None
    t = v.typestr
    if t in INT_BITS:
        m = _INT_TEXT_RE.match(v.text)
        if not m:
            raise ValueError(f"bad integer text {v.text!r} for {t}")
        signed = int(m.group(1))
        bits = INT_BITS[t]
        unsigned = signed % (1 << bits)
        if m.group(2) is not None and int(m.group(2)) != unsigned:
            raise ValueError(f"inconsistent integer text {v.text!r} for {t}")
        if (signed < 0) != (m.group(2) is not None) or not -(1 << (bits - 1)) <= signed < (1 << (bits - 1)):
            raise ValueError(f"unexpected integer text {v.text!r} for {t}")
        return VVInt(signed, unsigned)
    if t in ("FLOAT", "DOUBLE"):
        return float(v.text)
    if _STRING_TYPE_RE.match(t):
        return vv_unescape(v.text)
    return v.text


def vv_float_text(x: float) -> str:
    """How mariadb-binlog prints a FLOAT column holding `x` (C ``%g``, padding stripped)."""
    return f"{x:g}"
