"""What a process loads before it reads (issue 37, item 9): ``import vecbinlog`` and the command
line's ``--help`` load none of NumPy, pyarrow and numba; ``info`` does not load ``cat``'s
writers. Checked in fresh processes, against their own ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import vecbinlog

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample" / "mariadb-bin.000001"
HEAVY = ("numpy", "pyarrow", "numba", "pandas", "sqlglot")


def _loaded(code: str) -> list[str]:
    """The modules of ``HEAVY`` and of vecbinlog that ``code`` leaves loaded, in a fresh process."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in " \
            f"{HEAVY!r} and '.' not in m or m.startswith('vecbinlog'))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


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
