"""Random shapes for ``bench/random_shapes.py``: tables of every column type MariaDB writes and
workloads over them, drawn from a seed, written by a real MariaDB server.

A *case* (:func:`draw_case`) is drawn from ``random.Random(f"{seed}-{case}")`` alone, without a
server: 1 to 64 tables (:func:`draw_table`) whose columns come from every type family of
:data:`KINDS` (integers of every width, signed and unsigned; DECIMAL of every precision; FLOAT,
DOUBLE, BIT, YEAR; DATE, TIME, DATETIME and TIMESTAMP with 0-6 fractional digits; ENUM and SET of
1- and 2-byte / 1- to 8-byte packs; CHAR, VARCHAR and TEXT in UTF-8 and in the single- and
multi-byte charsets that are transcoded; BINARY, VARBINARY, BLOB; JSON; GEOMETRY; INET4, INET6,
UUID; COMPRESSED columns), each nullable or not with its own NULL rate; one workload kind
(:data:`WORKLOADS`) with its mix drawn; the row image, the row metadata, annotate-rows events on or
off, and ``max_binlog_size`` drawn log-uniformly from 512 KiB to 256 MiB; a binlog total drawn
log-uniformly from 20 to 200 MB (times ``scale``).

:func:`write_case` runs the case on a :class:`~tests.support.mariadb.MariaDBServer` until the
binlog files it wrote reach that total, and counts what the server says each statement did
(rows affected, per table and change): the truth a decode is checked against. Statements go to
the server many to a packet (multi-statements), so that single-row workloads are written at the
server's speed, not at the speed of one round trip per row.

The statements come from the seed; when the workload stops, and how large the transactions of
the ``transactions`` workload are, follow the sizes of the files the server wrote, which are the
same for the same server version.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import json
import math
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.shapes import q

#: bumped whenever a change draws other cases from the same seed (it keys the cache)
GENERATOR_VERSION = 1
DB = "rs"
MB = 1_000_000
#: a case's binlog total (before ``scale``) and ``max_binlog_size``, both drawn log-uniformly
CASE_BYTES = (20 * MB, 200 * MB)
ROTATION_BYTES = (512 << 10, 256 << 20)
#: what the server may hold in one row: InnoDB's inline record (~8 KB at 16 KB pages; columns of
#: more than 255 bytes may go off-page as a 20-byte pointer, counted as 40 here) and the 65 535
#: bytes of every VARCHAR's maximum (sql/table.cc); a column that would pass either is a TEXT
INLINE_BUDGET, VARCHAR_BUDGET = 5000, 60000
#: SQL text sent to the server in one packet, and the longest statement made
PACKET_CHARS, STATEMENT_CHARS = 1 << 20, 4 << 20

# -- text in every charset ---------------------------------------------------------------------

_EN = ("the of and order customer status paid shipped account invoice product price total note "
       "address city street warehouse item review rating discount coupon session user event value").split()
#: words of each charset's own script (each encodes in it: tested in bench/test_bench_random_shapes.py)
WORDS: dict[str, list[str]] = {
    "ascii": _EN,
    "utf8mb4": _EN * 4 + ["größe", "café", "naïve", "日本語", "данные", "Ωmega", "🎉", "😀", "€100"],
    "utf8mb3": _EN * 4 + ["größe", "café", "naïve", "日本語", "данные", "Ωmega", "€100"],
    "latin1": _EN * 3 + ["größe", "café", "naïve", "smörgåsbord", "€5", "Ångström", "façade"],
    "latin2": _EN + ["zażółć", "gęślą", "jaźń", "příliš", "žluťoučký", "kůň", "árvíztűrő"],
    "cp1250": _EN + ["zażółć", "gęślą", "jaźń", "příliš", "žluťoučký", "kůň", "€"],
    "cp1251": ["съешь", "же", "ещё", "этих", "мягких", "французских", "булок", "заказ", "клиент", "id"],
    "koi8r": ["съешь", "же", "ещё", "этих", "мягких", "французских", "булок", "заказ", "клиент", "id"],
    "greek": ["ξεσκεπάζω", "την", "ψυχοφθόρα", "βδελυγμία", "παραγγελία", "πελάτης", "id"],
    "sjis": ["いろはにほへと", "ちりぬるを", "日本語", "テキスト", "東京都", "カタカナ", "注文", "ｱｲｳ", "id"],
    "cp932": ["いろはにほへと", "ちりぬるを", "日本語", "テキスト", "東京都", "カタカナ", "注文", "①", "id"],
    "ujis": ["いろはにほへと", "ちりぬるを", "日本語", "テキスト", "東京都", "カタカナ", "注文", "id"],
    "eucjpms": ["いろはにほへと", "ちりぬるを", "日本語", "テキスト", "東京都", "カタカナ", "注文", "id"],
    "gbk": ["我能吞下玻璃而不伤身体", "数据库", "中文", "订单", "客户", "北京", "id"],
    "gb2312": ["我能吞下玻璃而不伤身体", "数据库", "中文", "订单", "客户", "北京", "id"],
    "big5": ["我能吞下玻璃而不傷身體", "資料庫", "中文", "訂單", "客戶", "臺北", "id"],
    "euckr": ["다람쥐", "헌", "쳇바퀴에", "타고파", "데이터", "주문", "고객", "id"],
    "utf16": _EN * 2 + ["größe", "日本語", "данные", "🎉"],
    "ucs2": _EN * 2 + ["größe", "日本語", "данные"],
    "utf32": _EN * 2 + ["größe", "日本語", "данные", "🎉"],
}
#: bytes per character at most (for the row-size budgets)
MAXLEN = {"ascii": 1, "latin1": 1, "latin2": 1, "cp1250": 1, "cp1251": 1, "koi8r": 1, "greek": 1,
          "utf8mb3": 3, "utf8mb4": 4, "sjis": 2, "cp932": 2, "ujis": 3, "eucjpms": 3, "gbk": 2, "gb2312": 2,
          "big5": 2, "euckr": 2, "utf16": 4, "ucs2": 2, "utf32": 4}
#: charset -> (family suffix, weight): UTF-8 is kept as it is, 8-bit charsets are transcoded by a
#: byte table, the multi-byte ones by Python's codecs
CHARSETS: dict[str, tuple[str, float]] = {
    "utf8mb4": ("utf8", 50), "utf8mb3": ("utf8", 10), "ascii": ("utf8", 4), "latin1": ("8bit", 15),
    "latin2": ("8bit", 2), "cp1250": ("8bit", 1), "cp1251": ("8bit", 2), "koi8r": ("8bit", 1),
    "greek": ("8bit", 1), "sjis": ("multibyte", 2), "cp932": ("multibyte", 1), "ujis": ("multibyte", 1),
    "eucjpms": ("multibyte", 0.5), "gbk": ("multibyte", 2), "gb2312": ("multibyte", 1), "big5": ("multibyte", 1),
    "euckr": ("multibyte", 1), "utf16": ("multibyte", 1), "ucs2": ("multibyte", 0.5), "utf32": ("multibyte", 0.5),
}


class Texts:
    """Random text in each charset: slices of a pool of its words (made once per case)."""

    POOL = 1 << 16

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.pools: dict[str, str] = {}

    def text(self, charset: str, n: int) -> str:
        pool = self.pools.get(charset)
        if pool is None:
            words = WORDS[charset]
            pool = self.pools[charset] = " ".join(self.rnd.choice(words) for _ in range(self.POOL // 4))
        if n <= 0:
            return ""
        n = min(n, len(pool) // 2)
        start = self.rnd.randrange(len(pool) - n)
        return pool[start:start + n].strip() or "x"


# -- columns -----------------------------------------------------------------------------------


@dataclass
class Column:
    """A column of a drawn table: its SQL type, family, and how to make a value of it."""

    name: str
    sql: str
    family: str
    #: a new value as SQL (its NULLs included)
    value: Callable[[], str] = field(repr=False)
    #: bytes it takes in InnoDB's inline record, and of the 65 535 of VARCHAR maxima
    inline: int = 8
    var: int = 0


ValueFn = Callable[[], str]
#: what a kind's drawer returns: (SQL type, family, value maker, inline bytes, VARCHAR bytes)
Drawn = tuple[str, str, ValueFn, int, int]


def _log_uniform(rnd: random.Random, lo: float, hi: float) -> float:
    return math.exp(rnd.uniform(math.log(lo), math.log(hi)))


def _lengths(rnd: random.Random, limit: int, mean: float) -> Callable[[], int]:
    """Value lengths of a column: around ``mean`` (exponentially), at most ``limit``."""
    lam = 1.0 / max(mean, 1.0)
    return lambda: min(limit, int(rnd.expovariate(lam)) + 1)


def _int(rnd: random.Random, texts: Texts) -> Drawn:
    name, bits = rnd.choice([("TINYINT", 8), ("SMALLINT", 16), ("MEDIUMINT", 24), ("INT", 32), ("INT", 32),
                             ("BIGINT", 64), ("BIGINT", 64), ("BOOLEAN", 1)])
    unsigned = bits > 1 and rnd.random() < 0.35
    if bits == 1:
        lo, hi = 0, 1
    else:
        lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        style = rnd.random()
        if style < 0.6:  # counters, quantities, foreign keys: small positive numbers
            hi = min(hi, 10 ** rnd.randint(1, max(1, len(str(hi)) - 1)))
            lo = max(lo, 0)
        elif style < 0.7:
            lo, hi = max(lo, -100), min(hi, 100)
    r = rnd.randint
    return f"{name}{' UNSIGNED' if unsigned else ''}", "int", lambda: str(r(lo, hi)), max(1, bits // 8), 0


def _decimal(rnd: random.Random, texts: Texts) -> Drawn:
    p = rnd.choice([rnd.randint(1, 65), rnd.randint(4, 20), 10, 12, 14, 18, 5])
    s = min(p, rnd.choice([0, 2, 2, 2, 4, 6, rnd.randint(0, min(p, 38))]))
    unsigned = rnd.random() < 0.1
    intg = p - s
    digits = rnd.randint(min(1, intg), intg)  # the magnitude of the column's values
    r, frac = rnd.randrange, 10**s

    def value() -> str:
        whole = r(10**digits) if digits else 0
        sign = "" if unsigned or r(4) else "-"
        return f"{sign}{whole}.{r(frac):0{s}d}" if s else f"{sign}{whole}"

    size = (intg // 9 + s // 9) * 4 + 8
    return f"DECIMAL({p},{s}){' UNSIGNED' if unsigned else ''}", "decimal", value, size, 0


def _float(rnd: random.Random, texts: Texts) -> Drawn:
    double = rnd.random() < 0.6
    scale = 10 ** rnd.randint(0, 30 if double else 20)
    places = rnd.choice([None, 2, 4])
    u = rnd.uniform

    def value() -> str:
        x = u(-scale, scale)
        return repr(x) if places is None else f"{x:.{places}f}"

    return ("DOUBLE" if double else "FLOAT"), "float", value, 8 if double else 4, 0


def _bit(rnd: random.Random, texts: Texts) -> Drawn:
    n = rnd.choice([1, 1, 8, 16, rnd.randint(1, 64)])
    g = rnd.getrandbits
    return f"BIT({n})", "bit", lambda: str(g(n)), (n + 7) // 8, 0


def _year(rnd: random.Random, texts: Texts) -> Drawn:
    r = rnd.randint
    return "YEAR", "year", lambda: str(r(1901, 2155)), 1, 0


def _seconds(rnd: random.Random, lo: _dt.datetime, hi: _dt.datetime) -> Callable[[], _dt.datetime]:
    """Random instants of a column: most columns hold recent ones, some the type's whole range."""
    base, span = lo, int((hi - lo).total_seconds())
    if rnd.random() < 0.85 and lo.year < 2000 < hi.year:
        base, span = _dt.datetime(2000, 1, 1), 36 * 365 * 86400
    r = rnd.randrange
    return lambda: base + _dt.timedelta(seconds=r(span))


