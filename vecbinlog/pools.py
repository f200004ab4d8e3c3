"""Background work: the thread pools a process shares, and the task groups that own what runs on them.

Threads are shared: a pool per kind of work (``batch``: runs decoded while the log is walked
on; ``columns``: the columns of one large batch; ``release``: pages of a memory map let go
of; ``read``/``ahead``/``open``: object storage read ahead...), made anew in a forked child
(a Spark worker, a multiprocessing pool inherits the parent's pool objects but not their
threads: work submitted to them would never run).

Work is owned: everything that runs beside the caller's thread is submitted through a
:class:`TaskGroup`, whose owner (an open log, one of its reads, a file's byte source) closes
it before it lets go of any buffer the work reads. :meth:`TaskGroup.close` cancels what has not
started and waits for what has, as ``concurrent.futures.Executor.shutdown(cancel_futures=True)``
does for a whole pool: once it returns, nothing the group started still runs. A task is handed
the arrays it reads (a pinned view), never an object whose bytes its owner may swap.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable, TypeVar

from .errors import ClosedError

__all__ = ["TaskGroup", "in_pool", "pool", "run_all", "running"]

T = TypeVar("T")

#: name -> (the process that made it, its workers, the pool)
_POOLS: dict[str, tuple[int, int, ThreadPoolExecutor]] = {}
_POOLS_LOCK = threading.Lock()

#: seconds every task waits before it runs. A test hook: set it (``vecbinlog.pools.TASK_DELAY =
#: 0.02``) to make background work outlive the read that started it every time, not by chance
#: (tests/test_lifecycle.py). 0 in a user's process.
TASK_DELAY = 0.0

_running = 0  # tasks submitted through a group that are running now, in this process
_running_lock = threading.Lock()


def pool(name: str, workers: int = 1) -> ThreadPoolExecutor:
    """This process's pool ``name`` (threads named ``vecbinlog-<name>``) of at least ``workers``
    threads. Submit to it through a :class:`TaskGroup`, which owns what it submits."""
    with _POOLS_LOCK:
        made = _POOLS.get(name)
        if made is None or made[0] != os.getpid() or made[1] < workers:
            old = made[2] if made is not None and made[0] == os.getpid() else None
            made = (os.getpid(), workers, ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"vecbinlog-{name}"))
            _POOLS[name] = made
            if old is not None:  # its tasks still run (their groups own them); its threads end after them
                old.shutdown(wait=False)
        return made[2]


def in_pool(name: str) -> bool:
    """Whether the calling thread is one of pool ``name``'s."""
    return threading.current_thread().name.startswith(f"vecbinlog-{name}_")


def running() -> int:
    """How many tasks submitted through task groups run now in this process (a test's check
    that a closed log left nothing running)."""
    return _running


def _run(fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
    global _running
    with _running_lock:
        _running += 1
    try:
        if TASK_DELAY:
            time.sleep(TASK_DELAY)
        return fn(*args, **kwargs)
    finally:
        with _running_lock:
            _running -= 1


class TaskGroup:
    """The background tasks of one owner (``owner`` names it in errors: ``"the log"``, ``"the
    read"``...), run on the shared pools.

    :meth:`submit` refuses work once the group is closed (:class:`~vecbinlog.errors.ClosedError`);
    :meth:`close` closes the group's children, cancels its tasks not started and waits for those
    running. A group made with a ``parent`` is closed by the parent's :meth:`close` too (a read
    of a log closed with the log), and is forgotten by it once unreferenced.
    """

    def __init__(self, owner: str, parent: TaskGroup | None = None) -> None:
        self.owner = owner
        self._lock = threading.Lock()
        self._futures: set[Future] = set()
        self._children: weakref.WeakSet[TaskGroup] = weakref.WeakSet()
        self._closed = False
        if parent is not None:
            parent._adopt(self)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (no more work is taken)."""
        return self._closed

    def child(self, owner: str) -> TaskGroup:
        """A group of this one's (closed with it)."""
        return TaskGroup(owner, self)

    def _adopt(self, child: TaskGroup) -> None:
        with self._lock:
            if self._closed:
                child._closed = True
                return
            self._children.add(child)

    def submit(self, name: str, workers: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` on pool ``name`` (of at least ``workers`` threads); its future."""
        with self._lock:
            if self._closed:
                raise ClosedError(f"{self.owner} is closed")
            future = pool(name, workers).submit(_run, fn, args, kwargs)
            self._futures.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future: Future) -> None:
        with self._lock:
            self._futures.discard(future)

    def close(self) -> None:
        """Take no more work; cancel what has not started, wait for what runs (the children's
        first). Once it returns, nothing this group started runs. Safe to call again, and
        from any thread but one of the group's own tasks."""
        with self._lock:
            self._closed = True
            children = list(self._children)
            futures = list(self._futures)
        for child in children:
            child.close()
        for future in futures:
            future.cancel()
        wait(futures)

    def __enter__(self) -> TaskGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_all(group: TaskGroup, name: str, workers: int, calls: Iterable[Callable[[], T]]) -> list[T]:
    """Each of ``calls`` run on pool ``name`` through ``group``, their results in order. Every
    call is done (or cancelled) before this returns, also when one fails: the first error in
    order is raised then, as running them one after the other would raise it."""
    futures = [group.submit(name, workers, call) for call in calls]
    try:
        wait(futures, return_when=FIRST_EXCEPTION)
    finally:
        for f in futures:
            f.cancel()
        wait(futures)
    return [f.result() for f in futures]
