"""What a process loads before it reads (issue 37, item 9): ``import vecbinlog`` and the command
line's ``--help`` load none of NumPy, pyarrow, numba and sqlglot; ``info`` does not load
``cat``'s writers; a read loads sqlglot only when a table's names must come from the DDL in
the log (issue 53: not for a log with ``binlog_row_metadata=FULL``, whose TABLE_MAPs name
their columns). Checked in fresh processes, against their own ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import vecbinlog

from .support import builder as b
from .support import reference as ref

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample" / "mariadb-bin.000001"
HEAVY = ("numpy", "pyarrow", "numba", "pandas", "sqlglot")
#: the sample's columns, as data/sample/workload.sql creates its tables
COLUMNS = {"shop.customers": ["id", "name", "country"],
           "shop.orders": ["id", "customer_id", "quantity", "price", "note"]}


def _probe(code: str) -> tuple[list[str], list[str]]:
    """What ``code`` prints, and the modules of ``HEAVY`` and of vecbinlog it leaves loaded, in a
    fresh process."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in " \
            f"{HEAVY!r} and '.' not in m or m.startswith('vecbinlog'))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    return lines[:-1], json.loads(lines[-1])


def _loaded(code: str) -> list[str]:
    """The modules of ``HEAVY`` and of vecbinlog that ``code`` leaves loaded, in a fresh process."""
    return _probe(code)[1]


def test_import_loads_the_errors_only():
    assert _loaded("import vecbinlog") == ["vecbinlog", "vecbinlog.errors"]
    assert _loaded("from vecbinlog import TruncatedWarning, __version__") == ["vecbinlog", "vecbinlog.errors"]


def test_the_api_is_there_at_first_use():
    loaded = _loaded(f"import vecbinlog\nassert vecbinlog.read_table({str(SAMPLE)!r}, 'shop.orders').num_rows == 7")
    assert {"numpy", "pyarrow", "numba", "vecbinlog.reader"} <= set(loaded)
    assert set(dir(vecbinlog)) >= {"open", "read_table", "read_pandas", "Binlog", "DecodeWarning"}
    assert vecbinlog.open is vecbinlog.Binlog


def test_help_loads_no_library():
    code = "import contextlib, io\nfrom vecbinlog.cli import main\n" \
           "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main(['--help'])\n" \
           "    except SystemExit:\n        pass"
    assert not [m for m in _loaded(code) if not m.startswith("vecbinlog")]


def test_info_does_not_load_the_writers_of_cat():
    code = f"import contextlib, io\nfrom vecbinlog.cli import main\n" \
           f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['info', {str(SAMPLE)!r}])"
    loaded = _loaded(code)
    assert "vecbinlog.cli.commands" in loaded and "numba" in loaded
    assert not {"vecbinlog.cli.lines", "vecbinlog.cli.writers", "vecbinlog.cli.text"} & set(loaded)


