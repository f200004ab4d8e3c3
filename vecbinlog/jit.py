"""How vecbinlog's kernels are compiled and loaded: numba's ``njit``, without the GIL
(``nogil``), cached on disk, and loaded from that cache without numba's full set-up.

Before numba loads a cached function, it "refreshes" its target context: it imports and
registers every implementation numba has (strings, dicts, sets, random numbers, linear
algebra...). Only *compiling* needs those; a compiled kernel read back from the cache needs
numba's runtime (NRT: what allocates arrays inside a kernel) and nothing more. That refresh
was the largest single piece of a warm start: 0.10-0.16 s of the ~0.8 s that ``vecbinlog cat``
takes on a 61 MB file. So a kernel's cache here (:class:`_Cache`) sets up the NRT and loads;
when a kernel has to be compiled (first use, a cache made by another numba version), numba's
compiler refreshes the contexts itself, as always. A numba developer tried the same change
upstream (numba PR #9806). It applies to vecbinlog's own kernels only, and only if numba's
cache class is what it expects (numba 0.60-0.68 are); otherwise a kernel keeps numba's own
cache, which is slower to start and otherwise the same.

More of numba's start is skipped or put off (the OLTP file's 16 kernels loaded in 50-70 ms,
now ~25 ms):

* the NRT's own small library, which numba compiles from LLVM IR in every process (15-17 ms),
  is kept as object code in the kernels' cache folder (:func:`_start_nrt`), keyed by the numba
  and llvmlite versions and the CPU numba compiles for, as numba keys its own cache;
* a kernel's library is saved with the names it defines, and its bitcode (kept to link it into
  another kernel) is parsed only when that happens (:class:`_LinkLater`; numba parses it at
  each load, ~1 ms a kernel);
* a kernel's cache is made at its first call, not when its module is imported
  (:class:`_LazyCache`: ~0.15 ms each, 67 kernels);
* its first call does not look for numba's extensions (:func:`_no_extensions`).

The cache is numba's: ``__pycache__`` next to each module, or under ``NUMBA_CACHE_DIR``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import mmap
import os
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

import llvmlite
import llvmlite.binding as llvm
import numba
from llvmlite import ir as llvm_ir
from llvmlite.binding import ffi as llvm_ffi
from numba import njit, types
from numba.core import cgutils, config
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.codegen import JITCodeLibrary
from numba.core.runtime import _nrt_python, nrtdynmod, rtsys  # type: ignore[attr-defined]
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros
from numba.extending import intrinsic as _intrinsic

__all__ = ["kernel", "intrinsic", "host_x86_has", "load_word", "store_word", "prefetch", "trailing_zeros", "check_spans",
           "read_only", "sparse_empty"]

#: numba's ``intrinsic``, typed as what a kernel calls: a function of the kernel's arguments
#: (numba's own type is that of the typing function, whose first parameter is ``typingctx``)
intrinsic: Callable[[Callable[..., Any]], Any] = _intrinsic
#: numba's count of a word's low zero bits, typed as what a kernel calls
trailing_zeros: Any = _trailing_zeros


#: the kind of a kernel's library in the cache when :class:`_Impl` saved it: numba's "object"
#: (object code, and the bitcode numba keeps to link it into another kernel) with the names it
#: defines; numba's own loader refuses another kind rather than misread it
_OBJECT_AND_NAMES = "vecbinlog-object-names-1"


class _LinkLater(JITCodeLibrary):
    """A kernel's library loaded from object code, whose bitcode is parsed only if another
    kernel is compiled that links it in (numba parses it at every load: ~1 ms a kernel, 15 ms of
    the OLTP file's first read)."""

    _bitcode: bytes | None = None
    _parsed: Any = None

    @property
    def _shared_module(self) -> Any:
        if self._parsed is None and self._bitcode is not None:
            self._parsed, self._bitcode = llvm.parse_bitcode(self._bitcode), None
        return self._parsed

    @_shared_module.setter
    def _shared_module(self, module: Any) -> None:
        self._parsed, self._bitcode = module, None

    @classmethod
    def load(cls, codegen: Any, state: Any) -> Any:
        """What numba's ``_unserialize`` does with an "object" library, the names it defines read
        from ``state`` rather than from its parsed bitcode; a library of another kind, numba's."""
        name, kind, data = state
        if kind != _OBJECT_AND_NAMES:
            return JITCodeLibrary._unserialize(codegen, state)
        object_code, bitcode, names = data
        library = cls(codegen, name)
        library.enable_object_caching()
        library._set_compiled_object(object_code)
        library._bitcode = bitcode
        library._finalize_final_module()
        codegen._engine._defined_symbols.update(names)
        return library


class _Impl(CompileResultCacheImpl):
    """numba's way to save and rebuild a kernel, its library saved with the names it defines
    and loaded by :meth:`_LinkLater.load`."""

    def reduce(self, cres: Any) -> Any:
        payload = super().reduce(cres)
        name, kind, data = payload[0]
        if kind != "object":
            return payload
        module = cres.library._get_module_for_linking()  # (what data's bitcode is made of)
        names = sorted({v.name for vs in (module.functions, module.global_variables) for v in vs
                        if not v.is_declaration})
        return ((name, _OBJECT_AND_NAMES, (*data, names)), *payload[1:])

    def rebuild(self, target_context: Any, payload: Any) -> Any:
        codegen = target_context.codegen()
        before = vars(codegen).get("unserialize_library")  # (None: the class's method)
        codegen.unserialize_library = functools.partial(_LinkLater.load, codegen)  # (under the compiler lock)
        try:
            return super().rebuild(target_context, payload)
        finally:
            if before is None:
                vars(codegen).pop("unserialize_library", None)
            else:
                codegen.unserialize_library = before


class _Cache(FunctionCache):
    """numba's cache of one function, loaded without refreshing the target context."""

    _impl_class = _Impl

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        with _quiet_llvm_lock():
            _start_nrt(target_context)  # what refresh() did that a loaded kernel needs
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        return None  # an I/O error the guard swallowed: numba compiles instead


class _LazyCache:
    """A kernel's :class:`_Cache`, made when numba first asks it for something (a load, a save)
    rather than when the kernel's module is imported: making one looks for a writable folder
    (~0.15 ms), and most kernels are not called by a given process."""

    def __init__(self, py_func: Callable) -> None:
        self._py_func = py_func
        self._cache: _Cache | None = None

    def __getattr__(self, name: str) -> Any:
        if self._cache is None:
            self._cache = _Cache(self._py_func)
        return getattr(self._cache, name)


#: the pieces of numba :func:`_start_nrt` does what ``rtsys.initialize`` does with (numba
#: 0.60-0.68 have them); without them, or with NRT statistics asked for, numba's own start
_NRT_PARTS = (hasattr(nrtdynmod, "create_nrt_module") and hasattr(_nrt_python, "c_helpers")
              and hasattr(rtsys, "_init") and hasattr(type(rtsys), "library"))
#: the NRT library's file in the cache: a SHA-256 of the rest, the object code's length (8
#: bytes, little-endian), the object code, the library's bitcode (which numba keeps to link it)
_NRT_MAGIC = b"vecbinlog-nrt-1\n"
#: where the NRT library came from in this process: "cache", "compiled" (and saved), or
#: "numba" (numba's own start)
nrt_source: str | None = None


def _start_nrt(target_context: Any) -> None:
    """``rtsys.initialize(target_context)``, the NRT's library loaded from the kernels' cache
    folder where an earlier process left it, else compiled (as numba does) and left there. A
    file that is not whole (its checksum) is compiled over; one made for another CPU, numba or
    llvmlite has another name. Under numba's compiler lock (held by the load that calls it)."""
    global nrt_source
    if rtsys._init:
        return
    if not _NRT_PARTS or config.NRT_STATS:  # type: ignore[attr-defined]
        rtsys.initialize(target_context)
        nrt_source = "numba"
        return
    for py_name, address in _nrt_python.c_helpers.items():  # (as rtsys.initialize registers them)
        llvm.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)
    codegen = target_context.codegen()
    path = _nrt_path(codegen)
    library = _load_nrt(codegen, path) if path is not None else None
    nrt_source = "cache"
    if library is None:
        ir_module, library = nrtdynmod.create_nrt_module(target_context)
        library.enable_object_caching()
        library.add_ir_module(ir_module)
        library.finalize()
        nrt_source = "compiled"
        if path is not None:
            _save_nrt(library, path)
    rtsys._library = library
    rtsys._init = True


