"""DDL tracking: what CREATE / ALTER / RENAME / DROP / TRUNCATE statements say about tables.

Binlogs written with MariaDB's default ``binlog_row_metadata=NO_LOG`` (and MySQL's
``MINIMAL``, and every MySQL 5.x) carry column types but no column names, and MariaDB's no
signedness or character sets either. The DDL statements in QUERY events do: this module
replays them, statement by statement, into a :class:`~.catalog.Catalog` of :class:`~.catalog.TableDef`.

A statement is read by one of two readers into the same statement classes
(:mod:`.statements`): CREATE and ALTER TABLE by sqlglot's MySQL dialect where it parses them
and every part of its tree is one this package knows (:mod:`.tree`); everything else,
and the statements about tables sqlglot does not parse or reads otherwise than the server
(MariaDB's COMPRESSED columns, system versioning, sequences, partitioned tables, CONVERT TO
CHARACTER SET, ``ADD (a INT, b INT)``, MySQL's type synonyms...), by a tolerant reading of
the tokens along the server's grammar (:mod:`.scan`). What a statement does to a table
is then written once (:mod:`.statements`, :mod:`.columns`). Kept per column is what
decoding needs: the name, UNSIGNED, the character set and collation (column, else table
default, else database default, resolved when the column is defined, as the server does),
ENUM/SET labels, and the type to check against the TABLE_MAP; the primary key per table.

Statements that change no column (keys, indexes, engine, options, partitions, FORCE...)
change nothing. A statement that cannot be read at all raises :class:`~.columns.DdlError`; the table
it names is then *forgotten* (its definition is no longer trusted), so that a stale
definition is never applied to later rows.
"""

from .catalog import Catalog, ColumnInfo, DdlError, TableDef, split_name

__all__ = ["Catalog", "ColumnInfo", "DdlError", "TableDef", "split_name"]
