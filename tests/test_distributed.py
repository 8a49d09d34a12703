"""DistributedDataParallel: two CPU ranks (gloo) each record their own run; a forward-born inf
on one rank is found there exactly, and no rank runs an extra forward alone (it could wait
forever on a collective)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

CHILD = Path(__file__).resolve().parent / "_ddp_child.py"


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch without distributed")
def test_ddp_ranks_each_record_and_the_failing_rank_finds_the_origin(tmp_path):
    proc = subprocess.run([sys.executable, str(CHILD), str(tmp_path), _free_port()],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for r in ranks:
        assert r["status"] == "finished" and r["error"] is None
        assert r["steps"] == 12 and r["grad_norms"] == 12
        assert r["hooks_left"] == 0
    step, layer, meta = ranks[0]["origin"]
    assert (step, layer, meta["direction"]) == (7, "module.2", "forward")
    assert meta["exact"] is True and "replayed" not in meta  # outputs kept, not run again
    # rank 1 records its own gradients (taken before the all-reduce): it sees the failure
    # only when the averaged non-finite update reaches its weights, one step later
    assert ranks[1]["origin"][0] == 8


@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch without distributed")
@pytest.mark.parametrize("world, failing", [(2, 1), (4, 2)])
def test_the_rank_that_failed_first_is_named(tmp_path, capsys, world, failing):
    from causal.schema.run_file import load_run
    from neuraldbg.cli import main as cli_main

    proc = subprocess.run([sys.executable, str(CHILD), str(tmp_path), _free_port(), str(world),
                           str(failing)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = [str(tmp_path / f"rank{r}.ndbg") for r in range(world)]
    for r, f in enumerate(files):
        assert (load_run(f).meta["rank"], load_run(f).meta["world_size"]) == (r, world)
    assert cli_main(["diagnose", *reversed(files)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Distributed run: {world} rank files, world size {world}. Rank "
                          f"{failing} went non-finite first, at step 7 (born in the forward "
                          "pass, at 'module.2')"), out
    others = [r for r in range(world) if r != failing]
    assert all(f"rank {r} from step 8" in out for r in others), out
    assert f"Diagnosis on rank {failing}:" in out
    assert cli_main(["diagnose", "--json", str(tmp_path)]) == 0  # the directory, as JSON
    data = json.loads(capsys.readouterr().out)
    assert data["first_rank"] == failing and len(data["ranks"]) == world


_FSDP2 = """
import os, sys, torch, torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard
from neuraldbg import NeuralDbg
from neuraldbg.errors import ConfigError
os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", sys.argv[1]
dist.init_process_group("gloo", rank=0, world_size=1)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
fully_shard(model)
try:
    NeuralDbg(model, path=sys.argv[2])
except ConfigError as e:
    print("REFUSED", e)
dist.destroy_process_group()
"""


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch without distributed")
def test_fsdp2_sharded_parameters_are_refused_with_the_way_out(tmp_path):
    """FSDP's first API needs an accelerator (not on CPU/gloo); FSDP2's fully_shard runs on
    CPU/gloo, but its DTensor parameters are not read yet: a clear refusal at construction."""
    proc = subprocess.run([sys.executable, "-c", _FSDP2, _free_port(),
                           str(tmp_path / "r.ndbg")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "REFUSED" in proc.stdout and "DistributedDataParallel" in proc.stdout
    assert not (tmp_path / "r.ndbg").exists()
