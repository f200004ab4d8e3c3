"""Make data/sample/ again with a real MariaDB server (started here, apt-installed if missing).

    python data/make_sample.py

Writes mariadb-bin.000001 (the binlog of workload.sql), expected.json (what SELECT returns
at the end, the truth the tests compare with) and mariadb-binlog-vv.txt (what the vendor's
decoder prints for it). The server's timestamps differ on every run, so the binlog does too.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.support.mariadb import MariaDBServer, ensure_mariadb, run_mariadb_binlog_vv  # noqa: E402

OPTIONS = {"binlog_row_metadata": "FULL", "binlog_row_image": "FULL", "binlog_checksum": "CRC32"}


def statements(sql: str) -> list[str]:
    lines = [ln for ln in sql.splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def main() -> None:
    ensure_mariadb()
    out = HERE / "sample"
    with MariaDBServer(options=OPTIONS) as server:
        path = server.capture_binlog(*statements((out / "workload.sql").read_text()))
        shutil.copyfile(path, out / "mariadb-bin.000001")
        expected = {
            f"shop.{t}": [list(r) for r in server.query(f"SELECT * FROM shop.{t} ORDER BY id")]
            for t in ("customers", "orders")
        }
    rows = ",\n".join(
        f" {json.dumps(t)}: [\n" + ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in v) + "\n ]"
        for t, v in expected.items()
    )
    (out / "expected.json").write_text("{\n" + rows + "\n}\n")
    (out / "mariadb-binlog-vv.txt").write_text(run_mariadb_binlog_vv(out / "mariadb-bin.000001"), errors="surrogateescape")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
