"""Child process for the DistributedDataParallel test: two CPU ranks (gloo), each under its own
NeuralDbg, with a forward-born inf on rank 0 only at step FAIL_STEP.

Usage: python tests/_ddp_child.py OUT_DIR PORT [WORLD_SIZE [FAILING_RANK [ddp|fsdp2 [op|batch]]]]

With fsdp2 the model is sharded with FSDP2's `fully_shard` (each Linear, then the whole model)
instead of wrapped in DistributedDataParallel. With batch, the failing rank's inf comes from a NaN
in its batch at FAIL_STEP (one value of one row), not from an op.

Each rank writes OUT_DIR/rank{r}.ndbg and OUT_DIR/rank{r}.json (what the test checks). Any
warning is an error, so a monitor that stopped recording fails the test.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

STEPS = 12
FAIL_STEP = 7


class Blowup(nn.Module):
    """(x * 1e30)^2 once switched on: inf born in a module without parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.on = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 1e30) ** 2 if self.on else x


def worker(rank: int, world: int, out: str, port: str, failing: int = 0,
           wrap: str = "ddp", how: str = "op") -> None:
    from neuraldbg import NeuralDbg

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", port
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), Blowup(), nn.Linear(16, 16),
                          nn.BatchNorm1d(16), nn.Tanh(), nn.Linear(16, 1))
    if wrap == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for m in model:
            if isinstance(m, nn.Linear):
                fully_shard(m)
        ddp = fully_shard(model)
    else:
        ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    warnings.simplefilter("error")

    def hooks(net: nn.Module) -> int:  # FSDP2 has hooks of its own: count ours by difference
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in net.modules())

    before = hooks(ddp)
    with NeuralDbg(ddp, path=f"{out}/rank{rank}.ndbg") as dbg:
        for step in range(STEPS):
            model[2].on = how == "op" and rank == failing and step >= FAIL_STEP
            x, y = torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)
            if how == "batch" and rank == failing and step == FAIL_STEP:
                x[3, 5] = float("nan")  # a corrupt value in this rank's batch only
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    run = dbg.run
    origin = run.first_nonfinite
    with open(f"{out}/rank{rank}.json", "w") as f:
        json.dump({"steps": len(run.series), "error": run.meta.get("internal_error"),
                   "status": run.meta.get("status"), "hooks_left": hooks(ddp) - before,
                   "grad_norms": len(run.series.get("grad_norm")),
                   "sharded_params": run.meta.get("sharded_params"),
                   "origin": None if origin is None else [origin.step, origin.layer_name,
                                                          dict(origin.metadata)]}, f)
    # Tear down while the interpreter is whole: gloo's worker threads can still hold work
    # objects with tensors, and freeing them during interpreter finalisation aborts the
    # process ("terminate called without an active exception", seen once in ~25 runs).
    dist.barrier()
    del ddp, opt, model, dbg
    gc.collect()
    dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    world = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    failing = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    wrap = sys.argv[5] if len(sys.argv) > 5 else "ddp"
    how = sys.argv[6] if len(sys.argv) > 6 else "op"
    mp.spawn(worker, args=(world, sys.argv[1], sys.argv[2], failing, wrap, how), nprocs=world)
