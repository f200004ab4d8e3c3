"""Thread pools shared by the readers, by name, each made anew in a forked child.

A forked child (a Spark worker, a multiprocessing pool) inherits the parent's pool objects
but not their threads: work submitted to them would never run. :func:`pool` hands out a
process's own pool, grown when more workers are asked for.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["in_pool", "pool"]

#: name -> (the process that made it, its workers, the pool)
_POOLS: dict[str, tuple[int, int, ThreadPoolExecutor]] = {}


def pool(name: str, workers: int = 1) -> ThreadPoolExecutor:
    """This process's pool ``name`` (threads named ``vecbinlog-<name>``) of at least ``workers`` threads."""
    made = _POOLS.get(name)
    if made is None or made[0] != os.getpid() or made[1] < workers:
        made = (os.getpid(), workers, ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"vecbinlog-{name}"))
        _POOLS[name] = made
    return made[2]


def in_pool(name: str) -> bool:
    """Whether the calling thread is one of pool ``name``'s."""
    return threading.current_thread().name.startswith(f"vecbinlog-{name}_")
