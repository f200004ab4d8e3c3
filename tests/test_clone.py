"""What a fresh clone needs: the README's test command (the one CI runs), the tests that read
the shared corpus or seeds skipping with one reason without them (failing under CI), the
copies in tests/data being the corpus's bytes, and the README's examples and the package's
namespace as a newcomer meets them."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys

import pytest

import vecbinlog

from .conftest import CORPUS_ENV, ROOT, SEEDS_ENV, TEST_DATA, corpus_path

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _normal(command: str) -> str:
    """A shell command with ``python -m pip`` as ``pip`` and without pip's ``-q``."""
    return " ".join(re.sub(r"python -m pip", "pip", command).replace(" -q ", " ").split())


def test_readme_test_command_is_the_one_ci_runs():
    """The README's test commands: the one CI runs, then the quick tier."""
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if "pytest" in line and not line.lstrip().startswith("#") and "NUMBA_BOUNDSCHECK" not in line
          and "--collect-only" not in line and "$spark40" not in line]  # (the Spark tests with pyspark 4.0 again)
    assert len(ci) == 1, ci
    shown = [line[2:] for block in re.findall(r"```console\n(.*?)```", README, re.S)
             for line in block.splitlines() if line.startswith("$ ") and "pytest" in line]
    assert [_normal(c) for c in shown] == [_normal(ci[0]), 'python -m pytest -m "not slow"']
    assert _normal(ci[0]) == 'pip install -e ".[test,spark]" && python -m pytest'


def test_the_paths_contributing_names_are_there():
    """Every file or folder of the repository CONTRIBUTING.md names (in backquotes or a link)
    exists (``../shared`` is not the repository's)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w.-]+(?:/[\w.-]+)*/?)`", text)) | set(re.findall(r"\]\(([\w./-]+)\)", text))
    paths = {p for p in named if ("/" in p or p.endswith((".py", ".md", ".toml"))) and not p.startswith("../")}
    assert len(paths) > 30
    assert [p for p in sorted(paths) if not (ROOT / p).exists()] == []


def _pytest(*files: str, **env: str) -> subprocess.CompletedProcess:
    """pytest run on ``files`` of this checkout in a child process, ``env`` added (CI removed
    unless given): its header says where the corpus is, its -rs summary why each test skipped."""
    child = {k: v for k, v in os.environ.items() if k != "CI"}
    child.update(env, PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", *files],
                          cwd=ROOT, env=child, capture_output=True, text=True, timeout=900)


NEEDS_SHARED = ["tests/tables/test_table_map.py", "tests/test_corpus.py", "tests/test_reference.py"]


def test_without_the_corpus_and_seeds_they_skip_naming_the_variable():
    p = _pytest(*NEEDS_SHARED, **{CORPUS_ENV: "/nonexistent/corpus", SEEDS_ENV: "/nonexistent/seeds"})
    assert p.returncode == 0, p.stdout[-3000:]
    summary = p.stdout.splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 20 and "failed" not in summary and "error" not in summary, summary
    reasons = [line for line in p.stdout.splitlines() if line.startswith("SKIPPED")]
    assert reasons
    for line in reasons:  # the corpus's or the seeds' one reason
        assert f"set {CORPUS_ENV} to its folder" in line or f"set {SEEDS_ENV} to its folder" in line, line
    assert any(CORPUS_ENV in line for line in reasons) and any(SEEDS_ENV in line for line in reasons)
    assert f"vecbinlog corpus: /nonexistent/corpus -- absent: tests that need it skip (set {CORPUS_ENV})" in p.stdout


@pytest.mark.slow  # collects the whole suite twice
def test_collection_does_not_read_the_shared_folders():
    """Without ../shared, pytest collects the tests it collects with it, and no error: they are
    parametrized by file names (tests/support/corpus.py), never by what a folder holds. .ci/run
    collects so too."""
    def collected(**env: str) -> list[str]:
        p = _pytest("--collect-only", "-q", **env)
        assert p.returncode == 0 and "error" not in p.stdout.splitlines()[-1], p.stdout[-3000:]
        return sorted(line for line in p.stdout.splitlines() if "::" in line)

    absent = collected(**{CORPUS_ENV: "/nonexistent/corpus", SEEDS_ENV: "/nonexistent/seeds"})
    assert len(absent) > 2000 and absent == collected()


def test_under_ci_a_missing_corpus_fails():
    p = _pytest(*NEEDS_SHARED, CI="1", **{CORPUS_ENV: "/nonexistent/corpus", SEEDS_ENV: "/nonexistent/seeds"})
    assert p.returncode != 0
    assert f"the shared corpus is not at /nonexistent/corpus: set {CORPUS_ENV}" in p.stdout


def test_copies_in_tests_data_are_the_corpus_files():
    """The sha256 of each copy: as tests/data/README.md lists it, and as the corpus MANIFEST does."""
    listed = dict(re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", (TEST_DATA / "README.md").read_text(), re.M))
    copies = sorted(p.relative_to(TEST_DATA).as_posix() for p in TEST_DATA.rglob("*")
                    if p.is_file() and p.name != "README.md")
    assert sorted(listed) == copies and sum((TEST_DATA / c).stat().st_size for c in copies) < 4096
    for name in copies:
        assert hashlib.sha256((TEST_DATA / name).read_bytes()).hexdigest() == listed[name], name
    manifest = corpus_path("MANIFEST.md").read_text(encoding="utf-8")
    for name in copies:
        # the MANIFEST's row: file, commit, git blob, sha256
        row = rf"^\| `{re.escape(name)}` \| `[0-9a-f]+` \| `[0-9a-f]+` \| `{listed[name]}` \|$"
        assert re.search(row, manifest, re.M), name


def test_package_namespace_has_no_annotations_name():
    assert "annotations" not in dir(vecbinlog)
    assert set(vecbinlog.__all__) <= set(dir(vecbinlog))


def test_readme_examples_close_the_files_they_open():
    """Every built-in open() in the README's Python examples is a with statement's."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    opened = in_with = 0
    for block in blocks:
        tree = ast.parse(block)
        managed = {id(item.context_expr) for node in ast.walk(tree) if isinstance(node, ast.With)
                   for item in node.items}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                opened += 1
                in_with += id(node) in managed
    assert opened >= 1 and in_with == opened