def _fraction(rnd: random.Random) -> tuple[int, Callable[[], str]]:
    fsp = rnd.choice([0, 0, 3, 6, rnd.randint(0, 6)])
    r, top = rnd.randrange, 10**fsp
    return fsp, (lambda: f".{r(top):0{fsp}d}") if fsp else (lambda: "")


def _date(rnd: random.Random, texts: Texts) -> Drawn:
    when = _seconds(rnd, _dt.datetime(1000, 1, 1), _dt.datetime(9999, 12, 31))
    return "DATE", "date", lambda: f"'{when().date().isoformat()}'", 3, 0


def _datetime(rnd: random.Random, texts: Texts) -> Drawn:
    fsp, frac = _fraction(rnd)
    when = _seconds(rnd, _dt.datetime(1000, 1, 1), _dt.datetime(9999, 12, 31, 23, 59, 59))
    return f"DATETIME({fsp})", "datetime", lambda: f"'{when().isoformat(' ')}{frac()}'", 5 + (fsp + 1) // 2, 0


def _timestamp(rnd: random.Random, texts: Texts) -> Drawn:
    fsp, frac = _fraction(rnd)  # the server's time zone is UTC (random_shapes.SERVER_OPTIONS)
    when = _seconds(rnd, _dt.datetime(1970, 1, 1, 0, 0, 1), _dt.datetime(2038, 1, 19, 3, 14, 7))
    return f"TIMESTAMP({fsp})", "timestamp", lambda: f"'{when().isoformat(' ')}{frac()}'", 4 + (fsp + 1) // 2, 0


