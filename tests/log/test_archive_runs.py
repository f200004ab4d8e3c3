"""An archive of many small files, as production rotates them: a real MariaDB server writes
small single-row transactions over several tables into files of 4 KiB (``max_binlog_size``).

* ``read_all`` of the set gives every row image ``mariadb-binlog -vv`` prints, each at the file
  and position it prints it at, and replaying it by key gives the server's ``SELECT``;
* a table's rows come in a few batches, not one per file (its small runs go on from file to
  file, their events gathered into one buffer);
* reading the tables one after another from one open log gives what separate reads give (the
  runs are planned once, by the second read);
* with a CRC32 changed in a later file, the read stops with ChecksumError at that event.
"""

from __future__ import annotations

import random
import shutil

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.log import logwalk

from ..support.mariadb import parse_vv, run_mariadb_binlog_vv

pytestmark = pytest.mark.mariadb

TABLES = 3
CHANGES = 400


@pytest.fixture(scope="module")
def archive(mariadb_server, tmp_path_factory):
    """(the binlog files of the workload, copied in log order, the server's rows by table)."""
    server = mariadb_server
    rnd = random.Random(20261127)
    sql = ["DROP DATABASE IF EXISTS arch", "CREATE DATABASE arch", "USE arch"]
    sql += [f"CREATE TABLE t{k} (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)" for k in range(TABLES)]
    ids = [[] for _ in range(TABLES)]
    for i in range(CHANGES):
        k = rnd.randrange(TABLES)
        r = rnd.random()
        if not ids[k] or r < 0.6:
            ids[k].append(i)
            sql.append(f"INSERT INTO t{k} VALUES ({i}, 'v{i}', {rnd.randint(-2**40, 2**40)})")
        elif r < 0.85:
            sql.append(f"UPDATE t{k} SET v = CONCAT(v, '+'), n = n + 1 WHERE id = {rnd.choice(ids[k])}")
        else:
            sql.append(f"DELETE FROM t{k} WHERE id = {ids[k].pop(rnd.randrange(len(ids[k])))}")
    saved = server.query("SELECT @@GLOBAL.max_binlog_size")[0][0]
    server.set_global("max_binlog_size", 4096)
    try:
        server.flush_binary_logs()
        first = len(server.binlog_files()) - 1
        server.execute(*sql)
        server.flush_binary_logs()
        files = server.binlog_files()[first:-1]
    finally:
        server.set_global("max_binlog_size", str(saved))
    folder = tmp_path_factory.mktemp("archive")
    copies = []
    for f in files:
        shutil.copy(f, folder / f.name)
        copies.append(folder / f.name)
    rows = {f"arch.t{k}": server.query(f"SELECT id, v, n FROM arch.t{k} ORDER BY id") for k in range(TABLES)}
    return copies, rows


def _replay(table: pa.Table) -> list[tuple]:
    state: dict[int, tuple] = {}
    for r in table.select(["id", "v", "n", "_change_type"]).to_pylist():
        if r["_change_type"] in ("insert", "update_postimage"):
            state[r["id"]] = (r["id"], r["v"], r["n"])
        elif r["_change_type"] == "delete":
            state.pop(r["id"], None)
    return [state[k] for k in sorted(state)]


def test_every_image_where_mariadb_binlog_prints_it(archive):
    files, rows = archive
    assert len(files) >= 20, len(files)  # the workload spans many small files
    printed = {}
    for f in files:
        for im in parse_vv(run_mariadb_binlog_vv(f)):
            if im.table.startswith("arch."):
                values = im.as_dict()
                printed.setdefault(im.table, []).append(
                    (f.name, im.pos, values[1].signed, values[2].decode(), values[3].signed))
    with vecbinlog.open(files) as log:
        tables = log.read_all()
    assert set(tables) == set(rows)
    for name, t in tables.items():
        ours = [(r["_log_file"], r["_log_pos"], r["id"], r["v"], r["n"])
                for r in t.select(["_log_file", "_log_pos", "id", "v", "n"]).to_pylist()]
        assert ours == printed[name], name
        assert _replay(t) == [tuple(r) for r in rows[name]], name


def test_a_tables_rows_come_in_few_batches(archive):
    files, _ = archive
    with vecbinlog.open(files) as log:
        counts: dict[str, int] = {}
        for name, _batch in log.iter_tables():
            counts[name] = counts.get(name, 0) + 1
    assert counts and all(n <= 2 for n in counts.values()), (len(files), counts)


def test_table_after_table_from_one_open_log(archive, monkeypatch):
    files, _ = archive
    with vecbinlog.open(files) as log:
        alone = {name: log.read_table(name) for name in ["arch.t0"]}
    walks = []
    steps = logwalk.LogWalk.steps

    def counted(self, *a, **k):
        walks.append(k.get("transactions", False))
        return steps(self, *a, **k)

    monkeypatch.setattr(logwalk.LogWalk, "steps", counted)
    with vecbinlog.open(files) as log:
        each = {name: log.read_table(name) for name in log.tables}
        again = log.read_table("arch.t0")
    monkeypatch.undo()
    with vecbinlog.open(files) as log:
        together = log.read_all()
    assert list(each) == list(together)
    for name in each:
        assert each[name].equals(together[name]), name
    assert again.equals(alone["arch.t0"]) and again.equals(each["arch.t0"])
    # log.tables plans the runs in its walk (the archive is under PLAN_ON_TABLES_BYTES): every
    # read decodes planned runs, the files are walked once
    assert walks == [True], walks


def test_checksum_error_in_a_later_file(archive, tmp_path):
    files, _ = archive
    copies = []
    for f in files:
        shutil.copy(f, tmp_path / f.name)
        copies.append(tmp_path / f.name)
    victim = copies[len(copies) // 2]
    printed = [im for im in parse_vv(run_mariadb_binlog_vv(victim)) if im.table.startswith("arch.")]
    pos = printed[0].pos  # the first rows event of a file in the middle
    data = bytearray(victim.read_bytes())
    data[pos + 30] ^= 0x01  # inside its row image
    victim.write_bytes(bytes(data))
    with pytest.raises(vecbinlog.ChecksumError) as caught:
        with vecbinlog.open(copies) as log:
            log.read_all()
    assert caught.value.offset == pos and caught.value.path.endswith(victim.name)
