"""The FORMAT_DESCRIPTION_EVENT: how the events after it are laid out (layout in :mod:`.spec`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..constants import ChecksumAlg
from ..errors import MalformedEventError, UnsupportedVersionError
from .spec import (
    CHECKSUM_VERSION_SPLIT_MARIADB,
    CHECKSUM_VERSION_SPLIT_MYSQL,
    COMMON_HEADER_LEN,
    FDE_CHECKSUM_TRAILER_LEN,
    FDE_POST_HEADER_LENGTHS_OFFSET,
    FDE_SERVER_VERSION_LEN,
    Cursor,
    version_tuple,
)

__all__ = ["FormatDescription", "parse_format_description"]


@dataclass(frozen=True)
class FormatDescription:
    """A decoded FORMAT_DESCRIPTION_EVENT: how the events after it are laid out."""

    offset: int
    binlog_version: int
    server_version: str
    create_timestamp: int
    header_length: int
    post_header_lengths: bytes  #: entry i is the post-header length of event type i + 1
    checksum_alg: ChecksumAlg  #: UNDEF for servers older than the checksum feature

    @property
    def flavor(self) -> str:
        """``"mariadb"`` or ``"mysql"`` (MySQL, Percona, AliSQL, Aurora...)."""
        return "mariadb" if "mariadb" in self.server_version.lower() else "mysql"

    @property
    def has_checksum(self) -> bool:
        return self.checksum_alg == ChecksumAlg.BINLOG_CHECKSUM_ALG_CRC32

    @property
    def checksum_name(self) -> str:
        return {
            ChecksumAlg.BINLOG_CHECKSUM_ALG_CRC32: "CRC32",
            ChecksumAlg.BINLOG_CHECKSUM_ALG_OFF: "NONE",
            ChecksumAlg.BINLOG_CHECKSUM_ALG_UNDEF: "NONE (server predates checksums)",
        }[self.checksum_alg]


def parse_format_description(buf: np.ndarray, offset: int, size: int, path: str) -> FormatDescription:
    """Decode the FDE at ``offset`` (layout in :mod:`vecbinlog.binlog.spec`)."""
    name = "FORMAT_DESCRIPTION_EVENT"
    body = offset + COMMON_HEADER_LEN
    cur = Cursor(buf, body, offset + size, base=0, path=path, event_type=name)
    binlog_version = cur.u16("binlog_version")
    if binlog_version != 4:
        raise UnsupportedVersionError(
            f"binlog format version {binlog_version}; only v4 (MySQL 5.0+, MariaDB) is supported",
            path=path, offset=offset, event_type=name,
        )
    raw_version = cur.take(FDE_SERVER_VERSION_LEN, "server_version")
    server_version = raw_version.split(b"\0", 1)[0].decode("ascii", "replace")
    create_timestamp = cur.u32("create_timestamp")
    header_length = cur.u8("header_length")
    if header_length != COMMON_HEADER_LEN:
        raise UnsupportedVersionError(
            f"common header length {header_length}, expected {COMMON_HEADER_LEN}",
            path=path, offset=offset, event_type=name,
        )
    if _is_pre_ga_tree(server_version):
        raise UnsupportedVersionError(
            f"server {server_version!r} is a pre-GA 5.1/5.2 development tree whose event type codes "
            "differ from every released server (control_events.cpp, Format_description_event)",
            path=path, offset=offset, event_type=name,
        )
    split = (
        CHECKSUM_VERSION_SPLIT_MARIADB if "mariadb" in server_version.lower()
        else CHECKSUM_VERSION_SPLIT_MYSQL
    )
    n_lengths = size - COMMON_HEADER_LEN - FDE_POST_HEADER_LENGTHS_OFFSET
    if version_tuple(server_version) >= split:
        # A checksum-aware server always writes the algorithm byte and 4 checksum bytes in
        # its FDE, whatever binlog_checksum is (log_event.cc, Format_description_log_event::write).
        n_lengths -= FDE_CHECKSUM_TRAILER_LEN
        alg_byte = int(buf[offset + size - FDE_CHECKSUM_TRAILER_LEN])
        if alg_byte not in (0, 1):
            raise MalformedEventError(
                f"checksum algorithm byte is {alg_byte}; expected 0 (off) or 1 (CRC32)",
                path=path, offset=offset + size - FDE_CHECKSUM_TRAILER_LEN, event_type=name,
            )
        checksum_alg = ChecksumAlg(alg_byte)
    else:
        checksum_alg = ChecksumAlg.BINLOG_CHECKSUM_ALG_UNDEF
    if n_lengths < 0:
        raise MalformedEventError(
            f"event of {size} bytes is too short for a format description", path=path,
            offset=offset, event_type=name,
        )
    post = cur.take(n_lengths, "post_header_lengths")
    return FormatDescription(
        offset=offset,
        binlog_version=binlog_version,
        server_version=server_version,
        create_timestamp=create_timestamp,
        header_length=header_length,
        post_header_lengths=post,
        checksum_alg=checksum_alg,
    )


def _is_pre_ga_tree(server_version: str) -> bool:
    """The 5.1.[1-5]-a_drop5*, 5.1.4-a_drop6* and 5.2.[0-2]-a_drop6* trees MySQL itself reads
    with a permutation of event types."""
    v = server_version
    if len(v) < 13 or not v.startswith("5.") or v[3] != "." or v[5:12] != "-a_drop":
        return False
    return (
        (v[2] == "1" and "1" <= v[4] <= "5" and v[12] == "5")
        or (v[2] == "1" and v[4] == "4" and v[12] == "6")
        or (v[2] == "2" and "0" <= v[4] <= "2" and v[12] == "6")
    )
