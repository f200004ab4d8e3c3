"""The scripts of examples/, loaded as modules for the tests that run them."""

from __future__ import annotations

import importlib.util

from ..conftest import ROOT


def load_example(name: str):
    """``examples/<name>.py`` loaded as a module (not run as a script)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
