"""A seeded generator of DDL workloads for MariaDB, and the values to insert after each step.

Each step is one DDL statement (CREATE TABLE with the types, synonyms and attributes MariaDB
takes, partitioned and system-versioned tables, sequences, LIKE and SELECT; ALTER TABLE that
adds, drops, modifies, changes and renames columns, one or several, converts charsets, adds
and drops keys, system versioning and partitioning, or changes only options; RENAME, DROP
and TRUNCATE TABLE), written against the tables as the server has them (read from
``information_schema``). The generator does not predict what a statement does: the server
is the truth, and a statement it refuses is simply not in the log.

Every table has an ``id`` column (never altered) that the rows inserted after each step
number uniquely, so that each row of the log is matched to the ``SELECT`` taken when it was
inserted.
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import dataclass

#: (charset, collation or None) of text columns, tables and conversions
CHARSETS = [("utf8mb4", None), ("latin1", None), ("utf8mb3", None), ("latin1", "latin1_bin"),
            ("utf8mb4", "utf8mb4_bin"), ("ascii", None)]
#: characters each charset holds, for the text inserted
ALPHABET = {"utf8mb4": "abz é€🎁", "utf8mb3": "abz é€ü", "latin1": "abz éüÅ", "ascii": "abzXY"}

INT_TYPES = ["TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "INTEGER", "INT1", "INT2", "INT3", "INT4", "INT8",
             "MIDDLEINT", "BOOL"]
OTHER_TYPES = [
    "DECIMAL(10,2)", "NUMERIC(8,3) UNSIGNED", "DEC(5)", "FIXED(6,1)", "FLOAT", "FLOAT(30)", "DOUBLE", "REAL",
    "DOUBLE PRECISION", "FLOAT(7,3)", "BIT(3)", "BIT(12)", "DATE", "DATETIME", "DATETIME(3)", "TIMESTAMP(6) NULL",
    "TIME(2)", "YEAR", "JSON", "INET4", "INET6", "UUID",
    "BINARY(4)", "VARBINARY(12)", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "LONG VARBINARY", "LONG BYTE",
    "CHAR(3) BYTE", "VARCHAR(5) CHARACTER SET binary", "BLOB COMPRESSED", "BLOB(100)", "VARBINARY(20) COMPRESSED",
    "ENUM('a','b c','x''y')", "ENUM('é','ü') CHARACTER SET latin1", "SET('x','y','z')", "ENUM(0x61, 'b')",
    "SET('p','q') COLLATE latin1_bin",
]
TEXT_TYPES = ["CHAR(5)", "VARCHAR(20)", "NATIONAL CHAR(4)", "NCHAR VARCHAR(6)", "NATIONAL VARCHAR(5)",
              "CHARACTER VARYING(7)", "CHAR VARYING(7)", "NVARCHAR(5)", "VARCHAR(30) COMPRESSED",
              "VARCHAR(30) /*M!100301 COMPRESSED*/", "TINYTEXT", "TEXT", "TEXT(300)", "MEDIUMTEXT", "LONGTEXT", "LONG",
              "LONG VARCHAR", "TEXT COMPRESSED", "CHAR(3) BINARY", "VARCHAR(8) ASCII"]
#: generated columns (of constants: a SERIAL id is AUTO_INCREMENT, which they may not use)
GENERATED = ["INT AS (7 + 1) VIRTUAL", "BIGINT GENERATED ALWAYS AS (2 * 21) STORED", "INT AS (3) PERSISTENT",
             "VARCHAR(10) AS (CONCAT('g', 'h')) VIRTUAL"]
#: types any value converts to (MODIFY and CHANGE pick them half the time, so that most succeed)
WIDE = ["VARCHAR(64) CHARACTER SET utf8mb4", "TEXT", "LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_bin", "BLOB",
        "MEDIUMBLOB COMPRESSED", "LONG VARCHAR CHARACTER SET utf8mb4"]
PARTITIONS = ["PARTITION BY HASH(id) PARTITIONS 3", "PARTITION BY KEY(id) PARTITIONS 2",
              "PARTITION BY RANGE(id) (PARTITION p0 VALUES LESS THAN (500), PARTITION p1 VALUES LESS THAN MAXVALUE)",
              "PARTITION BY LIST(id % 3) (PARTITION p0 VALUES IN (0), PARTITION p1 VALUES IN (1, 2))"]
OPTIONS = ["ENGINE=InnoDB", "ENGINE=Aria", "ENGINE=MyISAM", "ROW_FORMAT=DYNAMIC", "COMMENT='a, (b)'",
           "DEFAULT CHARSET=latin1", "CHARSET=utf8mb4 COLLATE=utf8mb4_bin", "COLLATE=latin1_bin", "CHECKSUM=1"]
NO_COLUMN_CHANGE = ["DISABLE KEYS", "ENABLE KEYS", "ENGINE=InnoDB", "FORCE", "COMMENT='changed'",
                    "ROW_FORMAT=COMPACT", "ALGORITHM=COPY", "LOCK=SHARED", "AUTO_INCREMENT=100",
                    "ALTER COLUMN id SET DEFAULT 7", "ALTER id DROP DEFAULT", "PAGE_CHECKSUM=1", "ENGINE=InnoDB"]


@dataclass
class Column:
    """A column as ``information_schema.COLUMNS`` says it is."""

    name: str
    data_type: str
    column_type: str
    charset: str | None
    collation: str | None
    extra: str

    @property
    def generated(self) -> bool:
        return "GENERATED" in self.extra.upper()


class Generator:
    """Random DDL and rows (``random.Random(seed)``) over the tables of one database."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.count = 0
        self.next_id = 1

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    # -- columns ---------------------------------------------------------------------
    def column_type(self) -> str:
        """A column's type and attributes."""
        rnd = self.rnd
        kind = rnd.random()
        if kind < 0.3:
            t = rnd.choice(INT_TYPES)
            t += rnd.choice(["", "", " UNSIGNED", " ZEROFILL", "(5) UNSIGNED ZEROFILL"]) if t != "BOOL" else ""
        elif kind < 0.6:
            t = rnd.choice(OTHER_TYPES)
        else:
            t = rnd.choice(TEXT_TYPES)
            if rnd.random() < 0.4 and not any(w in t for w in ("ASCII", "BINARY", "NATIONAL", "NCHAR", "NVARCHAR")):
                cs, coll = rnd.choice(CHARSETS)
                t += rnd.choice([" CHARACTER SET ", " CHARSET "]) + cs + (f" COLLATE {coll}" if coll else "")
            elif rnd.random() < 0.1 and not any(w in t for w in ("ASCII", "NATIONAL", "NCHAR", "NVARCHAR")):
                t += " COLLATE latin1_bin"
        return t + rnd.choice(["", "", "", " NULL", " DEFAULT NULL", " COMMENT 'x, y'", " INVISIBLE"])

    def column(self) -> str:
        if self.rnd.random() < 0.08:
            return f"{self.fresh('g')} {self.rnd.choice(GENERATED)}"
        return f"{self.fresh('c')} {self.column_type()}"

    # -- statements ------------------------------------------------------------------
    def create(self, names: list[str]) -> str:
        """CREATE TABLE: columns, keys, options; partitioned or system-versioned at times."""
        rnd = self.rnd
        table = self.fresh("t")
        cols = [self.column() for _ in range(rnd.randint(1, 5))]
        head = rnd.choice(["id INT NOT NULL", "id BIGINT UNSIGNED NOT NULL", "id INT PRIMARY KEY", "id SERIAL"])
        elements = [head, *cols]
        versioned = rnd.random() < 0.2
        partitioned = not versioned and rnd.random() < 0.2
        if "PRIMARY" not in head and "SERIAL" not in head and rnd.random() < 0.7:
            elements.append(rnd.choice(["PRIMARY KEY (id)", "CONSTRAINT pk PRIMARY KEY (id)", "KEY k1 (id)"]))
        if not partitioned and rnd.random() < 0.3:
            elements.append(rnd.choice(["INDEX ix (id)", "UNIQUE KEY uq (id)", "CONSTRAINT ck CHECK (id > 0)",
                                        "CHECK (id <> 0)"]))
        if versioned and rnd.random() < 0.4:  # explicit period columns
            elements += ["rs TIMESTAMP(6) GENERATED ALWAYS AS ROW START", "re TIMESTAMP(6) GENERATED ALWAYS AS ROW END",
                         "PERIOD FOR SYSTEM_TIME (rs, re)"]
        elif versioned and rnd.random() < 0.3:
            elements.append(f"{self.fresh('w')} INT WITHOUT SYSTEM VERSIONING")
        if not versioned and rnd.random() < 0.15:  # an application-time period (rows give s < e)
            elements += ["ps DATE NOT NULL", "pe DATE NOT NULL", "PERIOD FOR app (ps, pe)"]
        tail = " ".join(rnd.sample(OPTIONS, rnd.randint(0, 2)))
        if versioned:
            tail += " WITH SYSTEM VERSIONING"
            if rnd.random() < 0.3:
                tail += " PARTITION BY SYSTEM_TIME (PARTITION ph HISTORY, PARTITION pc CURRENT)"
        elif partitioned:
            tail += " " + rnd.choice(PARTITIONS)
        verb = rnd.choice(["CREATE TABLE", "CREATE TABLE", "CREATE TABLE IF NOT EXISTS"])
        if names and rnd.random() < 0.15:
            verb, table = "CREATE OR REPLACE TABLE", rnd.choice(names)
        return f"{verb} {table} ({', '.join(elements)}) {tail}".strip()

    def alter(self, table: str, columns: list[Column], versioned: bool, partitioned: bool) -> str:
        """ALTER TABLE: one kind of change, one or several of it."""
        rnd = self.rnd
        others = [c.name for c in columns if c.name not in ("id", "rs", "re", "ps", "pe", "row_start", "row_end")]
        named = [c.name for c in columns if c.name not in ("row_start", "row_end")]

        def place() -> str:
            return rnd.choice(["", "", " FIRST", f" AFTER {rnd.choice(named)}"])

        def retype() -> str:
            return rnd.choice(WIDE) if rnd.random() < 0.5 else self.column_type()

        kind = rnd.choice(["add", "add", "add_list", "drop", "modify", "change", "rename", "convert", "charset",
                           "keys", "keys", "versioning", "partition", "ignore"])
        verb = "ALTER IGNORE TABLE" if kind == "ignore" else "ALTER TABLE"
        if kind in ("add", "ignore"):
            items = [f"ADD {rnd.choice(['', 'COLUMN ', 'COLUMN IF NOT EXISTS '])}{self.column()}{place()}"
                     for _ in range(rnd.randint(1, 3))]
        elif kind == "add_list":
            items = [f"ADD COLUMN ({', '.join(self.column() for _ in range(rnd.randint(2, 3)))})"]
        elif kind == "drop" and others:
            items = [f"DROP {rnd.choice(['', 'COLUMN '])}{c}" for c in rnd.sample(others, rnd.randint(1, len(others)))]
            items += ["DROP COLUMN IF EXISTS nosuch"] if rnd.random() < 0.3 else []
        elif kind == "modify" and others:
            items = [f"MODIFY {rnd.choice(['', 'COLUMN '])}{c} {retype()}{place()}"
                     for c in rnd.sample(others, rnd.randint(1, min(2, len(others))))]
        elif kind == "change" and others:
            items = [f"CHANGE {c} {self.fresh('c')} {retype()}{place()}"
                     for c in rnd.sample(others, rnd.randint(1, min(2, len(others))))]
        elif kind == "rename" and others:
            items = [f"RENAME COLUMN {c} TO {self.fresh('c')}" for c in rnd.sample(others, 1)]
        elif kind == "convert":
            cs, coll = rnd.choice(CHARSETS + [("DEFAULT", None)])
            items = [f"CONVERT TO CHARACTER SET {cs}" + (f" COLLATE {coll}" if coll else "")]
        elif kind == "charset":
            cs, coll = rnd.choice(CHARSETS)
            items = [f"DEFAULT CHARACTER SET = {cs}" + (f" COLLATE {coll}" if coll else ""), f"ADD {self.column()}"]
        elif kind == "versioning":
            items = ["DROP SYSTEM VERSIONING" if versioned else "ADD SYSTEM VERSIONING"]
            if versioned and "rs" in named:
                items += ["DROP PERIOD FOR SYSTEM_TIME", "DROP COLUMN rs", "DROP COLUMN re"]
        elif kind == "partition":
            items = [rnd.choice(["REMOVE PARTITIONING", "COALESCE PARTITION 1", "ADD PARTITION PARTITIONS 1",
                                 "ANALYZE PARTITION ALL"] if partitioned else ["PARTITION BY HASH(id) PARTITIONS 2"])]
        else:
            items = rnd.sample(NO_COLUMN_CHANGE, rnd.randint(1, 2))
            items += [rnd.choice(["ADD INDEX ix2 (id)", "DROP INDEX ix", "DROP PRIMARY KEY, ADD PRIMARY KEY (id)",
                                  "RENAME INDEX ix TO ix3", "ADD UNIQUE KEY (id)"])] if rnd.random() < 0.5 else []
            items = ["ORDER BY id"] if rnd.random() < 0.1 else items
        return f"{verb} {table} {', '.join(items)}"

    def create_from(self, table: str, columns: list[Column]) -> tuple[str, str]:
        """CREATE TABLE ... LIKE, or ... SELECT (in a statement-based log: as written; in a row-based
        one the server logs the CREATE TABLE it made); returns (the new table, the statement)."""
        rnd = self.rnd
        new = self.fresh("t")
        if rnd.random() < 0.4:
            return new, f"CREATE TABLE {new} {rnd.choice(['LIKE ' + table, '(LIKE ' + table + ')'])}"
        visible = [c.name for c in columns if "INVISIBLE" not in c.extra.upper() and c.name != "id"]
        picked = rnd.sample(visible, rnd.randint(0, len(visible)))
        items = ["*"] if rnd.random() < 0.3 else ["id", *(f"{c} AS {c}x" if rnd.random() < 0.3 else f"s.{c}"
                                                         for c in picked)]
        extra = f"({self.fresh('c')} INT, PRIMARY KEY (id)) " if rnd.random() < 0.3 and items != ["*"] else ""
        where = rnd.choice(["", " WHERE id > 0", " WHERE 1 = 0"])
        head = f"CREATE TABLE {new} {extra}{rnd.choice(['', 'AS ', 'IGNORE '])}"
        return new, f"{head}SELECT {', '.join(items)} FROM {table} s{where}"

    def sequence(self) -> str:
        seq = self.fresh("s")
        options = [o for o in ("START WITH 5", "INCREMENT BY 3", "MINVALUE 1", "MAXVALUE 100000", "NOCYCLE",
                               self.rnd.choice(["cache=10", "CACHE 20", "NOCACHE"])) if self.rnd.random() < 0.5]
        return f"CREATE SEQUENCE {seq} {' '.join(options)}{self.rnd.choice(['', ' ENGINE=InnoDB', ' ENGINE=Aria'])}"

    # -- rows ------------------------------------------------------------------------
    def row(self, columns: list[Column]) -> tuple[int, list[str], list[object]]:
        """A row of new values for the table's columns that take one (generated ones excluded):
        (its id, the column names, the values for pymysql)."""
        rid = self.next_id
        self.next_id += 1
        names, values = [], []
        for k, c in enumerate(columns):
            if c.generated or c.name in ("rs", "re"):
                continue
            names.append(c.name)
            values.append(rid if c.name == "id" else self.value(c, k))
        return rid, names, values

    def value(self, c: Column, k: int) -> object:
        """A value of column ``c`` (the k-th of its table) within its type's range."""
        rnd = self.rnd
        t, ct = c.data_type.lower(), c.column_type.lower()
        if rnd.random() < 0.1 and "NOT NULL" not in ct and c.name not in ("ps", "pe"):
            return None
        if t in _INT_BITS:
            bits = _INT_BITS[t] - (0 if "unsigned" in ct else 1)
            if ct.startswith("tinyint(1)") and "unsigned" not in ct:
                bits = 7
            low = 0 if "unsigned" in ct else -(1 << bits)
            return rnd.choice([low, (1 << bits) - 1, rnd.randint(low, (1 << bits) - 1)])
        if t in ("decimal", "float", "double"):
            return rnd.choice([0, 1.5, 2.25, 12.75]) * (1 if "unsigned" in ct else rnd.choice([1, -1]))
        if t == "bit":
            return rnd.randint(0, (1 << int(ct[4:-1])) - 1)
        if t in ("date", "datetime", "timestamp"):
            day = dt.datetime(2020, 1, 1) + dt.timedelta(days=k, seconds=rnd.randint(0, 86399),
                                                         microseconds=rnd.choice([0, 123456]))
            return day.date() if t == "date" else day
        if t == "time":
            return dt.timedelta(hours=rnd.randint(-30, 30), seconds=rnd.randint(0, 3599), microseconds=500000)
        if t == "year":
            return rnd.randint(1901, 2155)
        if t in ("enum", "set"):
            members = _members(c.column_type)
            return rnd.choice(members) if t == "enum" else ",".join(rnd.sample(members, rnd.randint(0, len(members))))
        if t in ("inet4", "inet6", "uuid"):
            return {"inet4": "10.0.0.7", "inet6": "fe80::12:1", "uuid": str(uuid.UUID(int=rnd.getrandbits(128)))}[t]
        if c.charset is None:  # binary strings
            size = _size(ct, 12)
            return bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0 if t != "binary" else size, size)))
        if t == "longtext":  # JSON's (a LONGTEXT with a json_valid check) too
            return '{"a": [1, 2]}'
        alphabet = ALPHABET.get(c.charset, "abz")
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, _size(ct, 12)))).strip() or "q"


_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}


def _members(column_type: str) -> list[str]:
    """The members of ``enum('a','x''y')`` as information_schema writes them."""
    body = column_type[column_type.index("(") + 1: column_type.rindex(")")]
    out, i = [], 0
    while i < len(body):
        if body[i] != "'":
            i += 1
            continue
        j, chars = i + 1, []
        while not (body[j] == "'" and body[j + 1: j + 2] != "'"):
            chars.append(body[j])
            j += 2 if body[j] == "'" else 1
        out.append("".join(chars))
        i = j + 1
    return out


def _size(column_type: str, cap: int) -> int:
    """The length of ``varchar(20)`` (at most ``cap``), else ``cap``."""
    if "(" in column_type and column_type.split("(")[1].split(")")[0].isdigit():
        return max(1, min(cap, int(column_type.split("(")[1].split(")")[0])))
    return cap
