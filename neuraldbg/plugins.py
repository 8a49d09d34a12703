"""Plugins: modules that register their own causes and symptoms when imported (`--plugin
MODULE` on the command line, and in every worker process of a bench or a fit). Torch-free, so
`neuraldbg diagnose --plugin M` works where torch is not installed."""

from __future__ import annotations

import os
from types import ModuleType


def import_from_cwd(name: str) -> ModuleType:
    """Import module `name` with the working directory first on the path, as `python -m`
    would (a user's `train.py` beside the command)."""
    import importlib
    import sys

    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(name)


def import_plugins(modules: tuple[str, ...] | list[str]) -> None:
    """Import each module (it registers its causes and symptoms), from the working directory
    too (`import_from_cwd`)."""
    for name in modules:
        import_from_cwd(name)
