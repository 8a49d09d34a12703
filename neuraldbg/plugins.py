"""Plugins: modules that register their own causes and symptoms when imported (`--plugin
MODULE` on the command line, and in every worker process of a bench or a fit). Torch-free, so
`neuraldbg diagnose --plugin M` works where torch is not installed."""

from __future__ import annotations

import os


def import_plugins(modules: tuple[str, ...] | list[str]) -> None:
    """Import each module (it registers its causes and symptoms); the working directory first
    on the path, as `python -m` would."""
    import importlib
    import sys

    if modules and "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in modules:
        importlib.import_module(name)