def _time(rnd: random.Random, texts: Texts) -> Drawn:
    fsp, frac = _fraction(rnd)
    hours = rnd.choice([24, 24, 838])
    r = rnd.randrange

    def value() -> str:
        sign = "-" if hours > 24 and r(3) == 0 else ""
        return f"'{sign}{r(hours)}:{r(60):02d}:{r(60):02d}{frac()}'"

    return f"TIME({fsp})", "time", value, 3 + (fsp + 1) // 2, 0


def _labels(rnd: random.Random, n: int) -> list[str]:
    return [f"{rnd.choice(_EN)}_{k}" for k in range(n)]


def _enum(rnd: random.Random, texts: Texts) -> Drawn:
    labels = _labels(rnd, rnd.choice([2, 3, 4, 5, 8, rnd.randint(2, 40), rnd.choice([2, 300])]))
    weights = [1.0 / (k + 1) for k in range(len(labels))]  # a few labels most rows hold
    choices = rnd.choices
    literals = [q(s) for s in labels]
    return (f"ENUM({','.join(literals)})", "enum", lambda: choices(literals, weights)[0],
            1 if len(labels) < 256 else 2, 0)


def _set(rnd: random.Random, texts: Texts) -> Drawn:
    members = _labels(rnd, rnd.choice([2, 3, 5, 8, rnd.randint(1, 64)]))
    sample, r = rnd.sample, rnd.randint
    most = min(4, len(members))
    return (f"SET({','.join(q(s) for s in members)})", "set",
            lambda: q(",".join(sample(members, r(0, most)))), (len(members) + 7) // 8, 0)


#: collations other than the charset's default that a column may have (each its own id in the
#: binlog's charset metadata)
COLLATIONS = {"utf8mb4": ["utf8mb4_bin", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_ci"],
              "utf8mb3": ["utf8mb3_bin", "utf8mb3_unicode_ci"], "latin1": ["latin1_bin", "latin1_general_ci"],
              "cp1251": ["cp1251_bin"], "sjis": ["sjis_bin"], "gbk": ["gbk_bin"], "ucs2": ["ucs2_unicode_ci"]}


def _charset(rnd: random.Random) -> tuple[str, str, str]:
    """(charset, its family group, the column's CHARACTER SET and maybe COLLATE clause)."""
    names = list(CHARSETS)
    cs = rnd.choices(names, [CHARSETS[c][1] for c in names])[0]
    clause = f"CHARACTER SET {cs}"
    if cs in COLLATIONS and rnd.random() < 0.3:
        clause += f" COLLATE {rnd.choice(COLLATIONS[cs])}"
    return cs, CHARSETS[cs][0], clause


def _char(rnd: random.Random, texts: Texts) -> Drawn:
    cs, group, clause = _charset(rnd)
    n = rnd.choice([1, 2, 3, 3, 8, 10, 20, 32, 36, 64, 100, 255])
    full = rnd.random() < 0.5  # codes, hashes: always n characters
    length = (lambda: n) if full else _lengths(rnd, n, n / 2)
    text = texts.text
    width = n * MAXLEN[cs]
    return f"CHAR({n}) {clause}", f"char_{group}", lambda: q(text(cs, length())), width, width + 2


def _varchar(rnd: random.Random, texts: Texts) -> Drawn:
    cs, group, clause = _charset(rnd)
    n = rnd.choice([8, 16, 20, 32, 45, 50, 64, 100, 128, 191, 255, 255, 500, 1000, 2000])
    length = _lengths(rnd, n, n * rnd.uniform(0.1, 0.7))
    text = texts.text
    width = n * MAXLEN[cs]
    inline = width + 2 if width <= 255 else 40
    return f"VARCHAR({n}) {clause}", f"varchar_{group}", lambda: q(text(cs, length())), inline, width + 2


def _text(rnd: random.Random, texts: Texts) -> Drawn:
    cs, group, clause = _charset(rnd)
    name, limit = rnd.choice([("TINYTEXT", 255), ("TEXT", 65535), ("TEXT", 65535), ("MEDIUMTEXT", 1 << 24),
                              ("LONGTEXT", 1 << 32)])
    mean = min(limit // MAXLEN[cs], _log_uniform(rnd, 10, 1500))
    length = _lengths(rnd, limit // MAXLEN[cs], mean)
    text = texts.text
    return f"{name} {clause}", f"text_{group}", lambda: q(text(cs, length())), 40, 12


def _bytes_value(rnd: random.Random, length: Callable[[], int]) -> ValueFn:
    rb = rnd.randbytes

    def value() -> str:
        data = rb(length())
        return f"X'{data.hex()}'" if data else "''"

    return value


def _binary(rnd: random.Random, texts: Texts) -> Drawn:
    n = rnd.choice([4, 16, 16, 20, 32, 64, 255])
    if rnd.random() < 0.5:
        return f"BINARY({n})", "binary", _bytes_value(rnd, lambda: n), n, n + 2
    width = rnd.choice([n, 500, 1000, 3000])
    return (f"VARBINARY({width})", "binary", _bytes_value(rnd, _lengths(rnd, width, width / 3)),
            width + 2 if width <= 255 else 40, width + 2)


def _blob(rnd: random.Random, texts: Texts) -> Drawn:
    name, limit = rnd.choice([("TINYBLOB", 255), ("BLOB", 65535), ("BLOB", 65535), ("MEDIUMBLOB", 1 << 24),
                              ("LONGBLOB", 1 << 32)])
    mean = _log_uniform(rnd, 8, 2000)
    return name, "blob", _bytes_value(rnd, _lengths(rnd, limit, mean)), 40, 12


def _json(rnd: random.Random, texts: Texts) -> Drawn:
    keys = _labels(rnd, rnd.randint(2, 12))
    items = int(_log_uniform(rnd, 1, 20))
    r, choice, text = rnd.random, rnd.choice, texts.text

    def field_value() -> object:
        x = r()
        if x < 0.3:
            return round(x * 1000, 2)
        if x < 0.6:
            return text("utf8mb4", int(x * 30))
        if x < 0.7:
            return x < 0.65
        if x < 0.8:
            return [int(r() * 100) for _ in range(3)]
        return None

    def value() -> str:
        doc = {k: field_value() for k in keys}
        if items > 1:
            doc["items"] = [{"sku": choice(keys), "qty": int(r() * 10)} for _ in range(int(r() * items))]
        return q(json.dumps(doc, ensure_ascii=False))

    return "JSON", "json", value, 40, 12


def _geometry(rnd: random.Random, texts: Texts) -> Drawn:
    kind = rnd.choice(["POINT", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "GEOMETRY"])
    u, r, choice = rnd.uniform, rnd.randint, rnd.choice
    kinds = ["POINT", "LINESTRING", "POLYGON", "MULTIPOINT"]

    def points(n: int) -> str:
        return ",".join(f"{u(-180, 180):.6f} {u(-90, 90):.6f}" for _ in range(n))

    def polygon() -> str:
        x, y, n = u(-170, 170), u(-80, 80), r(3, 12)
        ring = [(x + 5 * math.cos(2 * math.pi * j / n), y + 5 * math.sin(2 * math.pi * j / n)) for j in range(n)]
        return "POLYGON((" + ",".join(f"{px:.6f} {py:.6f}" for px, py in ring + ring[:1]) + "))"

    def value() -> str:
        k = choice(kinds) if kind == "GEOMETRY" else kind
        wkt = {"POINT": lambda: f"POINT({points(1)})", "LINESTRING": lambda: f"LINESTRING({points(r(2, 30))})",
               "MULTIPOINT": lambda: f"MULTIPOINT({points(r(1, 10))})", "POLYGON": polygon}[k]()
        return f"ST_GeomFromText('{wkt}')"

    return kind, "geometry", value, 40, 12


def _inet6(rnd: random.Random, texts: Texts) -> Drawn:
    g = rnd.getrandbits
    mapped = rnd.random() < 0.3
    return ("INET6", "inet6",
            lambda: q(str(ipaddress.IPv6Address((0xFFFF << 32 | g(32)) if mapped else g(128)))), 16, 0)


def _inet4(rnd: random.Random, texts: Texts) -> Drawn:
    g = rnd.getrandbits
    return "INET4", "inet4", lambda: q(str(ipaddress.IPv4Address(g(32)))), 4, 0


def _uuid(rnd: random.Random, texts: Texts) -> Drawn:
    g, version = rnd.getrandbits, rnd.choice([1, 4, 4])
    return "UUID", "uuid", lambda: q(str(uuid.UUID(int=g(128), version=version))), 16, 0


def _compressed(rnd: random.Random, texts: Texts) -> Drawn:
    cs = rnd.choice(["utf8mb4", "latin1"])
    text = texts.text
    if rnd.random() < 0.5:
        n = rnd.choice([100, 500, 1000])
        length = _lengths(rnd, n, n / 2)
        return (f"VARCHAR({n}) CHARACTER SET {cs} COMPRESSED", "compressed", lambda: q(text(cs, length())), 40,
                n * MAXLEN[cs] + 2)
    length = _lengths(rnd, 20000, _log_uniform(rnd, 50, 3000))
    kind = rnd.choice(["TEXT", "BLOB"])
    suffix = f" CHARACTER SET {cs}" if kind == "TEXT" else ""
    return f"{kind}{suffix} COMPRESSED", "compressed", lambda: q(text(cs, length())), 40, 12


#: kind -> (drawer, weight in a table's columns: how often production tables have it)
KINDS: dict[str, tuple[Callable[[random.Random, Texts], Drawn], float]] = {
    "int": (_int, 6), "decimal": (_decimal, 2), "float": (_float, 1), "bit": (_bit, 0.3), "year": (_year, 0.2),
    "date": (_date, 1), "time": (_time, 0.4), "datetime": (_datetime, 2), "timestamp": (_timestamp, 1.2),
    "enum": (_enum, 1), "set": (_set, 0.4), "char": (_char, 1.2), "varchar": (_varchar, 4), "text": (_text, 1.2),
    "binary": (_binary, 0.5), "blob": (_blob, 0.5), "json": (_json, 0.6), "geometry": (_geometry, 0.3),
    "inet6": (_inet6, 0.2), "inet4": (_inet4, 0.15), "uuid": (_uuid, 0.3), "compressed": (_compressed, 0.2),
}
#: every family a column is reported under (the text kinds by charset group)
FAMILIES = sorted({"int", "decimal", "float", "bit", "year", "date", "time", "datetime", "timestamp", "enum", "set",
                   "binary", "blob", "json", "geometry", "inet6", "inet4", "uuid", "compressed"}
                  | {f"{k}_{g}" for k in ("char", "varchar", "text") for g in ("utf8", "8bit", "multibyte")})


# -- tables ------------------------------------------------------------------------------------


@dataclass
class Table:
    """A drawn table: ``id`` (the key the workload updates and deletes by) and its columns."""

    name: str
    columns: list[Column]
    id_type: str
    primary: bool
    engine: str

    def create(self) -> str:
        cols = [f"id {self.id_type} NOT NULL"] + [f"{c.name} {c.sql}" for c in self.columns]
        cols.append("PRIMARY KEY (id)" if self.primary else "KEY (id)")
        return f"CREATE TABLE {self.name} ({', '.join(cols)}) ENGINE={self.engine}"

    def row(self, i: int) -> str:
        return f"({i}," + ",".join(c.value() for c in self.columns) + ")"

    def describe(self) -> dict:
        return {"name": self.name, "engine": self.engine, "primary_key": self.primary,
                "columns": {c.name: c.sql for c in self.columns}}


def _nullable(rnd: random.Random, value: ValueFn) -> tuple[str, ValueFn]:
    """NULL or NOT NULL, and the column's NULL rate."""
    if rnd.random() < 0.4:
        return " NOT NULL", value
    rate = rnd.choice([0.0, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0])
    r = rnd.random
    return " NULL", (lambda: "NULL" if r() < rate else value())


def draw_table(rnd: random.Random, texts: Texts, name: str, counter: list[int]) -> Table:
    """A table of 1 to 60 columns; each table leans to some families (its own weights)."""
    kinds = list(KINDS)
    weights = [KINDS[k][1] * rnd.lognormvariate(0, 1) for k in kinds]
    n = min(60, max(1, int(rnd.lognormvariate(2.0, 0.8))))
    columns, inline, var = [], 16, 0
    for _ in range(n):
        kind = rnd.choices(kinds, weights)[0]
        sql, family, value, size, width = KINDS[kind][0](rnd, texts)
        if inline + size > INLINE_BUDGET or var + width > VARCHAR_BUDGET:
            sql, family, value, size, width = _text(rnd, texts)
        inline, var = inline + size, var + width
        attr, value = _nullable(rnd, value)
        counter[0] += 1
        columns.append(Column(f"{family}_{counter[0]}", sql + attr, family, value, size, width))
    engine = rnd.choices(["InnoDB", "MyISAM", "Aria"], [90, 5, 5])[0]
    return Table(name, columns, rnd.choice(["BIGINT", "BIGINT UNSIGNED", "INT"]), rnd.random() < 0.9, engine)


# -- workloads ---------------------------------------------------------------------------------

#: kind -> what it is
WORKLOADS = {
    "autocommit": "single-row INSERT/UPDATE/DELETE, each its own transaction (a few in small transactions)",
    "statements": "multi-row INSERTs of 1-1000 rows, range UPDATEs and DELETEs, some in transactions",
    "transactions": "large transactions: hundreds to tens of thousands of changes over several tables",
    "updates": "UPDATE-heavy: a load, then mostly single-row and range UPDATEs",
}
#: a statement, and what it counts for: (table, "insert" | "update" | "delete"), or None
Statement = tuple[str, tuple[str, str] | None]


@dataclass
class CaseSpec:
    """What a case is, drawn from (seed, case) alone."""

    seed: int
    case: int
    target_bytes: int
    rotation: int
    image: str
    metadata: str
    annotate: bool
    workload: str
    mix: dict
    tables: list[Table] = field(repr=False)

    def settings(self) -> dict[str, str]:
        """The server's globals while the case is written."""
        return {"binlog_row_image": self.image, "binlog_row_metadata": self.metadata,
                "binlog_annotate_row_events": "ON" if self.annotate else "OFF", "max_binlog_size": str(self.rotation)}

    def describe(self) -> dict:
        fams: dict[str, int] = {}
        for t in self.tables:
            for c in t.columns:
                fams[c.family] = fams.get(c.family, 0) + 1
        return {"seed": self.seed, "case": self.case, "generator_version": GENERATOR_VERSION,
                "target_mb": round(self.target_bytes / MB, 2), "rotation_bytes": self.rotation,
                "image": self.image, "metadata": self.metadata, "annotate": self.annotate,
                "workload": self.workload, "mix": self.mix, "tables": len(self.tables),
                "columns": sum(len(t.columns) for t in self.tables), "families": dict(sorted(fams.items())),
                "table_defs": [t.describe() for t in self.tables]}


def draw_case(seed: int, case: int, scale: float = 1.0) -> CaseSpec:
    """Case number ``case`` of ``seed``: its tables, workload, server settings and size."""
    rnd = random.Random(f"{seed}-{case}")
    target = int(_log_uniform(rnd, *CASE_BYTES) * scale)
    rotation = int(_log_uniform(rnd, *ROTATION_BYTES)) // 4096 * 4096  # the server's block size
    image = rnd.choice(["FULL", "FULL", "MINIMAL", "NOBLOB"])
    metadata = rnd.choice(["FULL", "FULL", "MINIMAL", "NO_LOG"])
    annotate = rnd.random() < 0.5
    workload = rnd.choice(list(WORKLOADS))
    n_tables = min(64, max(1, int(_log_uniform(rnd, 1, 65))))
    mix = {"skew": round(rnd.uniform(0, 1.5), 2),  # tables' popularity ~ 1 / rank**skew
           "update_columns": rnd.randint(1, 4)}
    if workload == "autocommit":
        ins = rnd.uniform(0.4, 0.95)
        upd = (1 - ins) * rnd.uniform(0.3, 0.9)
        mix.update(insert=round(ins, 3), update=round(upd, 3), delete=round(1 - ins - upd, 3),
                   multi_statement=round(rnd.choice([0, 0.02, 0.05, 0.1]), 3))
    elif workload == "statements":
        mix.update(insert=round(rnd.uniform(0.4, 0.8), 3), update=round(rnd.uniform(0.1, 0.4), 3),
                   pareto=round(rnd.uniform(0.8, 2.0), 2), transactions=round(rnd.choice([0, 0.1, 0.3]), 2))
    elif workload == "transactions":
        mix.update(changes=[100, int(_log_uniform(rnd, 1000, 50000))], insert=round(rnd.uniform(0.3, 0.9), 3),
                   multi_row=round(rnd.uniform(0, 0.5), 2), tables_per_txn=rnd.randint(1, max(1, min(8, n_tables))))
    else:
        mix.update(load=round(rnd.uniform(0.1, 0.4), 2), update=round(rnd.uniform(0.6, 0.9), 3),
                   range_updates=round(rnd.uniform(0, 0.3), 2), transactions=round(rnd.choice([0, 0.05, 0.2]), 2))
    texts = Texts(rnd)
    counter = [0]
    tables = [draw_table(rnd, texts, f"t{k:02d}", counter) for k in range(n_tables)]
    return CaseSpec(seed, case, max(target, 64 << 10), max(rotation, 4096), image, metadata, annotate, workload, mix,
                    tables)


class Workload:
    """The statements of a case, made as the server asks for more (the RNG continues the
    spec's: every value comes from the same seed)."""

    def __init__(self, spec: CaseSpec, rnd: random.Random) -> None:
        self.spec, self.rnd, self.mix = spec, rnd, spec.mix
        self.tables = spec.tables
        self.weights = [1.0 / (k + 1) ** self.mix["skew"] for k in range(len(self.tables))]
        rnd.shuffle(self.weights)
        self.next_id = [0] * len(self.tables)
        self.low = [0] * len(self.tables)  # ids below it were deleted by range DELETEs
        self.sql_chars = 0  # characters of the transactions' statements made so far

    def table(self) -> int:
        return self.rnd.choices(range(len(self.tables)), self.weights)[0]

    # one statement of each kind
    def insert(self, t: int, rows: int = 1) -> Statement:
        table, start = self.tables[t], self.next_id[t]
        parts, size = [], 0
        for i in range(rows):
            parts.append(table.row(start + i))
            size += len(parts[-1])
            if size > STATEMENT_CHARS:
                break
        self.next_id[t] += len(parts)
        return f"INSERT INTO {table.name} VALUES {','.join(parts)}", (table.name, "insert")

    def update(self, t: int, rows: int = 1) -> Statement:
        table, rnd = self.tables[t], self.rnd
        if not table.columns or self.next_id[t] <= self.low[t]:
            return self.insert(t)
        cols = rnd.sample(table.columns, min(len(table.columns), rnd.randint(1, self.mix["update_columns"])))
        sets = ", ".join(f"{c.name} = {c.value()}" for c in cols)
        lo = rnd.randrange(self.low[t], self.next_id[t])
        where = f"id = {lo}" if rows == 1 else f"id BETWEEN {lo} AND {lo + rows - 1}"
        return f"UPDATE {table.name} SET {sets} WHERE {where}", (table.name, "update")

    def delete(self, t: int, rows: int = 1) -> Statement:
        table = self.tables[t]
        if self.next_id[t] <= self.low[t]:
            return self.insert(t)
        if rows == 1:
            return f"DELETE FROM {table.name} WHERE id = {self.rnd.randrange(self.low[t], self.next_id[t])}", (
                table.name, "delete")
        self.low[t] = min(self.low[t] + rows, self.next_id[t])
        return f"DELETE FROM {table.name} WHERE id < {self.low[t]}", (table.name, "delete")

    def change(self, t: int, p_insert: float, p_update: float) -> Statement:
        x = self.rnd.random()
        return self.insert(t) if x < p_insert else self.update(t) if x < p_insert + p_update else self.delete(t)

    # the workloads: each yields groups of statements that go to the server together
    def groups(self, made: Callable[[], float]) -> Iterator[list[Statement]]:
        """Statement groups (a transaction, or autocommit statements) until the server has
        written the case's bytes; ``made()`` is the share of them written so far."""
        step = getattr(self, f"_{self.spec.workload}")
        while made() < 1.0:
            yield step(made)

    def _txn(self, stmts: list[Statement]) -> list[Statement]:
        return [("BEGIN", None), *stmts, ("COMMIT", None)] if len(stmts) > 1 else stmts

    def _autocommit(self, made: Callable[[], float]) -> list[Statement]:
        m, rnd = self.mix, self.rnd
        out: list[Statement] = []
        for _ in range(200):
            if rnd.random() < m["multi_statement"]:
                group = [self.change(self.table(), m["insert"], m["update"]) for _ in range(rnd.randint(2, 5))]
                out += self._txn(group)
            else:
                out.append(self.change(self.table(), m["insert"], m["update"]))
        return out

    def _statements(self, made: Callable[[], float]) -> list[Statement]:
        m, rnd = self.mix, self.rnd
        out: list[Statement] = []
        for _ in range(20):
            group = []
            for _ in range(rnd.randint(2, 5) if rnd.random() < m["transactions"] else 1):
                t, x = self.table(), rnd.random()
                k = min(1000, int(rnd.paretovariate(m["pareto"])))
                if x < m["insert"] or self.next_id[t] - self.low[t] < 50:
                    group.append(self.insert(t, k))
                elif x < m["insert"] + m["update"]:
                    group.append(self.update(t, min(k, 300)))
                else:
                    group.append(self.delete(t, min(k, 100)))
            out += self._txn(group)
        return out

    def _transactions(self, made: Callable[[], float]) -> list[Statement]:
        m, rnd = self.mix, self.rnd
        lo, hi = m["changes"]
        # no transaction much larger than what is left to write (a tiny case stays tiny): its SQL
        # text stops at the bytes left over the binlog bytes a character of SQL made so far (a
        # row's statement is about as long as its image, whatever the table), or at a quarter
        # of the case's bytes before the server has written any
        written = made() * self.spec.target_bytes
        left = self.spec.target_bytes - written
        budget = left / (written / self.sql_chars) if written else self.spec.target_bytes / 4
        changes = int(_log_uniform(rnd, lo, hi))
        chosen = list(dict.fromkeys(self.table() for _ in range(m["tables_per_txn"])))
        stmts, done, chars = [], 0, 0
        while done < changes and chars < budget:
            t = rnd.choice(chosen)
            if rnd.random() < m["multi_row"]:
                k = rnd.randint(2, 200)
                stmts.append(self.insert(t, k))
                done += k
            else:
                stmts.append(self.change(t, m["insert"], (1 - m["insert"]) * 0.7))
                done += 1
            chars += len(stmts[-1][0])
        self.sql_chars += chars
        return self._txn(stmts)

    def _updates(self, made: Callable[[], float]) -> list[Statement]:
        m, rnd = self.mix, self.rnd
        if made() < m["load"]:
            return [self.insert(self.table(), 200) for _ in range(5)]
        out: list[Statement] = []
        for _ in range(200):
            t = self.table()
            stmt = (self.update(t, rnd.randint(2, 100)) if rnd.random() < m["range_updates"] else
                    self.change(t, (1 - m["update"]) * 0.7, m["update"]))
            out += self._txn([stmt, self.change(t, 0.3, 0.6)]) if rnd.random() < m["transactions"] else [stmt]
        return out


# -- writing a case with the server -------------------------------------------------------------


class Counts:
    """What the server said each statement did: rows affected, per table and change."""

    def __init__(self) -> None:
        self.by_table: dict[str, dict[str, int]] = {}

    def add(self, what: tuple[str, str] | None, rows: int) -> None:
        if what is not None and rows > 0:
            t = self.by_table.setdefault(f"{DB}.{what[0]}", {"insert": 0, "update": 0, "delete": 0})
            t[what[1]] += rows

    def images(self) -> dict[str, dict[str, int]]:
        """Per table, the row images a decode must give of each ``_change_type``."""
        return {t: {"insert": c["insert"], "update_preimage": c["update"], "update_postimage": c["update"],
                    "delete": c["delete"]} for t, c in sorted(self.by_table.items())}


def _run_packet(cur, stmts: list[Statement], counts: Counts) -> None:
    """Send statements as one multi-statement packet; count each one's rows affected (the
    connection has no CLIENT_FOUND_ROWS: an UPDATE counts the rows it changed, the rows that
    have images in the binlog)."""
    k = 0
    try:
        cur.execute(";\n".join(s for s, _ in stmts))
        while True:
            counts.add(stmts[k][1], max(cur.rowcount, 0))
            k += 1
            if not cur.nextset():
                break
    except Exception as exc:
        raise RuntimeError(f"statement {k + 1} of {len(stmts)} failed: {stmts[k][0][:300]}") from exc
    if k != len(stmts):
        raise RuntimeError(f"{len(stmts)} statements sent, {k} results came back")


def write_case(server, spec: CaseSpec, folder: Path, progress: Callable[[str], None] | None = None) -> dict:
    """Write ``spec``'s binlog with ``server`` (a started MariaDBServer, whose time zone is UTC)
    and copy its files into ``folder`` (with a ``mysql-bin.index``); returns the case's manifest:
    its description, the files, and the row images per table and change (rows affected)."""
    from tests.support.mariadb import copy_binlogs

    saved = {k: str(server.query(f"SELECT @@GLOBAL.{k}")[0][0]) for k in spec.settings()}
    server.execute(f"DROP DATABASE IF EXISTS {DB}")
    for k, v in spec.settings().items():
        server.set_global(k, v)
    counts = Counts()
    try:
        server.flush_binary_logs()
        first = len(server.binlog_files()) - 1
        conn = server.connect(multi_statements=True)  # after the globals: its session takes them
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE {DB}")
                cur.execute(f"USE {DB}")
                for t in spec.tables:
                    cur.execute(t.create())
                _fill(cur, spec, counts, first, progress)
        finally:
            conn.close()
        server.flush_binary_logs()
        files = server.binlog_files()[first:-1]
        folder.mkdir(parents=True, exist_ok=True)
        copies, _ = copy_binlogs(files, folder)
        server.execute(f"PURGE BINARY LOGS TO '{server.current_binlog().name}'")
    finally:
        for k, v in saved.items():
            server.set_global(k, v)
    return {"spec": spec.describe(), "files": [f.name for f in copies],
            "bytes": sum(f.stat().st_size for f in copies), "images": counts.images()}


def _fill(cur, spec: CaseSpec, counts: Counts, first: int, progress: Callable[[str], None] | None) -> None:
    """Run the workload until the case's files (from the ``first``-th of SHOW BINARY LOGS) hold
    ``spec.target_bytes``: a group of statements at a time (whole transactions), each sent in
    packets of PACKET_CHARS, then the files measured."""
    written = [0]

    def made() -> float:
        return written[0] / spec.target_bytes

    work = Workload(spec, random.Random(f"{spec.seed}-{spec.case}-rows"))
    reported = 0
    for group in work.groups(made):
        packet: list[Statement] = []
        size = 0
        for stmt in group:
            packet.append(stmt)
            size += len(stmt[0])
            if size >= PACKET_CHARS:
                _run_packet(cur, packet, counts)
                packet, size = [], 0
        if packet:
            _run_packet(cur, packet, counts)
        cur.execute("SHOW BINARY LOGS")
        written[0] = sum(int(r[1]) for r in list(cur.fetchall())[first:])
        if progress and written[0] - reported > 10 * MB:
            reported = written[0]
            progress(f"{written[0] / MB:.0f} of {spec.target_bytes / MB:.0f} MB")
