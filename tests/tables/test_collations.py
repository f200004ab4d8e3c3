"""vecbinlog.collations: collation ids and character sets, checked against a live MariaDB server
(every id it defines, every byte of its single-byte character sets, a sample string per character
set) and MySQL ids against values quoted from MySQL's own sources."""

from __future__ import annotations

import codecs
import getpass
import os
import shutil
import socket
import subprocess
import time

import pytest

from vecbinlog import collations as col

# --------------------------------------------------------------------------------------------
# A throwaway MariaDB server for this module
# --------------------------------------------------------------------------------------------

MARIADBD = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
INSTALL_DB = shutil.which("mariadb-install-db")


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory):
    """A pymysql connection (utf8mb4, autocommit) to a private mariadbd on a unix socket."""
    pymysql = pytest.importorskip("pymysql")
    if not (os.access(MARIADBD, os.X_OK) and INSTALL_DB):
        pytest.skip("MariaDB server not installed (apt package mariadb-server)")
    root = tmp_path_factory.mktemp("collations-mariadb")
    datadir, sock, errlog = root / "data", root / "s.sock", root / "err.log"
    user = getpass.getuser()
    subprocess.run(
        [INSTALL_DB, "--no-defaults", f"--user={user}", f"--datadir={datadir}",
         "--auth-root-authentication-method=normal", "--skip-test-db"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
    )
    proc = subprocess.Popen(
        [MARIADBD, "--no-defaults", f"--user={user}", f"--datadir={datadir}", f"--socket={sock}",
         "--skip-networking", f"--pid-file={root / 'mariadbd.pid'}", f"--log-error={errlog}",
         "--innodb-buffer-pool-size=16M"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    conn = None
    try:
        # probe with our own socket: a failed pymysql.connect leaks its socket (ResourceWarning)
        deadline = time.monotonic() + 60
        while not _accepts(sock):
            if proc.poll() is not None:
                pytest.fail(f"mariadbd exited with {proc.returncode}: {errlog.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"mariadbd did not open {sock}: {errlog.read_text()[-2000:]}")
            time.sleep(0.05)
        conn = pymysql.connect(unix_socket=str(sock), user="root", charset="utf8mb4",
                               autocommit=True)
        yield conn
    finally:
        if conn is not None:
            conn.close()
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _accepts(path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
        return True


def query(conn, sql: str, args=None) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def has_full_ids(conn) -> bool:
    """10.10+: COLLATION_CHARACTER_SET_APPLICABILITY lists every collation with its full id."""
    (count,), = query(conn, "SELECT COUNT(*) FROM information_schema.COLUMNS "
                            "WHERE TABLE_SCHEMA = 'information_schema' "
                            "AND TABLE_NAME = 'COLLATION_CHARACTER_SET_APPLICABILITY' "
                            "AND COLUMN_NAME = 'FULL_COLLATION_NAME'")
    return count > 0


def server_decode(conn, charset: str, data: bytes) -> str:
    """What the server reads ``data`` as, in ``charset`` (unmappable bytes come back as '?')."""
    (hexed,), = query(conn, f"SELECT HEX(CONVERT(_{charset} X'{data.hex()}' USING utf32))")
    return bytes.fromhex(hexed).decode("utf-32-be")


# --------------------------------------------------------------------------------------------
# Collation ids: MariaDB, live
# --------------------------------------------------------------------------------------------


@pytest.mark.mariadb
def test_every_collations_row_of_the_server(mariadb):
    rows = query(mariadb, "SELECT ID, COLLATION_NAME, CHARACTER_SET_NAME "
                          "FROM information_schema.COLLATIONS WHERE ID IS NOT NULL")
    assert len(rows) > 200
    wrong = [(i, name, cs, col.collation_for(i, "mariadb")) for i, name, cs in rows
             if col.collation_for(i, "mariadb") != (name, cs)]
    assert wrong == []
    assert all(col.charset_for(i, "mariadb") == cs for i, _, cs in rows)


@pytest.mark.mariadb
def test_full_ids_of_collation_character_set_applicability(mariadb):
    # 10.10+: the UCA 14.0.0 collations have ID NULL in COLLATIONS; their per-charset ids are here
    if not has_full_ids(mariadb):
        pytest.skip("server older than 10.10: no FULL_COLLATION_NAME")
    rows = query(mariadb, "SELECT ID, FULL_COLLATION_NAME, CHARACTER_SET_NAME "
                          "FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY")
    assert any("uca1400" in name for _, name, _ in rows)
    wrong = [(i, name, cs, col.collation_for(i, "mariadb")) for i, name, cs in rows
             if col.collation_for(i, "mariadb") != (name, cs)]
    assert wrong == []


@pytest.mark.mariadb
def test_table_ids_the_server_lacks_are_only_the_0900_aliases(mariadb):
    sql = "SELECT ID FROM information_schema.COLLATIONS WHERE ID IS NOT NULL"
    ids = {i for (i,) in query(mariadb, sql)}
    if has_full_ids(mariadb):
        sql = "SELECT ID FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY"
        ids |= {i for (i,) in query(mariadb, sql)}
    extra = set(col.MARIADB_COLLATIONS) - ids
    # MariaDB 11.4.5+ (MDEV-20912) knows MySQL's utf8mb4_*_0900_* ids, 10.10+ the uca1400 ids
    uca1400 = {i for i, (name, _) in col.MARIADB_COLLATIONS.items() if "_uca1400_" in name}
    assert extra <= set(col.UTF8MB4_0900) | uca1400
    assert all(col.MARIADB_COLLATIONS[i] == col.UTF8MB4_0900[i] for i in extra - uca1400)


# --------------------------------------------------------------------------------------------
# Collation ids: MySQL, from the MySQL sources
# --------------------------------------------------------------------------------------------

# Values as MySQL states them: Connector/J com/mysql/cj/CharsetMapping.java
# ("collation[255] = new Collation(255, "utf8mb4_0900_ai_ci", 1, MYSQL_CHARSET_NAME_utf8mb4)",
# MYSQL_COLLATION_INDEX_utf8mb4_general_ci = 45, MYSQL_COLLATION_INDEX_binary = 63), the MySQL 8.4
# manual's SHOW COLLATION output (latin1_swedish_ci Id 8, gbk_chinese_ci Id 28,
# utf8mb4_0900_bin Id 309) and mysql-server strings/ctype-*.cc.
MYSQL_CITED = [
    (255, "utf8mb4_0900_ai_ci", "utf8mb4"),
    (45, "utf8mb4_general_ci", "utf8mb4"),
    (46, "utf8mb4_bin", "utf8mb4"),
    (33, "utf8mb3_general_ci", "utf8mb3"),
    (83, "utf8mb3_bin", "utf8mb3"),
    (63, "binary", "binary"),
    (8, "latin1_swedish_ci", "latin1"),
    (47, "latin1_bin", "latin1"),
    (28, "gbk_chinese_ci", "gbk"),
    (76, "utf8mb3_tolower_ci", "utf8mb3"),
    (224, "utf8mb4_unicode_ci", "utf8mb4"),
    (245, "utf8mb4_croatian_ci", "utf8mb4"),
    (248, "gb18030_chinese_ci", "gb18030"),
    (278, "utf8mb4_0900_as_cs", "utf8mb4"),
    (303, "utf8mb4_ja_0900_as_cs", "utf8mb4"),
    (305, "utf8mb4_0900_as_ci", "utf8mb4"),
    (309, "utf8mb4_0900_bin", "utf8mb4"),
    (323, "utf8mb4_mn_cyrl_0900_as_cs", "utf8mb4"),
]


@pytest.mark.parametrize(("cid", "name", "charset"), MYSQL_CITED)
def test_mysql_ids_as_mysql_states_them(cid, name, charset):
    assert col.collation_for(cid, "mysql") == (name, charset)
    assert col.charset_for(cid, "mysql") == charset
    assert col.charset_for(cid) == charset  # mysql is the default flavor


@pytest.mark.parametrize("cid", [0, 17, 100, 251, 254, 272, 276, 301, 302, 324, 1032, 2304])
def test_ids_mysql_does_not_define(cid):
    assert col.charset_for(cid, "mysql") is None
    assert col.collation_for(cid, "mysql") is None


def test_flavors_share_ids_1_to_247_and_never_conflict():
    assert col.CONFLICTING_IDS == frozenset()
    for cid, (_, charset) in col.COLLATIONS.items():
        assert col.charset_for(cid, "mysql") == col.charset_for(cid, "mariadb") == charset
    assert col.charset_for(2304, "mariadb") == "utf8mb4"  # utf8mb4_uca1400_ai_ci
    assert col.charset_for(1032, "mariadb") == "latin1"  # latin1_swedish_nopad_ci
    assert col.charset_for(76, "mariadb") is None
    assert col.charset_for(248, "mariadb") is None
    assert col.charset_for(99999, "mariadb") is None
    assert col.charset_for(8, "MariaDB") == "latin1"
    with pytest.raises(ValueError):
        col.charset_for(8, "postgres")


def test_every_charset_has_a_codec_entry_and_codecs_exist():
    charsets = {cs for table in (col.MYSQL_COLLATIONS, col.MARIADB_COLLATIONS)
                for _, cs in table.values()}
    assert charsets <= set(col.CHARSET_CODECS)
    for charset, codec in col.CHARSET_CODECS.items():
        if codec is None:
            assert charset == "binary" or charset in col.SINGLE_BYTE_DECODE_TABLES
        else:
            codecs.lookup(codec)
    assert col.codec_for("utf8") == col.codec_for("UTF8MB3") == "utf-8"
    assert col.codec_for("binary") is None
    assert col.codec_for("no-such-charset") is None
    assert col.codec_for("ujis") == "euc_jp"
    assert col.codec_for("euckr") == "cp949"


# --------------------------------------------------------------------------------------------
# latin1 and the other byte tables
# --------------------------------------------------------------------------------------------


def test_mysql_latin1_table():
    table = col.MYSQL_LATIN1_DECODE_TABLE
    assert len(table) == 256
    assert table[0x80] == "€"
    assert table[0xE9] == "é"
    assert table[0x9F] == "Ÿ"
    # strings/ctype-latin1.cc cs_to_uni: the 5 bytes cp1252 leaves undefined are C1 controls
    for b in (0x81, 0x8D, 0x8F, 0x90, 0x9D):
        assert table[b] == chr(b)
    for b in range(256):
        if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D):
            assert table[b] == bytes([b]).decode("cp1252")
    assert col.decode_table_for("latin1") is table
    assert col.decode_text(b"\x80\x81 caf\xe9", "latin1") == "€\x81 café"


def test_decode_text_on_unmapped_bytes():
    assert col.decode_text(b"a\xa4b", "dec8", "replace") == "a\ufffdb"
    assert col.decode_text(b"a\xa4b", "dec8", "ignore") == "ab"
    with pytest.raises(UnicodeDecodeError):
        col.decode_text(b"a\xa4b", "dec8")
    with pytest.raises(LookupError):
        col.decode_text(b"x", "binary")
    assert col.decode_text("Grüße".encode(), "utf8") == "Grüße"


@pytest.mark.mariadb
@pytest.mark.parametrize("charset", sorted(col.SINGLE_BYTE_DECODE_TABLES))
def test_byte_tables_match_the_server(mariadb, charset):
    server = server_decode(mariadb, charset, bytes(range(256)))
    table = col.SINGLE_BYTE_DECODE_TABLES[charset]
    assert len(server) == len(table) == 256
    # the server renders unmapped bytes as '?'
    expected = "".join("?" if ch == col.UNMAPPED else ch for ch in table)
    assert server == expected


# Python codecs that decode single-byte charsets: every byte the server maps decodes alike, and
# Python rejects the bytes the server does not map, except where documented in CHARSET_CODECS.
PYTHON_DECODES_MORE = {
    "cp1256": {0x8A, 0x8F, 0x98, 0x9A, 0x9F, 0xAA, 0xC0, 0xFF},
}


@pytest.mark.mariadb
def test_single_byte_codecs_match_the_server(mariadb):
    charsets = query(mariadb, "SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS "
                              "WHERE MAXLEN = 1 AND CHARACTER_SET_NAME <> 'binary'")
    checked = 0
    for (charset,) in charsets:
        if charset in col.SINGLE_BYTE_DECODE_TABLES:
            continue
        codec = col.codec_for(charset)
        server = server_decode(mariadb, charset, bytes(range(256)))
        for b, srv in enumerate(server):
            try:
                py = bytes([b]).decode(codec)
            except UnicodeDecodeError:
                py = None
            if srv in ("?", "\ufffd") and b != 0x3F:  # not mapped by the server
                assert py is None or b in PYTHON_DECODES_MORE.get(charset, ()), (charset, b)
            else:
                assert py == srv, (charset, hex(b), srv, py)
        checked += 1
    assert checked >= 15


# --------------------------------------------------------------------------------------------
# A sample string per character set, round-tripped through the server
# --------------------------------------------------------------------------------------------

SAMPLES = {
    "armscii8": "Բարեւ աշխարհ",
    "ascii": "plain ASCII ~ {}",
    "big5": "中文測試 繁體字",
    "cp1250": "Łódź, žluťoučký kůň „€“",
    "cp1251": "Привет, мир! Ёё №",
    "cp1256": "مرحبا بالعالم ، ؟",
    "cp1257": "Ąžuolas ėįšų „€“",
    "cp850": "Ça coûte ½ ÆØÅ ░",
    "cp852": "Łódź žluťoučký ░",
    "cp866": "Привет мир Ёё ░▒▓",
    "cp932": "こんにちは世界 ①Ⅱ ｶﾀｶﾅ",
    "dec8": "Œuvre Ÿ ÿ café",
    "eucjpms": "こんにちは世界 漢字 ｶﾀｶﾅ",
    "euckr": "안녕하세요 세계 똠방각하",
    "gb18030": "中文测试 😀",
    "gb2312": "中文测试 简体字",
    "gbk": "中文测试 繁體 镕",
    "geostd8": "გამარჯობა მსოფლიო",
    "greek": "Καλημέρα κόσμε ΐΰ",
    "hebrew": "שלום עולם",
    "hp8": "Café Ñandú ¿?",
    "keybcs2": "Příliš žluťoučký kůň",
    "koi8r": "Привет мир Ёё",
    "koi8u": "Привіт світ Її Ґґ Єє",
    "latin1": "Café € œ Ÿ ‰ Š",
    "latin2": "Łódź žluťoučký kůň",
    "latin5": "İstanbul ğüşöç",
    "latin7": "Ąžuolas ėįšų",
    "macce": "Łódź žluťoučký",
    "macroman": "Café ƒ ∞ ≠ π",
    "sjis": "こんにちは世界 カタカナ ｶﾀｶﾅ",
    "swe7": "Åsa Ärlig Örn, åäöüé",
    "tis620": "สวัสดีชาวโลก",
    "ucs2": "Grüße 中文",
    "ujis": "こんにちは世界 ｶﾀｶﾅ",
    "utf16": "Grüße 😀 中文",
    "utf16le": "Grüße 😀 中文",
    "utf32": "Grüße 😀 中文",
    "utf8mb3": "Grüße 中文 ✓",
    "utf8mb4": "Grüße 😀 中文",
}


@pytest.mark.mariadb
def test_every_server_charset_has_a_sample(mariadb):
    charsets = {cs for (cs,) in query(mariadb, "SELECT CHARACTER_SET_NAME "
                                               "FROM information_schema.CHARACTER_SETS")}
    assert charsets - {"binary"} <= set(SAMPLES)
    assert charsets <= set(col.CHARSET_CODECS)


@pytest.mark.mariadb
@pytest.mark.parametrize("charset", sorted(SAMPLES))
def test_sample_round_trip_through_the_server(mariadb, charset):
    known = {cs for (cs,) in query(mariadb, "SELECT CHARACTER_SET_NAME "
                                            "FROM information_schema.CHARACTER_SETS")}
    if charset not in known:
        pytest.skip(f"this server has no {charset}")
    sample = SAMPLES[charset]
    (encoded_hex, back), = query(
        mariadb,
        f"SELECT HEX(CONVERT(CAST(%s AS CHAR CHARACTER SET utf8mb4) USING {charset})), "
        f"CONVERT(CONVERT(CAST(%s AS CHAR CHARACTER SET utf8mb4) USING {charset}) USING utf8mb4)",
        (sample, sample),
    )
    if back != sample:
        pytest.skip(f"{charset} cannot represent {sample!r}")
    data = bytes.fromhex(encoded_hex)
    assert col.decode_text(data, charset) == sample
    codec = col.codec_for(charset)
    if codec is not None:
        assert data.decode(codec) == sample
