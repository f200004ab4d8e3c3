"""One root for what vecbinlog raises and warns: every error class of the package (found by
importing each of its modules) is a ``vecbinlog.VecbinlogError`` and still the built-in error it
was; every warning a ``vecbinlog.VecbinlogWarning``; ``except vecbinlog.VecbinlogError``
catches a real error of each family; docs/errors.md's tree is the classes' own.

``python -m tests.test_errors`` prints the tree as docs/errors.md has it."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.errors import VecbinlogError, VecbinlogWarning

from .conftest import DATA, ROOT

SAMPLE = DATA / "sample" / "mariadb-bin.000001"

#: the packages of the extras (spark, delta, iceberg)
OPTIONAL = {"pyspark", "deltalake", "pyiceberg"}
#: exceptions that never leave the package: each is caught where it is raised, in its module
INTERNAL = {
    "tables.ddl.tokens.End",  # the end of a statement's tokens, caught by the DDL reader
    "tables.ddl.tree.Unreadable",  # a statement the sqlglot tree does not take: the scanner reads it
    "decode.decoders.jsondiff.DiffRejected",  # a partial JSON update that does not apply: a MalformedEventError
    "decode.decoders.mysqljson._Bad",  # a binary JSON value that is not one: a MalformedEventError
}

#: every public error class -> the built-in error it is (its most specific built-in base)
BUILT_IN = {
    "VecbinlogError": Exception,
    "BinlogError": ValueError,
    "NotABinlogError": ValueError,
    "UnsupportedVersionError": ValueError,
    "TruncatedError": ValueError,
    "ChecksumError": ValueError,
    "MalformedEventError": ValueError,
    "UnsupportedError": ValueError,
    "EncryptedBinlogError": ValueError,
    "CorruptArchiveError": ValueError,
    "FileChangedError": ValueError,
    "SchemaChangedError": ValueError,
    "SourceError": OSError,
    "SourceNotFoundError": FileNotFoundError,
    "SourcePermissionError": PermissionError,
    "SourceUnreachableError": ConnectionError,
    "TableNotFoundError": KeyError,
    "ArchiveIndexError": ValueError,
    "ClosedError": ValueError,
    "lake.LakeError": ValueError,
    "lake.LakeSchemaError": ValueError,
    "tables.ddl.DdlError": ValueError,
    "cli.UsageError": Exception,
}


def package_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of vecbinlog (all of them imported), by its
    name in the package (:func:`public_name`)."""
    found = {}
    for info in pkgutil.walk_packages(vecbinlog.__path__, "vecbinlog."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:  # an extra not installed (its modules define no exception): not under CI
            if (exc.name or "").split(".")[0] in OPTIONAL and not os.environ.get("CI"):
                continue
            raise
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[public_name(obj)] = obj
    return found


def public_name(cls: type) -> str:
    """``cls``'s name under ``vecbinlog.``, from the shortest package of it that has the class
    (``BinlogError``, ``lake.LakeError``, ``tables.ddl.tokens.End``)."""
    parts = cls.__module__.split(".")
    for i in range(1, len(parts) + 1):
        if getattr(importlib.import_module(".".join(parts[:i])), cls.__name__, None) is cls:
            return ".".join([*parts[1:i], cls.__name__])
    return f"{cls.__module__}.{cls.__name__}"


def built_in(cls: type) -> type:
    return next(k for k in cls.__mro__ if k.__module__ == "builtins")


def test_every_error_is_a_vecbinlog_error_and_the_built_in_it_was():
    found = package_exceptions()
    errors = {name: cls for name, cls in found.items() if not issubclass(cls, Warning) and name not in INTERNAL}
    assert set(found) - set(errors) - {n for n, c in found.items() if issubclass(c, Warning)} == INTERNAL
    assert sorted(errors) == sorted(BUILT_IN)  # a new error class: say here which built-in it is
    for name, cls in errors.items():
        assert issubclass(cls, VecbinlogError) and built_in(cls) is BUILT_IN[name], name


def test_every_warning_is_a_vecbinlog_warning():
    warnings_ = {name: cls for name, cls in package_exceptions().items() if issubclass(cls, Warning)}
    assert {"VecbinlogWarning", "TruncatedWarning", "DecodeWarning", "lake.LakeWarning"} <= set(warnings_)
    for name, cls in warnings_.items():
        assert issubclass(cls, VecbinlogWarning) and issubclass(cls, UserWarning), name


def _corrupt(tmp_path):
    data = bytearray(SAMPLE.read_bytes())
    data[1850] ^= 0x01  # inside the Write_rows event at 1787 (mariadb-binlog-vv.txt): its CRC32 no longer holds
    path = tmp_path / SAMPLE.name
    path.write_bytes(data)
    return vecbinlog.read_table(path, "shop.orders")


def _lake(tmp_path):
    import deltalake
    from vecbinlog.lake import sync_delta

    deltalake.write_deltalake(str(tmp_path / "lake"), pa.table({"id": [1]}))  # not written by a sync
    sync_delta(str(SAMPLE), "shop.orders", str(tmp_path / "lake"))


def _ddl(tmp_path):
    from vecbinlog.tables.ddl import Catalog

    Catalog().apply("CREATE TABLE (", "d")


def _closed(tmp_path):
    log = vecbinlog.open(SAMPLE)
    log.close()
    log.read_all()


#: family -> (what raises it, the class raised)
FAMILIES = {
    "corrupt file": (_corrupt, vecbinlog.ChecksumError),
    "not a binlog": (lambda tmp_path: vecbinlog.open(DATA / "sample" / "workload.sql"), vecbinlog.NotABinlogError),
    "missing file": (lambda tmp_path: vecbinlog.open(tmp_path / "mysql-bin.000001"), vecbinlog.SourceNotFoundError),
    "missing table": (lambda tmp_path: vecbinlog.read_table(SAMPLE, "shop.nope"), vecbinlog.TableNotFoundError),
    "bad index": (lambda tmp_path: vecbinlog.open(SAMPLE, index=tmp_path).tables, vecbinlog.ArchiveIndexError),
    "lake": (_lake, "LakeError"),
    "DDL": (_ddl, "DdlError"),
    "closed log": (_closed, vecbinlog.ClosedError),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_except_vecbinlog_error_catches_each_family(family, tmp_path):
    make, raised = FAMILIES[family]
    with pytest.raises(VecbinlogError) as info:
        make(tmp_path)
    assert type(info.value).__name__ == (raised if isinstance(raised, str) else raised.__name__)


def test_a_warning_is_a_vecbinlog_warning(tmp_path):
    cut = tmp_path / SAMPLE.name
    cut.write_bytes(SAMPLE.read_bytes()[:3000])
    with pytest.warns(VecbinlogWarning) as caught:
        vecbinlog.read_table(cut, "shop.orders")
    assert any(issubclass(w.category, vecbinlog.TruncatedWarning) for w in caught)


# -- docs/errors.md ---------------------------------------------------------------------------
def tree() -> str:
    """The classes of :func:`package_exceptions` (but INTERNAL) as a tree under the two roots,
    each with the built-in errors it adds (those its vecbinlog base does not give it)."""
    found = {cls: name for name, cls in package_exceptions().items() if name not in INTERNAL}
    children: dict[type, list[type]] = {}
    for cls in found:
        base = next((b for b in cls.__bases__ if b in found), None)
        children.setdefault(base, []).append(cls)
    lines: list[str] = []

    def add(cls: type, lead: str, last: bool, root: bool) -> None:
        added = [b.__name__ for b in cls.__bases__ if b.__module__ == "builtins"]
        label = found[cls] + (f" ({', '.join(added)})" if added else "")
        lines.append(label if root else f"{lead}{'└── ' if last else '├── '}{label}")
        kids = sorted(children.get(cls, []), key=lambda c: found[c])
        for k, kid in enumerate(kids):
            add(kid, "" if root else lead + ("    " if last else "│   "), k == len(kids) - 1, False)

    add(VecbinlogError, "", True, True)
    add(VecbinlogWarning, "", True, True)
    return "\n".join(lines)


TREE_BLOCK = re.compile(r"<!-- the tree: python -m tests.test_errors -->\n```text\n(.*?)\n```", re.S)


def test_the_docs_tree_is_the_classes():
    shown = TREE_BLOCK.search((ROOT / "docs" / "errors.md").read_text(encoding="utf-8"))
    assert shown is not None, "docs/errors.md has no tree block"
    assert shown.group(1) == tree(), f"docs/errors.md's tree is stale; it is now:\n{tree()}"


if __name__ == "__main__":  # from the repository's root: python -m tests.test_errors
    print(tree())