def _nrt_anchor() -> None:
    """A function of this module, for numba's cache locator to find this module's cache folder."""


def _nrt_path(codegen: Any) -> Path | None:
    """The NRT library's file in this module's cache folder (None: no folder numba can write)."""
    try:
        folder = Path(_Cache(_nrt_anchor).cache_path)
    except (RuntimeError, OSError):
        return None
    key = repr((numba.__version__, llvmlite.__version__, codegen.magic_tuple())).encode()
    return folder / f"vecbinlog-nrt-{hashlib.sha256(key).hexdigest()[:20]}.nbo"


def _load_nrt(codegen: Any, path: Path) -> Any:
    """The NRT library read back from ``path``, or None (no file, or not whole)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_NRT_MAGIC)
    body = data[head + 32:]
    if data[:head] != _NRT_MAGIC or hashlib.sha256(body).digest() != data[head:head + 32] or len(body) < 8:
        return None
    size = int.from_bytes(body[:8], "little")
    obj, bitcode = body[8:8 + size], body[8 + size:]
    return codegen.unserialize_library(("nrt", "object", (obj, bitcode)))


def _save_nrt(library: Any, path: Path) -> None:
    """``library`` (compiled with object caching) written to ``path`` whole or not at all: a
    file of its own renamed over it; a folder that refuses is no error (the next process
    compiles it again)."""
    _, _, (obj, bitcode) = library.serialize_using_object_code()
    body = len(obj).to_bytes(8, "little") + obj + bitcode
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")  # (as numba writes its own files)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "xb") as out:
            out.write(_NRT_MAGIC + hashlib.sha256(body).digest() + body)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def _quiet_llvm_lock() -> Iterator[None]:
    """While a kernel is loaded from numba's cache: no callbacks on llvmlite's lock. numba
    registers one pair, which broadcasts a "numba:llvm_lock" event (a timing for its own
    compiler's statistics) at each of the ~115 calls into LLVM that rebuilding a kernel from
    its cached object code makes; a load holds numba's compiler lock, so no compilation waits
    on those events. The 16 kernels of the OLTP file's first read loaded in 51-62 ms, not
    68-71 ms. The list is swapped under llvmlite's own lock (never while another thread is
    between a call's two callbacks); an llvmlite without it: nothing done."""
    lock = getattr(getattr(llvm_ffi, "lib", None), "_lock", None)
    inner, callbacks = getattr(lock, "_lock", None), getattr(lock, "_cblist", None)
    if inner is None or not isinstance(callbacks, list):
        yield
        return
    with inner:
        saved = callbacks[:]
        callbacks.clear()
    try:
        yield
    finally:
        with inner:
            callbacks[:0] = saved  # (before any registered meanwhile)


#: numba's cache class has what :class:`_Cache` relies on
_LEAN = (all(hasattr(FunctionCache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors"))
         and all(hasattr(JITCodeLibrary, name) for name in ("_unserialize", "_finalize_final_module",
                                                            "_set_compiled_object")))


def _no_extensions() -> None:
    """A kernel's first call does not look for numba's extensions (``numba_extensions`` entry
    points: a scan of every installed package's metadata, ~4 ms with 146 packages): no kernel
    uses one. Compiling one still loads them (numba's target context does, as it refreshes)."""


def kernel(fn: Callable | None = None, /, **options: Any) -> Any:
    """``numba.njit(nogil=True, cache=True, **options)``, with the lean cache loading above.
    Used bare (``@kernel``) or with options (``@kernel(inline="always")``)."""

    def make(f: Callable) -> Any:
        dispatcher = njit(nogil=True, **options)(f)
        if not hasattr(dispatcher, "enable_caching"):  # NUMBA_DISABLE_JIT=1: the Python function
            return dispatcher
        if _LEAN:
            dispatcher._cache = _LazyCache(dispatcher.py_func)  # what cache=True does, with _Cache
            dispatcher._compilation_chain_init_hook = _no_extensions
        else:  # pragma: no cover - another numba
            dispatcher.enable_caching()
        return dispatcher

    return make(fn) if fn is not None else make


def check_spans(size: int, start: Any, end: Any, what: str, path: str | None = None) -> None:
    """Before a kernel reads ``buf[start[i]:end[i]]`` for every ``i`` (arrays or ints), that
    each is inside ``buf`` (``size`` bytes): one vectorised check per call, never one per
    value in the kernel's loop. A kernel reads unchecked words (:func:`load_word`) and trusts
    its caller's offsets; a range outside (a malformed event, or a buffer that is not the
    one the offsets were found in) is a :class:`~vecbinlog.MalformedEventError` here, never
    a read of memory that is not the buffer's."""
    if isinstance(start, int) and isinstance(end, int):
        lo, hi, reversed_ = start, end, end < start
    else:
        import numpy as np

        start, end = np.asarray(start), np.asarray(end)
        if start.size == 0:
            return
        lo, hi, reversed_ = int(start.min()), int(end.max()), bool(np.any(end < start))
    if lo < 0 or hi > size or reversed_:
        from .errors import MalformedEventError

        raise MalformedEventError(f"{what}: byte ranges from {lo} to {hi} are not all inside the {size} bytes they "
                                  "are read from", path=path)


def read_only(buf: Any) -> Any:
    """``buf`` (an array of binlog bytes) as kernels take it: read-only. numba compiles, and
    loads from its cache, a kernel once per kind of argument, and a writable array is another
    kind than a read-only one: a file's mapped bytes are read-only, its head, a copy of small
    files joined or an unpacked payload writable; each loaded twice cost ~2 ms of a process's
    first read, each compiled twice ~0.5 s of a first run."""
    if not buf.flags.writeable:
        return buf
    view = buf.view()
    view.flags.writeable = False
    return view


#: numpy asks the OS for huge pages for a block of this many bytes or more (``madvise``
#: ``MADV_HUGEPAGE``: numpy/_core/src/multiarray/alloc.c)
HUGE_PAGE_HINT_BYTES = 4 << 20


def sparse_empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.empty(shape, dtype)`` for an array of which a kernel may write a small part (room for
    as many values as the bytes could hold, or a region per column of which the first values
    are written): one of 4 MB or more from a private anonymous map of its own, without the
    huge-page hint numpy gives such a block (and marked not to get them where THP is "always").
    With the hint, each 2 MB that writes touch is a huge page, zeroed whole, and found by
    compaction when memory is fragmented (THP ``defrag`` is ``madvise`` by default): the first
    read of a process (whose blocks are new, not the C library's kept ones) of 56 tables spent
    0.2-0.5 s so in the row walk, against ~15 ms without. Pages not touched hold no memory; the
    map goes with the last view of it."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    dt = np.dtype(dtype)
    count = int(math.prod(dims))  # (np.prod: 2 us a call, ~1 100 calls a read of 56 tables)
    private, anonymous = getattr(mmap, "MAP_PRIVATE", None), getattr(mmap, "MAP_ANONYMOUS", None)
    if count * dt.itemsize < HUGE_PAGE_HINT_BYTES or private is None or anonymous is None:
        return np.empty(dims, dt)
    try:
        block = mmap.mmap(-1, count * dt.itemsize, flags=private | anonymous)
    except OSError:  # (no room to map: numpy's own block, or its MemoryError)
        return np.empty(dims, dt)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # (THP "always" would give it huge pages all the same)
        with contextlib.suppress(OSError):  # (a kernel without THP refuses the advice: none needed)
            block.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(block, dt, count).reshape(dims)


def host_x86_has(feature: str) -> bool:
    """Whether numba compiles for this CPU (no ``NUMBA_CPU_NAME``, which compiles for another)
    and it is an x86-64 CPU with ``feature`` (LLVM's name: "pclmul", "avx2"): what the kernels
    that use x86 instructions directly check before they are used."""
    import platform

    from numba.core import config

    # numba.core.config sets its names from the environment at import (globals().update): unseen by mypy
    cpu_name = config.CPU_NAME  # type: ignore[attr-defined]
    if cpu_name is not None or platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    import llvmlite.binding as llvm

    try:
        return f"+{feature}" in llvm.get_host_cpu_features().flatten().split(",")
    except RuntimeError:
        return False


# -- unaligned words, for kernels ------------------------------------------------------------
# A fixed-width value is moved as one 8-byte word (a load from the binlog, a store into its
# column): branch-free, whatever its width (up to 8; wider ones in 8-byte steps). The bytes past
# the value's width land in the slot of the column's next value, written afterwards, or in 8
# bytes of padding after the column: never in the output. Loads are made only where 8 bytes
# are inside the buffer (``rowwalk._load``); near its end the bytes are read one at a time.


@intrinsic
def load_word(typingctx, arr, idx):  # pragma: no cover - compiled
    """The 8 bytes of ``arr`` (uint8) at ``idx``, little-endian, unaligned; unchecked."""
    sig = types.uint64(arr, idx)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        word = builder.bitcast(builder.gep(data, [args[1]]), llvm_ir.IntType(64).as_pointer())
        return builder.load(word, align=1)

    return sig, codegen


@intrinsic
def store_word(typingctx, arr, idx, value):  # pragma: no cover - compiled
    """Write the 8 bytes of ``value`` into ``arr`` (uint8) at ``idx``, unaligned; unchecked."""
    sig = types.void(arr, idx, value)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        word = builder.bitcast(builder.gep(data, [args[1]]), llvm_ir.IntType(64).as_pointer())
        builder.store(args[2], word, align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch(typingctx, arr, idx):  # pragma: no cover - compiled
    """Ask for the cache line of ``arr[idx]`` to be loaded (LLVM's prefetch: a hint, no fault)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        i32 = llvm_ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, llvm_ir.FunctionType(llvm_ir.VoidType(), [data.type, i32, i32, i32]), "llvm.prefetch")
        builder.call(fn, [builder.gep(data, [args[1]]), llvm_ir.Constant(i32, 0), llvm_ir.Constant(i32, 3),
                          llvm_ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
