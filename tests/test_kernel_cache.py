"""How kernels load from numba's cache (``vecbinlog.jit``): the NRT's library from a file of
ours, a kernel's library without parsing its bitcode until another kernel links it in, and a
kernel's cache made at its first call. Each case runs in fresh processes over a cache folder of
its own (``NUMBA_CACHE_DIR``), with two small kernels written for it: results checked against
NumPy, and where each library came from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

KERNELS = '''
import numpy as np
from vecbinlog.jit import kernel

@kernel
def doubled(n):  # allocates: the NRT
    return np.arange(n) * 2

@kernel
def total(a):
    return doubled(a.size).sum() + a.sum()
'''

#: a child: calls the kernels (loaded from the cache, or compiled into it), then compiles a
#: kernel numba's own way (no cache) that calls ``doubled``: numba links ``doubled``'s library
#: into it; prints what it found (JSON)
CHILD = '''
import json, sys
import numba, numpy as np
import vecbinlog.jit as jit
import kernels

out = {"doubled": kernels.doubled(5).tolist(), "total": int(kernels.total(np.arange(7))),
       "nrt": jit.nrt_source}
lib = kernels.doubled.overloads[kernels.doubled.signatures[0]].library
out["library"] = type(lib).__name__
out["parsed_before_link"] = getattr(lib, "_parsed", "n/a") is not None

@numba.njit
def linked(n):
    return kernels.doubled(n)[-1] + 1

out["linked"] = int(linked(4))
out["parsed_after_link"] = getattr(lib, "_parsed", "n/a") is not None
print(json.dumps(out))
'''


def _run(folder: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "PYTHONPATH": str(folder)}
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=folder, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def _nrt_files(folder: Path) -> list[Path]:
    return sorted((folder / "cache").rglob("vecbinlog-nrt-*.nbo"))


def test_kernels_and_the_nrt_load_from_the_cache_and_link_later(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    expected = {"doubled": (np.arange(5) * 2).tolist(), "total": int((np.arange(7) * 2).sum() + np.arange(7).sum()),
                "linked": int(np.arange(4)[-1] * 2 + 1)}

    first = _run(tmp_path)  # an empty cache: everything compiled, and saved
    assert {k: first[k] for k in expected} == expected
    assert first["nrt"] == "compiled" and len(_nrt_files(tmp_path)) == 1
    assert first["library"] == "JITCodeLibrary"  # (compiled here, not loaded)

    second = _run(tmp_path)  # all from the cache
    assert {k: second[k] for k in expected} == expected
    assert second["nrt"] == "cache"
    assert second["library"] == "_LinkLater"
    assert second["parsed_before_link"] is False  # (its bitcode not parsed to call it)
    assert second["parsed_after_link"] is True  # (parsed when numba linked it into `linked`)


def test_an_nrt_file_not_whole_is_compiled_over(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    _run(tmp_path)
    [nrt] = _nrt_files(tmp_path)
    whole = nrt.read_bytes()
    damaged = bytearray(whole)
    damaged[len(damaged) // 2] ^= 0xFF
    nrt.write_bytes(bytes(damaged))

    again = _run(tmp_path)
    assert again["nrt"] == "compiled" and again["doubled"] == [0, 2, 4, 6, 8]
    assert nrt.read_bytes() == whole  # (written again, the same object code)
    nrt.write_bytes(whole[:100])  # cut short
    assert _run(tmp_path)["nrt"] == "compiled"
    assert _run(tmp_path)["nrt"] == "cache"
