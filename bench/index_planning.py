"""What the archive index saves the driver (issue 36): bytes of binlog read and time to plan splits
with and without the index, the index's size, and what a read of one table plans with it.

    python bench/index_planning.py ARCHIVE... [--files 10,100,1000] [--s3] [--split-bytes 64m] [--table db.t]

ARCHIVE: files, globs, a folder or a mysql-bin.index, as ``vecbinlog.open`` takes them; with
``--files``, the measurements are made for the first N files (log order) of it, for each N (an N
above the archive's count is said and skipped). A row per N: the index built (``build_index``,
its default processes: one per GiB; after a first build of one file elsewhere, for the
imports and compiled kernels) and its size, then ``plan_splits`` and ``open().tables``
without the index and with it, each best of three, with the binlog bytes one of them reads
(``open()`` opens every file, reading its first 64 KiB, with the index too).

Locally, the index is in a temporary folder and the binlogs are read through a pyarrow filesystem
that counts the bytes read (tests/support/countingfs.py, as an object store is read). With
``--s3``, moto's S3 server is started on 127.0.0.1 (a free port; in this process, so its
threads share the GIL with the planning), the N files are uploaded with boto3 under ``nN/``
of a bucket ``binlogs`` and read by their URIs (``s3://binlogs/nN/NAME?endpoint_override=...``),
the index built from them into ``s3://binlogs/nN-index``; the bytes counted are the bodies of the
server's GET responses for the binlog objects (and, said apart, for the index's objects).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the credentials a deployment would give (as tests/support/fixtures.py's ``s3``)
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                  "AWS_EC2_METADATA_DISABLED": "true"}
BUCKET = "binlogs"


def _best(fn, counter=None, repeat: int = 3):
    """(best time, the result, bytes ``counter`` counted in one run) of ``repeat`` runs."""
    best, out, read = float("inf"), None, {}
    for _ in range(repeat):
        if counter is not None:
            counter.reset()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
        if counter is not None:
            read = counter.snapshot()
    return best, out, read


def _size(n: float) -> str:
    if n == 0:
        return "0 B"
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB" if n >= 1e3 else f"{n:.0f} B"


class _LocalCount:
    """The bytes read through a counting filesystem (tests/support/countingfs.py)."""

    def __init__(self, handler) -> None:
        self.handler = handler

    def reset(self) -> None:
        self.handler.read = 0

    def snapshot(self) -> dict:
        return {"binlog": self.handler.read}


class _GetCount:
    """A WSGI middleware counting the body bytes of GET responses: those of the binlog objects
    (keys under ``prefix/``) and of the index's (under ``prefix-index/``), and the requests."""

    def __init__(self, app) -> None:
        self.app, self.prefix = app, None
        self.reset()

    def reset(self) -> None:
        self.binlog = self.index = self.requests = 0

    def snapshot(self) -> dict:
        return {"binlog": self.binlog, "index": self.index, "requests": self.requests}

    def __call__(self, environ, start_response):
        self.requests += 1
        body = self.app(environ, start_response)
        path = environ.get("PATH_INFO", "")
        if environ.get("REQUEST_METHOD") != "GET" or not self.prefix:
            return body
        kind = ("binlog" if path.startswith(f"/{BUCKET}/{self.prefix}/")
                else "index" if path.startswith(f"/{BUCKET}/{self.prefix}-index/") else None)
        if kind is None:
            return body

        def counted():
            try:
                for chunk in body:
                    setattr(self, kind, getattr(self, kind) + len(chunk))
                    yield chunk
            finally:
                if hasattr(body, "close"):
                    body.close()

        return counted()


class _S3:
    """moto's S3 server on 127.0.0.1, a bucket ``binlogs``, its GET bytes counted."""

    def __enter__(self):
        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        os.environ.update(S3_CREDENTIALS)
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        self.count = _GetCount(self.server._server.app)  # werkzeug's server calls its ``app`` per request
        self.server._server.app = self.count
        host, port = self.server.get_host_and_port()
        self.query = f"?endpoint_override={host}:{port}&scheme=http&region=us-east-1"
        self.client = boto3.client("s3", endpoint_url=f"http://{host}:{port}")
        self.client.create_bucket(Bucket=BUCKET)
        return self

    def __exit__(self, *exc) -> None:
        self.server.stop()

    def upload(self, files: list[str], prefix: str) -> list[str]:
        for f in files:
            self.client.upload_file(f, BUCKET, f"{prefix}/{os.path.basename(f)}")
        return [f"s3://{BUCKET}/{prefix}/{os.path.basename(f)}{self.query}" for f in files]

    def stored(self, prefix: str) -> int:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{prefix}/")
        return sum(o["Size"] for page in pages for o in page.get("Contents", []))


