"""A scenario's run moved to another device (`neuraldbg.suite.scenario.on_device`), as
`benchmarks/gpu_scenarios.py` trains it on a GPU: checked here on the CPU, where a move is a
copy of the same values, so the moved run must train exactly as the scenario's own."""

from __future__ import annotations

from pathlib import Path

import torch

from neuraldbg.suite.scenario import load_scenario, on_device, train

SCALER_SCENARIO = (Path(__file__).resolve().parents[2] / "datasets" / "train"
                   / "healthy_fp16_scaler_mlp.py")


def test_a_moved_run_keeps_its_optimizer_batches_and_scaler_state():
    torch.set_num_threads(1)
    sc = load_scenario(SCALER_SCENARIO)
    spec = sc.build(0)
    assert spec.get("scaler") is not None
    moved = on_device(spec, "cpu")
    params = {id(p) for g in moved["optimizer"].param_groups for p in g["params"]}
    assert params == {id(p) for p in moved["model"].parameters()}  # moved in place
    assert moved["scaler"] is not spec["scaler"]
    assert moved["scaler"].get_scale() == spec["scaler"].get_scale()
    assert len(moved["batches"]) == len(spec["batches"])
    assert isinstance(moved["batches"][0], tuple)
    losses_moved, _ = train(moved)
    losses_own, _ = train(sc.build(0))
    assert losses_moved == losses_own
