"""The documentation's console examples, run: each ``$ command`` of a ```console block of the
README and of ``docs/*.md`` is run in a temporary folder (one per document) holding a copy of
``data/sample`` and must print exactly the lines the document shows after it (stdout and
stderr, as a terminal shows them), so that the documentation cannot drift from what the
commands do.

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
from typing import Callable

import pytest

from .conftest import DATA, ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)


def console_examples(doc: Path) -> list[tuple[int, str, str]]:
    """(line in ``doc``, command, expected output) of every ``$ `` line of its console blocks."""
    text = doc.read_text(encoding="utf-8")
    out = []
    for block in _BLOCK.finditer(text):
        line = text.count("\n", 0, block.start(1)) + 1
        command, expected, start = None, [], line
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


#: (document, line, command, expected output), in each document's order
EXAMPLES = [(doc.relative_to(ROOT).as_posix(), line, cmd, expected)
            for doc in DOCUMENTS for line, cmd, expected in console_examples(doc) if runnable(cmd) is not None]


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory) -> Callable[[str], Path]:
    """Per document, a folder with data/sample, and a bin/ whose vecbinlog and python are this
    interpreter (made on first use: a document's examples run in order, in its own folder)."""
    made: dict[str, Path] = {}

    def workdir(doc: str) -> Path:
        if doc not in made:
            d = made[doc] = tmp_path_factory.mktemp("docs")
            shutil.copytree(DATA / "sample", d / "data" / "sample")
            bin_ = d / "bin"
            bin_.mkdir()
            (bin_ / "vecbinlog").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vecbinlog "$@"\n')
            (bin_ / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
            for f in bin_.iterdir():
                f.chmod(0o755)
        return made[doc]

    return workdir


def test_docs_have_console_examples():
    """Every command is shown, run, somewhere in the documentation."""
    commands = [cmd for _, _, cmd, _ in EXAMPLES]
    for name in ("info", "tables", "cat", "snapshot", "to-parquet", "events", "verify"):
        assert any(cmd.startswith(f"vecbinlog {name} ") for cmd in commands), name
    assert any(doc == "README.md" for doc, _, _, _ in EXAMPLES)


@pytest.mark.parametrize("doc,line,command,expected", EXAMPLES, ids=[f"{doc}:{line}" for doc, line, _, _ in EXAMPLES])
def test_console_example(workdirs, doc, line, command, expected):
    workdir = workdirs(doc)
    env = dict(os.environ, PATH=f"{workdir / 'bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    p = subprocess.run(["bash", "-c", runnable(command)], cwd=workdir, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, encoding="utf-8", timeout=300)
    assert p.stdout == expected, f"{doc} line {line}: $ {command}"
