"""The API as pandas and pyarrow users call it: what ``import vecbinlog`` loads, the inputs
``open()`` accepts (and the errors for the rest), progress bars."""

from __future__ import annotations

import subprocess
import sys

import vecbinlog

from .conftest import DATA

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


def test_import_does_not_load_pandas_or_sqlglot():
    """pandas is imported by read_pandas, sqlglot by the first DDL statement parsed."""
    code = ("import sys, vecbinlog; loaded = [m for m in ('pandas', 'sqlglot') if m in sys.modules]; "
            "print(loaded); vecbinlog.read_pandas(sys.argv[1], 'shop.orders'); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(SAMPLE)], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "True"]
    assert vecbinlog.read_pandas(SAMPLE, "shop.orders")["id"].tolist() == [1001, 1002, 1003, 1004, 1001, 1001, 1003]
