"""The driver's walk of binlogs in object storage, without an index (issue 36: "files walked in
parallel"): ``plan_splits`` and ``open().tables`` of N files, for one or more checkouts.

    python bench/s3_planning.py FILES... [--files 100] [--latency 20] [--trees /work/main,.] [--rounds 2]

moto's S3 server runs in a process of its own on 127.0.0.1 (a free port), each request held
``--latency`` milliseconds before it is answered (S3's time to a first byte is tens of
milliseconds; moto on this machine answers in ~6 ms of its own CPU, which is the limit with
``--latency 0``). The first N of FILES (log order) are uploaded to a bucket, then each checkout
(``--trees``: folders holding a ``vecbinlog`` package, default this one) is timed in a child
process of its own, best of 3, the checkouts alternating in each of ``--rounds`` rounds.
``--build``: also ``build_index(processes=1)`` of the files, into a new location of the bucket
each time (once: a second build would find it up to date).
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_EC2_METADATA_DISABLED": "true"}

CHILD = r"""
import sys, timeit, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import vecbinlog
from vecbinlog.splits import plan_splits
uris = sys.argv[2].split(",")

def best(fn):
    return min(timeit.repeat(fn, number=1, repeat=3))

def tables():
    with vecbinlog.open(uris) as log:
        return log.tables

plan_splits(uris[:1], 64 << 20)  # imports and compiled kernels
line = f"{vecbinlog.__file__.rsplit('/', 2)[0]}: plan_splits {best(lambda: plan_splits(uris, 64 << 20)):.2f} s, open().tables {best(tables):.2f} s"
if sys.argv[3]:  # build_index in this process, into a new location in the bucket
    built = timeit.repeat(lambda: vecbinlog.build_index(uris, sys.argv[3], processes=1), number=1, repeat=1)[0]
    line += f", build_index(processes=1) {built:.2f} s"
print(line)
"""


def serve(port: int, latency_ms: float) -> None:
    """moto's server on 127.0.0.1:``port``, each request answered ``latency_ms`` late."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    app = server._server.app  # werkzeug's server calls its ``app`` per request

    def held(environ, start_response):
        time.sleep(latency_ms / 1000)
        return app(environ, start_response)

    server._server.app = held
    while True:
        time.sleep(3600)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*")
    p.add_argument("--files", dest="count", type=int, default=100)
    p.add_argument("--latency", type=float, default=20.0, help="milliseconds each request is held")
    p.add_argument("--trees", default=str(ROOT), help="comma-separated checkouts to time")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--build", action="store_true", help="also build_index(processes=1) into the bucket, once per run")
    p.add_argument("--serve", nargs=2, metavar=("PORT", "MS"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve(int(args.serve[0]), float(args.serve[1]))
        return
    import boto3

    from vecbinlog.index import archive_paths

    env = {**os.environ, **CREDENTIALS}
    os.environ.update(CREDENTIALS)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), str(args.latency)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}")
        for _ in range(100):
            try:
                client.list_buckets()
                break
            except Exception:  # noqa: BLE001 - not listening yet
                time.sleep(0.2)
        client.create_bucket(Bucket="binlogs")
        files = archive_paths(args.files if len(args.files) > 1 else args.files[0])[: args.count]
        for f in files:
            client.upload_file(f, "binlogs", f"a/{os.path.basename(f)}")
        query = f"?endpoint_override=127.0.0.1:{port}&scheme=http&region=us-east-1"
        uris = ",".join(f"s3://binlogs/a/{os.path.basename(f)}{query}" for f in files)
        size = sum(os.path.getsize(f) for f in files)
        print(f"{len(files)} files, {size / 1e6:.1f} MB, in moto S3 on 127.0.0.1, each request held {args.latency:g} ms",
              flush=True)
        for rnd in range(args.rounds):
            trees = args.trees.split(",")
            for tree in trees if rnd % 2 == 0 else trees[::-1]:
                location = f"s3://binlogs/index-{rnd}-{trees.index(tree)}{query}" if args.build else ""
                out = subprocess.run([sys.executable, "-c", CHILD, str(Path(tree).resolve()), uris, location], env=env,
                                     capture_output=True, text=True, cwd="/")
                print(f"round {rnd + 1}, {tree}: {out.stdout.strip() or out.stderr[-2000:]}", flush=True)
    finally:
        server.terminate()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