def _read_names(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The columns of each table of ``read_all()`` of ``path`` (metadata columns left out), and
    the modules the read loaded, in a fresh process."""
    printed, loaded = _probe(f"import json, vecbinlog\nwith vecbinlog.open({str(path)!r}) as log:\n"
                             f"    t = log.read_all()\n"
                             f"print(json.dumps({{k: [n for n in v.column_names if not n.startswith('_')] "
                             f"for k, v in t.items()}}))")
    return json.loads(printed[-1]), loaded


def _without_metadata(path: Path) -> None:
    """The sample written to ``path`` with every TABLE_MAP's optional metadata left out, as
    ``binlog_row_metadata=NO_LOG`` writes them: the column names are then in its CREATE TABLEs alone."""
    data = SAMPLE.read_bytes()
    r = ref.decode_bytes(data)
    fmt = r.formats[0]
    out = bytearray(data)
    maps = [(e, bounds) for e, bounds in zip(r.events, ref.walk_events(data)[0]) if e.logical_type == ref.TABLE_MAP_EVENT]
    assert len(maps) >= 2
    for e, bounds in reversed(maps):  # from the end: the offsets before stay
        tm = ref.read_table_map(data, fmt, bounds)
        out = b.replace_event(out, bounds, b.table_map_like(tm, data[e.pos:e.pos + e.size], checksum=fmt.has_crc32,
                                                            optional=()))
    path.write_bytes(b.fix_crcs(out))


def test_a_log_with_full_metadata_is_read_without_sqlglot():
    """The sample's TABLE_MAPs name their columns (FULL): its CREATE TABLEs are not parsed."""
    names, loaded = _read_names(SAMPLE)
    assert names == COLUMNS
    assert "sqlglot" not in loaded
    assert "vecbinlog.tables.ddl.scan" in loaded  # its statements' heads were read (the tables' lifetimes)


def test_names_from_the_ddl_load_sqlglot(tmp_path):
    """The same log without the metadata: the names come from its CREATE TABLEs, parsed."""
    path = tmp_path / "mariadb-bin.000001"
    _without_metadata(path)
    names, loaded = _read_names(path)
    assert names == COLUMNS
    assert "sqlglot" in loaded


def test_a_log_without_ddl_loads_no_ddl_module():
    """A log without DDL (MySQL 8.0, MINIMAL metadata: names as @N) loads none of the DDL modules."""
    path = Path(__file__).resolve().parent / "data" / "blackbeam__rust_mysql_common" / "minimal_row_metadata.000001"
    names, loaded = _read_names(path)
    assert names and all(n.startswith("@") for cols in names.values() for n in cols)
    assert not [m for m in loaded if m.startswith("vecbinlog.tables.ddl") or m == "sqlglot"]


_READ_FOUR_WAYS = """
import json, sys
import vecbinlog
from numba.core.dispatcher import Dispatcher
sample, other = sys.argv[1], sys.argv[2]
data = open(sample, "rb").read()
rows = []
for given in (sample, data, bytearray(data), [sample, other]):
    with vecbinlog.open(given) as log:
        rows.append(log.read_all()["shop.orders"].column("id").to_pylist())
kinds = {f"{name}.{d.py_func.__name__}": len(d.signatures) for name, m in list(sys.modules.items())
         if name.startswith("vecbinlog") for d in vars(m).values() if isinstance(d, Dispatcher) and d.signatures}
print(json.dumps({"rows": rows, "kinds": kinds}))
"""


def test_each_kernel_is_loaded_once_whatever_the_bytes_come_in():
    """numba loads (a first run: compiles) a kernel once per kind of arguments, and a writable
    array is another kind than a read-only one. A file's mapped bytes, ``bytes``, a
    ``bytearray`` and small files joined into one buffer are all handed to the kernels
    read-only (jit.read_only), so a process that reads the sample these four ways has each
    kernel it used loaded once (before: 7 of 14 twice, ~2 ms each of a first read)."""
    other = Path(__file__).resolve().parent / "data" / "blackbeam__rust_mysql_common" / "minimal_row_metadata.000001"
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _READ_FOUR_WAYS, str(SAMPLE), str(other)],
                          capture_output=True, text=True, check=True)
    got = json.loads(done.stdout)
    assert got["rows"] == [[1001, 1002, 1003, 1004, 1001, 1001, 1003]] * 4  # (as mariadb-binlog -vv lists them)
    assert len(got["kinds"]) > 10
    assert {k: n for k, n in got["kinds"].items() if n != 1} == {}


_LOCK_EVENTS = """
import json, sys
import llvmlite.binding.ffi as ffi
from numba.core import event
import vecbinlog
seen = []
class Listener(event.Listener):
    def on_start(self, ev): seen.append("start")
    def on_end(self, ev): seen.append("end")
import llvmlite.binding as llvm
before = list(ffi.lib._lock._cblist)
with event.install_listener("numba:llvm_lock", Listener()):
    with vecbinlog.open(sys.argv[1]) as log:
        log.read_all()  # kernels loaded from numba's cache (the suite has run them: cached)
    during_load = len(seen)
    llvm.get_default_triple()  # a call into LLVM after the loads
print(json.dumps({"restored": list(ffi.lib._lock._cblist) == before and len(before) > 0,
                  "during_load": during_load, "after": seen[during_load:]}))
"""


def test_kernels_load_without_numbas_llvm_lock_events():
    """jit._quiet_llvm_lock: while a kernel is loaded from numba's cache, numba's callbacks on
    llvmlite's lock (a "numba:llvm_lock" event at each call into LLVM, ~115 a kernel) are off
    (the OLTP file's 16 kernels: 68-71 -> 51-62 ms); they are back, the same ones, after: a
    call into LLVM then is one event again (start, end)."""
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _LOCK_EVENTS, str(SAMPLE)],
                          capture_output=True, text=True, check=True)
    got = json.loads(done.stdout)
    assert got["restored"] is True
    assert got["after"] and got["after"] == ["start", "end"] * (len(got["after"]) // 2)
    # the sample's read: 662 events (numba's calls into LLVM outside the loads), 4 460 with them
    assert got["during_load"] < 1500, got["during_load"]
