"""What the type check lets go unannotated is the compiled kernels only. pyproject.toml's
[tool.mypy] asks every function for annotations, except in the modules an override lists,
which hold kernels (numba reads no annotations, and mypy would type a kernel's NumPy scalars
otherwise than numba does); there mypy still checks every body, and every function annotated
in part. This says which functions of those modules have no annotation and are not kernels
(decorated ``@kernel``, ``@intrinsic`` or ``@njit``, or defined inside one); exits 1 if any."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

KERNEL_DECORATORS = {"kernel", "intrinsic", "njit"}


def _name(decorator: ast.expr) -> str:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _untyped(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    return fn.returns is None and all(p.annotation is None for p in params)


def unannotated(path: Path, rel: str) -> list[str]:
    out = []
    kernels = 0

    def visit(node: ast.AST, in_kernel: bool) -> None:
        nonlocal kernels
        for child in ast.iter_child_nodes(node):
            inside = in_kernel
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside = in_kernel or any(_name(d) in KERNEL_DECORATORS for d in child.decorator_list)
                kernels += inside
                if not inside and _untyped(child):
                    out.append(f"{rel}:{child.lineno}: {child.name} has no annotations and is not a kernel")
            visit(child, inside)

    visit(ast.parse(path.read_text()), False)
    if not kernels:
        out.append(f"{rel}: holds no kernel: take it off the list of [tool.mypy]'s override")
    return out


def kernel_modules(root: Path) -> list[str]:
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mypy"]
    return [m for o in config.get("overrides", []) if o.get("disallow_untyped_defs") is False for m in o["module"]]


def breaches(root: Path) -> list[str]:
    out = []
    for module in kernel_modules(root):
        rel = module.replace(".", "/") + ".py"
        out += unannotated(root / rel, rel)
    return out


if __name__ == "__main__":
    found = breaches(Path(__file__).resolve().parent.parent)
    print("\n".join(found) or "untyped: the functions left unannotated are kernels")
    sys.exit(1 if found else 0)
