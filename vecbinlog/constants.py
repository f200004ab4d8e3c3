"""MySQL and MariaDB enumerations, with the servers' own names so they grep against the sources.

Sources: ``libs/mysql/binlog/event/binlog_event.h`` (Log_event_type, enum_field_types in
``include/field_types.h``), ``libs/mysql/binlog/event/rows_event.h`` (Optional_metadata_field_type,
Rows_event flags) and MariaDB's ``sql/log_event.h`` (event types 160-171).
"""

from __future__ import annotations

from enum import IntEnum, IntFlag


class EventType(IntEnum):
    """Log_event_type: byte 4 of the common header."""

    UNKNOWN_EVENT = 0
    START_EVENT_V3 = 1
    QUERY_EVENT = 2
    STOP_EVENT = 3
    ROTATE_EVENT = 4
    INTVAR_EVENT = 5
    LOAD_EVENT = 6
    SLAVE_EVENT = 7
    CREATE_FILE_EVENT = 8
    APPEND_BLOCK_EVENT = 9
    EXEC_LOAD_EVENT = 10
    DELETE_FILE_EVENT = 11
    NEW_LOAD_EVENT = 12
    RAND_EVENT = 13
    USER_VAR_EVENT = 14
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    BEGIN_LOAD_QUERY_EVENT = 17
    EXECUTE_LOAD_QUERY_EVENT = 18
    TABLE_MAP_EVENT = 19
    PRE_GA_WRITE_ROWS_EVENT = 20
    PRE_GA_UPDATE_ROWS_EVENT = 21
    PRE_GA_DELETE_ROWS_EVENT = 22
    WRITE_ROWS_EVENT_V1 = 23
    UPDATE_ROWS_EVENT_V1 = 24
    DELETE_ROWS_EVENT_V1 = 25
    INCIDENT_EVENT = 26
    HEARTBEAT_LOG_EVENT = 27
    IGNORABLE_LOG_EVENT = 28
    ROWS_QUERY_LOG_EVENT = 29
    WRITE_ROWS_EVENT = 30
    UPDATE_ROWS_EVENT = 31
    DELETE_ROWS_EVENT = 32
    GTID_LOG_EVENT = 33
    ANONYMOUS_GTID_LOG_EVENT = 34
    PREVIOUS_GTIDS_LOG_EVENT = 35
    TRANSACTION_CONTEXT_EVENT = 36
    VIEW_CHANGE_EVENT = 37
    XA_PREPARE_LOG_EVENT = 38
    PARTIAL_UPDATE_ROWS_EVENT = 39
    TRANSACTION_PAYLOAD_EVENT = 40
    HEARTBEAT_LOG_EVENT_V2 = 41
    GTID_TAGGED_LOG_EVENT = 42
    # MariaDB
    ANNOTATE_ROWS_EVENT = 160
    BINLOG_CHECKPOINT_EVENT = 161
    GTID_EVENT = 162
    GTID_LIST_EVENT = 163
    START_ENCRYPTION_EVENT = 164
    QUERY_COMPRESSED_EVENT = 165
    WRITE_ROWS_COMPRESSED_EVENT_V1 = 166
    UPDATE_ROWS_COMPRESSED_EVENT_V1 = 167
    DELETE_ROWS_COMPRESSED_EVENT_V1 = 168
    WRITE_ROWS_COMPRESSED_EVENT = 169
    UPDATE_ROWS_COMPRESSED_EVENT = 170
    DELETE_ROWS_COMPRESSED_EVENT = 171


def event_type_name(code: int) -> str:
    """The server's name of an event type code, or ``UNKNOWN(<code>)`` for vendor codes."""
    try:
        return EventType(code).name
    except ValueError:
        return f"UNKNOWN({code})"


class RowsKind(IntEnum):
    """What a rows event does; the order is the change type's code in Arrow output."""

    WRITE = 0
    UPDATE = 1
    DELETE = 2


#: Rows events decoded by this version: event type -> (kind, version). Version 2 events
#: carry the extra-data block in their post-header (rows_event.h, ROWS_HEADER_LEN_V2).
ROWS_EVENTS: dict[int, tuple[RowsKind, int]] = {
    EventType.WRITE_ROWS_EVENT_V1: (RowsKind.WRITE, 1),
    EventType.UPDATE_ROWS_EVENT_V1: (RowsKind.UPDATE, 1),
    EventType.DELETE_ROWS_EVENT_V1: (RowsKind.DELETE, 1),
    EventType.WRITE_ROWS_EVENT: (RowsKind.WRITE, 2),
    EventType.UPDATE_ROWS_EVENT: (RowsKind.UPDATE, 2),
    EventType.DELETE_ROWS_EVENT: (RowsKind.DELETE, 2),
    # UPDATE_ROWS v2 whose after images may hold JSON diffs (rows.py, decoders/jsondiff.py)
    EventType.PARTIAL_UPDATE_ROWS_EVENT: (RowsKind.UPDATE, 2),
}

