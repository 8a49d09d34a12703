"""Seeded mutations of a real run file (`benchmarks/run_file_mutations.py`): every outcome is a
diagnosis or a `RunFileError`, within the time and memory bounds, and the file is never
modified. `benchmarks/reliability.py` runs the same over 1,000+ mutations."""

from __future__ import annotations

import collections
import importlib.util
import sys
from pathlib import Path

import pytest
import torch
from helpers import train_monitored
from torch import nn

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "run_file_mutations.py"


def _mutations():
    spec = importlib.util.spec_from_file_location("run_file_mutations", _BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def failing_run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A monitored run that turns non-finite (events, windows, a layer graph to mutate)."""
    path = tmp_path_factory.mktemp("fuzz") / "base.ndbg"
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))

    def outlier(step: int, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (x * 1e38 if step == 20 else x), y

    train_monitored(model, 30, str(path), make_batch=outlier)
    return path


@pytest.mark.slow
def test_every_mutation_reads_as_a_diagnosis_or_a_run_file_error(
        failing_run_file: Path, tmp_path: Path) -> None:
    mutations = _mutations()
    outcomes = [mutations.try_one(failing_run_file, tmp_path, seed) for seed in range(300)]
    counts = collections.Counter(o.result for o in outcomes)
    bad = [o for o in outcomes if o.result not in ("usable", "clean error")]
    assert not bad, "\n".join(f"{o.mutation}: {o.result}\n{o.detail}" for o in bad[:3])
    assert not [o.mutation for o in outcomes if o.touched]
    assert counts["usable"] >= 20 and counts["clean error"] >= 100, counts  # both kinds tried
    assert max(o.seconds for o in outcomes) < mutations.TIME_BOUND_S
