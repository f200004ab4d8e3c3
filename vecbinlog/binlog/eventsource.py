"""The protocol every decoder reads a run of events through, :class:`EventSource`: the bytes of a
file, a window of it, or a segment whose compressed events were unpacked (each implementation
holds its bytes: :mod:`vecbinlog.binlog.file`); and :func:`event_path`, the file an event came from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..errors import BinlogError
    from .format import FormatDescription
    from .headers import EventIndex

__all__ = ["EventSource", "event_path"]


class EventSource(Protocol):
    """The bytes of a run of events, as every decoder reads them (a file, a window of it, or an unpacked segment: :mod:`vecbinlog.binlog.file`).

    ``index.offset`` of the run's :class:`~vecbinlog.binlog.headers.EventIndex` are positions in
    ``buf``; an error found at such a position is reported at the file offset of what went
    wrong through :meth:`file_offset` / :meth:`relocate`.
    """

    @property
    def buf(self) -> np.ndarray:
        """The events' bytes (uint8)."""
        ...

    @property
    def path(self) -> str:
        """The file as messages name it."""
        ...

    @property
    def name(self) -> str:
        """The file's name."""
        ...

    @property
    def formats(self) -> list[FormatDescription]:
        """The file's FORMAT_DESCRIPTION_EVENTs met so far (``index.fmt`` indexes them)."""
        ...

    @property
    def verify_checksums(self) -> bool:
        """Whether the CRC32 of events is checked when they are decoded."""
        ...

    def verify_checksums_of(self, index: EventIndex, which: np.ndarray | None = None) -> None:
        """Check the CRC32 of the events of ``index`` (those ``which``, a boolean mask, selects)."""
        ...

    def file_offset(self, offset: int) -> int:
        """The file offset of ``buf[offset]``."""
        ...

    def relocate(self, exc: BinlogError) -> BinlogError:
        """``exc``, raised with an offset in ``buf``, at the file offset of what went wrong."""
        ...


def event_path(src: EventSource, i: int) -> str:
    """The path of the file that event ``i`` of a segment's events came from: ``src.path``, or
    that event's own file when ``src`` holds the events of several
    (:class:`~vecbinlog.binlog.gathered.Gathered`, whose ``file_of`` gives each event's)."""
    file_of = getattr(src, "file_of", None)
    if file_of is None:
        return src.path
    paths: list[str] = getattr(src, "paths")  # a Gathered's, as file_of (not EventSource's)
    return paths[int(file_of[i])]
