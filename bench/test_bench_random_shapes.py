"""Random shapes (bench/random_shapes.py): a tiny case of each workload kind, written by a real
MariaDB server and read back.

    pytest bench/test_bench_random_shapes.py [--benchmark-enable]

Each case is drawn from a fixed seed as ``random_shapes.py`` draws it, shrunk to about 1 MB and
rotated every 512 KiB (several files). The row images vecbinlog decodes, per table and change
type, by ``read_all``, ``iter_tables`` and a ``read_table`` loop, must equal what the server
said each statement did (rows affected), and each table's inserts less its deletes must equal
the server's ``SELECT COUNT(*)``. With ``--benchmark-enable``, ``read_all`` of each case is timed.
"""

from __future__ import annotations

import dataclasses

import pytest

from bench import random_shapes, shapegen
from tests.support.mariadb import MariaDBServer, ensure_mariadb
from vecbinlog.collations import CHARSET_CODECS

SEED = 20261128
CASE_BYTES = 1_000_000


@pytest.mark.parametrize("charset", sorted(shapegen.WORDS))
def test_words_encode_in_their_charset(charset):
    """Every word the generator writes to a column of ``charset`` has a character there (the
    server would refuse the row in strict mode), and takes at most MAXLEN bytes a character."""
    codec = CHARSET_CODECS[charset]
    for word in shapegen.WORDS[charset]:
        assert len(word.encode(codec)) <= shapegen.MAXLEN[charset] * len(word), word


def test_draw_case_depends_on_the_seed_alone():
    one, two = shapegen.draw_case(SEED, 3), shapegen.draw_case(SEED, 3)
    assert [t.create() for t in one.tables] == [t.create() for t in two.tables]
    assert [t.row(0) for t in one.tables] == [t.row(0) for t in two.tables]
    assert one.describe() == two.describe()
    assert [t.create() for t in shapegen.draw_case(SEED + 1, 3).tables] != [t.create() for t in one.tables]


def test_every_family_is_drawn():
    """Over 30 cases (a run's default), every type family has columns."""
    seen = {c.family for k in range(30) for t in shapegen.draw_case(SEED, k).tables for c in t.columns}
    assert seen == set(shapegen.FAMILIES)


def _first_case(workload: str) -> shapegen.CaseSpec:
    k = next(k for k in range(200) if shapegen.draw_case(SEED, k).workload == workload)
    return dataclasses.replace(shapegen.draw_case(SEED, k), target_bytes=CASE_BYTES,
                               rotation=shapegen.ROTATION_BYTES[0])


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, tuple]:
    """{workload: (folder, manifest, the server's COUNT(*) per table)}."""
    ensure_mariadb()
    out = {}
    with MariaDBServer(options=random_shapes.SERVER_OPTIONS) as server:
        for workload in shapegen.WORKLOADS:
            spec = _first_case(workload)
            folder = tmp_path_factory.mktemp(workload)
            manifest = shapegen.write_case(server, spec, folder)
            rows = {f"{shapegen.DB}.{t.name}": server.query(f"SELECT COUNT(*) FROM {shapegen.DB}.{t.name}")[0][0]
                    for t in spec.tables}
            out[workload] = (folder, manifest, rows)
    return out


@pytest.mark.mariadb
@pytest.mark.parametrize("workload", list(shapegen.WORKLOADS))
@pytest.mark.parametrize("method", list(random_shapes.READS))
def test_images_are_what_the_server_wrote(written, workload, method):
    folder, manifest, rows = written[workload]
    assert len(manifest["files"]) > 1  # rotated: the case spans files
    counts: dict = {}
    images = random_shapes.READS[method](str(folder), None, counts)
    assert random_shapes.check_counts(manifest["images"], counts) == []
    assert images == sum(sum(c.values()) for c in manifest["images"].values()) > 0
    for table, n in rows.items():
        got = counts.get(table, dict.fromkeys(random_shapes.CHANGE_TYPES, 0))
        assert got["insert"] - got["delete"] == n, table


@pytest.mark.mariadb
@pytest.mark.parametrize("workload", list(shapegen.WORKLOADS))
def test_random_case_read_all(benchmark, written, workload):
    folder, manifest, _ = written[workload]
    expected = sum(sum(c.values()) for c in manifest["images"].values())
    got = benchmark.pedantic(lambda: random_shapes.READS["read_all"](str(folder), None), rounds=3, iterations=1,
                             warmup_rounds=1)
    assert got == expected
    benchmark.extra_info.update(row_images=expected, files=len(manifest["files"]), mb=manifest["bytes"] / 1e6,
                                description=random_shapes.describe(manifest))
