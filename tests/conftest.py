"""Shared test set-up: one torch thread (2 shared cores), run files under tmp_path."""

from __future__ import annotations

import pytest

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the torch-free tests run in subprocesses; this process has torch
    torch = None


@pytest.fixture
def run_path(tmp_path):
    """A fresh run-file path that does not exist yet."""
    counter = iter(range(10_000))

    def make(name: str = "run") -> str:
        return str(tmp_path / f"{name}-{next(counter)}.ndbg")

    return make


@pytest.fixture(autouse=True)
def _no_function_mode_left_behind():
    """No test leaves a TorchFunctionMode on the stack (the monitor's modes must always be
    taken off, or they leak into the user's code)."""
    from torch.overrides import _get_current_function_mode_stack

    yield
    stack = _get_current_function_mode_stack()
    assert not stack, f"a function mode was left on: {stack}"