def measure(files: list[str], location: str, total: int, index_size, split_bytes: int, table: str | None,
            counter, filesystem=None) -> dict:
    """One row: the index built into ``location``, then the plans without and with it."""
    import vecbinlog
    from vecbinlog.splits import plan_splits

    row = {"files": len(files), "archive": total}
    t = time.perf_counter()
    vecbinlog.build_index(files, location)
    row["build"] = time.perf_counter() - t
    row["again"], _, _ = _best(lambda: vecbinlog.build_index(files, location), repeat=1)
    row["index"] = index_size()
    fs = {} if filesystem is None else {"filesystem": filesystem}
    for key, extra in (("walk", {}), ("index", {"index": location})):
        row[f"plan_{key}"] = _best(lambda extra=extra: plan_splits(files, split_bytes, **fs, **extra), counter)

        def tables(extra=extra):
            with vecbinlog.open(files, **fs, **extra) as log:
                return log.tables

        row[f"tables_{key}"] = _best(tables, counter)
        if table:
            splits = plan_splits(files, split_bytes, tables=table, **extra)
            row[f"table_{key}"] = (len(splits), sum(s.size or 0 for s in splits), len({s.path for s in splits}))
    return row


def _cell(measured) -> str:
    took, _, read = measured
    extra = f" (index {_size(read['index'])})" if read.get("index") else ""
    return f"{took:.3f} s, {_size(read['binlog'])}{extra}"


def render(row: dict, table: str | None) -> str:
    cells = [f"{row['files']}", _size(row["archive"]), f"{_size(row['index'])} ({100 * row['index'] / row['archive']:.3f}%)",
             f"{row['build']:.2f} s, again {row['again']:.2f} s",
             _cell(row["plan_walk"]), _cell(row["plan_index"]), _cell(row["tables_walk"]), _cell(row["tables_index"])]
    if table:
        for key in ("walk", "index"):
            n, size, in_files = row[f"table_{key}"]
            cells.append(f"{n} split{'s' * (n != 1)}, {_size(size)} ({100 * size / row['archive']:.3g}%), "
                         f"{in_files} file{'s' * (in_files != 1)}")
    return "| " + " | ".join(cells) + " |"


def header(table: str | None) -> str:
    names = ["files", "archive", "index (% of archive)", "build_index (up to date)", "plan_splits walking",
             "with the index", "open().tables walking", "with the index"]
    if table:
        names += [f"plan of {table} walking", "with the index"]
    return "| " + " | ".join(names) + " |\n|" + " --- |" * len(names)


def main() -> None:
    import vecbinlog
    from tests.support.countingfs import counting_filesystem
    from vecbinlog.index import archive_paths
    from vecbinlog.log.config import text_bytes as to_bytes

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("archive", nargs="+")
    p.add_argument("--files", help="comma-separated counts: measure the first N files, for each N (default: all)")
    p.add_argument("--s3", action="store_true", help="upload the files to moto's S3 server and read them from there")
    p.add_argument("--split-bytes", default="64m")
    p.add_argument("--table", help="also plan a read of this table only (pruned with the index)")
    args = p.parse_args()
    split_bytes = to_bytes(args.split_bytes)
    warnings.simplefilter("ignore")
    files = archive_paths(args.archive if len(args.archive) > 1 else args.archive[0])
    counts = [int(n) for n in args.files.split(",")] if args.files else [len(files)]
    print(f"{len(files)} files; splits of {split_bytes:,} bytes; {'moto S3 on 127.0.0.1' if args.s3 else 'local'}; "
          "times best of 3", flush=True)
    for n in counts:
        if n > len(files):
            print(f"{n} files: the archive has only {len(files)}: skipped", flush=True)
    counts = [n for n in counts if n <= len(files)]
    print(header(args.table), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        vecbinlog.build_index(files[:1], Path(folder) / "warm")  # imports and compiled kernels: not in a row's build
        if args.s3:
            with _S3() as s3:
                for n in counts:
                    prefix = f"n{n}"
                    uris = s3.upload(files[:n], prefix)
                    s3.count.prefix = prefix
                    row = measure(uris, f"s3://{BUCKET}/{prefix}-index{s3.query}", s3.stored(prefix),
                                  lambda prefix=prefix: s3.stored(f"{prefix}-index"), split_bytes, args.table, s3.count)
                    print(render(row, args.table), flush=True)
            return
        fs, handler = counting_filesystem()
        for n in counts:
            location = Path(folder) / f"index-{n}"
            row = measure(files[:n], str(location), sum(os.path.getsize(f) for f in files[:n]),
                          lambda location=location: sum(f.stat().st_size for f in location.iterdir()),
                          split_bytes, args.table, _LocalCount(handler), filesystem=fs)
            print(render(row, args.table), flush=True)


if __name__ == "__main__":
    main()
