"""A pyarrow filesystem that counts the bytes read through it: the local filesystem behind
``pyarrow.fs.PyFileSystem``, as an object store is read (ranged reads of files opened by path),
so that a test can say how much of the binlogs a plan reads (tests/test_index.py)."""

from __future__ import annotations

import io
import threading

import pyarrow as pa
import pyarrow.fs as pafs


class _Counted(io.RawIOBase):
    """A local file whose reads add to ``counter.read``."""

    def __init__(self, path: str, counter: CountingHandler) -> None:
        self._f = open(path, "rb")  # noqa: SIM115 - closed with this object
        self._counter = counter
        counter.open_now[id(self)] = path

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self._counter.count(len(data))
        return data

    def readinto(self, b) -> int:
        n = self._f.readinto(b)
        self._counter.count(n)
        return n

    def close(self) -> None:
        self._f.close()
        self._counter.open_now.pop(id(self), None)
        super().close()


class CountingHandler(pafs.FileSystemHandler):
    """The local filesystem, every byte read through it counted in ``read`` (the files opened
    in ``opened``, those not closed yet in ``open_now``)."""

    def __init__(self) -> None:
        self.local = pafs.LocalFileSystem()
        self.read = 0
        self.opened: list[str] = []
        self.open_now: dict[int, str] = {}  #: the files opened and not closed yet, by the id of their reader
        self._lock = threading.Lock()  # (files in a filesystem are opened and read on several threads)

    def count(self, n: int) -> None:
        with self._lock:
            self.read += n

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def get_type_name(self) -> str:
        return "counting"

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def create_dir(self, path, recursive):
        self.local.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self.local.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self.local.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise NotImplementedError

    def delete_file(self, path):
        self.local.delete_file(path)

    def move(self, src, dest):
        self.local.move(src, dest)

    def copy_file(self, src, dest):
        self.local.copy_file(src, dest)

    def open_input_stream(self, path):
        self.opened.append(path)
        return pa.PythonFile(_Counted(path, self), mode="r")

    def open_input_file(self, path):
        self.opened.append(path)
        return pa.PythonFile(_Counted(path, self), mode="r")

    def open_output_stream(self, path, metadata):
        return self.local.open_output_stream(path)

    def open_append_stream(self, path, metadata):
        return self.local.open_append_stream(path)


def counting_filesystem() -> tuple[pafs.PyFileSystem, CountingHandler]:
    """(the filesystem, its handler: ``handler.read`` is the bytes read so far)."""
    handler = CountingHandler()
    return pafs.PyFileSystem(handler), handler
