"""The README's console examples, run: each ``$ command`` of a ```console block is run in a
temporary folder holding a copy of ``data/sample`` and must print exactly the lines the README
shows after it (stdout and stderr, as a terminal shows them), so that the documentation cannot
drift from what the commands do.

``vecbinlog`` and ``python`` are this interpreter's (``python -m vecbinlog``); a ``pip install
... &&`` in front of a command is left out (the package is installed), and a block that runs
the test suite itself is not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import DATA, ROOT

README = ROOT / "README.md"
_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)


def console_examples() -> list[tuple[int, str, str]]:
    """(line in the README, command, expected output) of every ``$ `` line of the console blocks."""
    text = README.read_text(encoding="utf-8")
    out = []
    for block in _BLOCK.finditer(text):
        line = text.count("\n", 0, block.start(1)) + 1
        command, expected = None, []
        for k, row in enumerate(block.group(1).splitlines()):
            if row.startswith("$ "):
                if command is not None:
                    out.append((start, command, "".join(x + "\n" for x in expected)))
                command, expected, start = row[2:], [], line + k
            else:
                expected.append(row)
        if command is not None:
            out.append((start, command, "".join(x + "\n" for x in expected)))
    return out


def runnable(command: str) -> str | None:
    """The command as run here: without its ``pip install ... &&``; None for the test suite."""
    parts = [p.strip() for p in command.split(" && ")]
    parts = [p for p in parts if not p.startswith("pip install")]
    if not parts or any("pytest" in p for p in parts):
        return None
    return " && ".join(parts)


EXAMPLES = [(line, cmd, expected) for line, cmd, expected in console_examples() if runnable(cmd) is not None]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder with data/sample, and a bin/ whose vecbinlog and python are this interpreter."""
    d = tmp_path_factory.mktemp("readme")
    shutil.copytree(DATA / "sample", d / "data" / "sample")
    bin_ = d / "bin"
    bin_.mkdir()
    (bin_ / "vecbinlog").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vecbinlog "$@"\n')
    (bin_ / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    return d


def test_readme_has_console_examples():
    commands = [cmd for _, cmd, _ in EXAMPLES]
    for name in ("info", "tables", "cat", "snapshot", "to-parquet", "events", "verify"):
        assert any(cmd.startswith(f"vecbinlog {name} ") for cmd in commands), name


@pytest.mark.parametrize("line,command,expected", EXAMPLES, ids=[f"README.md:{line}" for line, _, _ in EXAMPLES])
def test_readme_console_example(workdir, line, command, expected):
    env = dict(os.environ, PATH=f"{workdir / 'bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    p = subprocess.run(["bash", "-c", runnable(command)], cwd=workdir, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, encoding="utf-8", timeout=300)
    assert p.stdout == expected, f"README.md line {line}: $ {command}"
