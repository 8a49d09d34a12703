"""DistributedDataParallel and FSDP2: CPU ranks (gloo) each record their own run; a forward-born
inf on one rank is found there exactly, and no rank runs an extra forward or a collective alone
(it could wait forever on the others)."""

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


@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch without distributed")
@pytest.mark.parametrize("world, failing", [(2, 1), (4, 0)])
def test_fsdp2_ranks_record_their_shards_and_the_failing_rank_is_named(tmp_path, capsys, world,
                                                                      failing):
    """FSDP2's fully_shard on CPU/gloo (FSDP's first API needs an accelerator): each rank
    records its own shards' statistics without a collective of the monitor's own (one would
    hang: the ranks wait at different points), the rank whose forward made the inf is named
    first, and the others, which get it through the reduce-scatter of the same backward pass,
    are marked as consequences."""
    from causal.schema.run_file import load_run
    from neuraldbg.cli import main as cli_main
    from neuraldbg.errors import NeuralDbgError
    from neuraldbg.replay import replay

    proc = subprocess.run([sys.executable, str(CHILD), str(tmp_path), _free_port(), str(world),
                           str(failing), "fsdp2"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for r in range(world):
        rec = json.loads((tmp_path / f"rank{r}.json").read_text())
        assert rec["status"] == "finished" and rec["error"] is None, rec
        assert rec["steps"] == 12 and rec["grad_norms"] == 12 and rec["hooks_left"] == 0
        assert rec["sharded_params"] == 8  # three Linears and the BatchNorm, weight and bias
        assert rec["origin"] is not None and rec["origin"][0] == 7
    failing_rec = json.loads((tmp_path / f"rank{failing}.json").read_text())
    assert failing_rec["origin"][1] == "2" and failing_rec["origin"][2]["direction"] == "forward"
    files = [str(tmp_path / f"rank{r}.ndbg") for r in range(world)]
    assert load_run(files[0]).meta["sharded_params"] == 8
    assert cli_main(["diagnose", *files]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Distributed run: {world} rank files, world size {world}. Rank "
                          f"{failing} went non-finite first, at step 7 (born in the forward "
                          "pass, at '2')"), out
    assert "the parameters are sharded (FSDP2" in out
    assert all(f"rank {r} from step 7" in out for r in range(world) if r != failing), out
    # the crime scene keeps this rank's shards, and says so: a replay in one process refuses
    scene = torch.load(tmp_path / f"rank{failing}.scene.pt", weights_only=True)
    assert scene["sharded"] is True and scene["step"] == 7
    assert scene["model_state"]["0.weight"].shape == (16 // world, 8)  # the local shard
    with pytest.raises(NeuralDbgError, match="shards of a sharded model"):
        replay(scene, torch.nn.Linear(8, 1), torch.nn.functional.mse_loss)


@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch without distributed")
@pytest.mark.parametrize("wrap", ["ddp", "fsdp2"])
def test_a_nan_in_one_ranks_batch_is_named_there_as_data(tmp_path, capsys, wrap):
    """A NaN in one value of one row of rank 1's batch: that rank is named first, born in the
    input, diagnosed as a data outlier; rank 0 only gets it through the gradients."""
    from neuraldbg.cli import main as cli_main

    proc = subprocess.run([sys.executable, str(CHILD), str(tmp_path), _free_port(), "2", "1",
                           wrap, "batch"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert cli_main(["diagnose", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Distributed run: 2 rank files, world size 2. Rank 1 went non-finite "
                          "first, at step 7 (born in the input, at '<input>')"), out
    assert "Diagnosis on rank 1:\n" in out
    first = out.split("Diagnosis on rank 1:\n", 1)[1].splitlines()[0]
    assert "corrupt or extreme input batch at step 7" in first, out