#: Rows events that this version recognises but cannot decode yet: they raise
#: UnsupportedError when a table that has them is read, never silently dropped.
#: (MariaDB's compressed rows events 166-171 are unpacked first, see compression.py.)
UNDECODED_ROWS_EVENTS: frozenset[int] = frozenset(
    {
        EventType.PRE_GA_WRITE_ROWS_EVENT,
        EventType.PRE_GA_UPDATE_ROWS_EVENT,
        EventType.PRE_GA_DELETE_ROWS_EVENT,
    }
)


class LogEventFlag(IntFlag):
    """Flags of the common header (binlog_event.h)."""

    LOG_EVENT_BINLOG_IN_USE_F = 0x1
    LOG_EVENT_THREAD_SPECIFIC_F = 0x4
    LOG_EVENT_SUPPRESS_USE_F = 0x8
    LOG_EVENT_ARTIFICIAL_F = 0x20
    LOG_EVENT_RELAY_LOG_F = 0x40
    LOG_EVENT_IGNORABLE_F = 0x80
    LOG_EVENT_SKIP_REPLICATION_F = 0x8000


class ColumnType(IntEnum):
    """enum_field_types (include/field_types.h; MariaDB include/mysql_com.h)."""

    MYSQL_TYPE_DECIMAL = 0
    MYSQL_TYPE_TINY = 1
    MYSQL_TYPE_SHORT = 2
    MYSQL_TYPE_LONG = 3
    MYSQL_TYPE_FLOAT = 4
    MYSQL_TYPE_DOUBLE = 5
    MYSQL_TYPE_NULL = 6
    MYSQL_TYPE_TIMESTAMP = 7
    MYSQL_TYPE_LONGLONG = 8
    MYSQL_TYPE_INT24 = 9
    MYSQL_TYPE_DATE = 10
    MYSQL_TYPE_TIME = 11
    MYSQL_TYPE_DATETIME = 12
    MYSQL_TYPE_YEAR = 13
    MYSQL_TYPE_NEWDATE = 14
    MYSQL_TYPE_VARCHAR = 15
    MYSQL_TYPE_BIT = 16
    MYSQL_TYPE_TIMESTAMP2 = 17
    MYSQL_TYPE_DATETIME2 = 18
    MYSQL_TYPE_TIME2 = 19
    MYSQL_TYPE_TYPED_ARRAY = 20
    MYSQL_TYPE_BLOB_COMPRESSED = 140  # MariaDB
    MYSQL_TYPE_VARCHAR_COMPRESSED = 141  # MariaDB
    MYSQL_TYPE_VECTOR = 242
    MYSQL_TYPE_INVALID = 243
    MYSQL_TYPE_BOOL = 244
    MYSQL_TYPE_JSON = 245
    MYSQL_TYPE_NEWDECIMAL = 246
    MYSQL_TYPE_ENUM = 247
    MYSQL_TYPE_SET = 248
    MYSQL_TYPE_TINY_BLOB = 249
    MYSQL_TYPE_MEDIUM_BLOB = 250
    MYSQL_TYPE_LONG_BLOB = 251
    MYSQL_TYPE_BLOB = 252
    MYSQL_TYPE_VAR_STRING = 253
    MYSQL_TYPE_STRING = 254
    MYSQL_TYPE_GEOMETRY = 255


def column_type_name(code: int) -> str:
    """``"LONG"`` for 3 and so on; ``UNKNOWN(<code>)`` for codes no server defines."""
    try:
        return ColumnType(code).name.removeprefix("MYSQL_TYPE_")
    except ValueError:
        return f"UNKNOWN({code})"


class OptionalMetadataType(IntEnum):
    """Table_map_event::Optional_metadata_field_type (rows_event.h)."""

    SIGNEDNESS = 1
    DEFAULT_CHARSET = 2
    COLUMN_CHARSET = 3
    COLUMN_NAME = 4
    SET_STR_VALUE = 5
    ENUM_STR_VALUE = 6
    GEOMETRY_TYPE = 7
    SIMPLE_PRIMARY_KEY = 8
    PRIMARY_KEY_WITH_PREFIX = 9
    ENUM_AND_SET_DEFAULT_CHARSET = 10
    ENUM_AND_SET_COLUMN_CHARSET = 11
    COLUMN_VISIBILITY = 12
    VECTOR_DIMENSIONALITY = 13


class TableMapFlag(IntFlag):
    """Table_map_log_event::TM_*_F (sql/log_event.h)."""

    TM_BIT_LEN_EXACT_F = 0x1
    TM_REFERRED_FK_DB_F = 0x2
    TM_GENERATED_INVISIBLE_PK_F = 0x4


class ChecksumAlg(IntEnum):
    """enum_binlog_checksum_alg (binlog_event.h)."""

    BINLOG_CHECKSUM_ALG_OFF = 0
    BINLOG_CHECKSUM_ALG_CRC32 = 1
    BINLOG_CHECKSUM_ALG_UNDEF = 255


#: Collation id of the binary pseudo-charset (``my_charset_bin``).
BINARY_COLLATION = 63
