"""The size rules of the package (docs/how-it-works.md): no module over 700 lines, no function
over 120, except what is listed here with its reason. Prints each breach; exits 1 if any."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 120
#: modules that are mostly data tables (the rule is for code)
DATA_MODULES = {
    "vecbinlog/collations.py": "collation id -> charset tables of MySQL and MariaDB",
}
#: compiled kernels: one loop over a chain, kept whole so that numba compiles it as one
KERNELS = {
    "vecbinlog/decode/rowwalk.py": {"walk_row_images"},
}


def breaches(root: Path) -> list[str]:
    out = []
    for path in sorted((root / "vecbinlog").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        lines = text.count("\n") + 1
        if lines > MAX_MODULE_LINES and rel not in DATA_MODULES:
            out.append(f"{rel}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES and node.name not in KERNELS.get(rel, ()):
                    out.append(f"{rel}:{node.lineno}: {node.name} has {n} lines (at most {MAX_FUNCTION_LINES})")
    return out


if __name__ == "__main__":
    found = breaches(Path(__file__).resolve().parent.parent)
    print("\n".join(found) or "sizes: every module and function within the limits")
    sys.exit(1 if found else 0)
