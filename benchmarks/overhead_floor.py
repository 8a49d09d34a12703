"""What the cheap every-step signals cost by themselves, without neuraldbg: the floor under the
monitor's overhead on a model.

Each mode adds, to a model trained with a plain twin, only raw torch work written out here:

    norms      the exact gradient norm of every parameter after backward: one
               torch._foreach_norm, values read to the host (what the gradient signals need)
    +moments   and the input batch's min, max, sum and L2 norm before the forward, read to the
               host (what the input signals need)
    +hooks     the same work done from where a monitor has to do it: a forward pre-hook on the
               root module (the moments), a post-accumulate-grad hook per parameter that keeps
               its gradient and queues one end-of-backward callback (the norms), an empty
               forward hook on the root and empty optimizer step hooks
    monitor    neuraldbg's standard preset

How it is timed: each mode trains its model and a plain twin (a deep copy: same weights, same
batches) in one process, one step of each in turn, the order swapped every step, for S steps
after W warmup steps. The twins share the host's state (cache, clock, other jobs) step by step,
so the ratio median(mode steps) / median(twin's plain steps) repeats within about 0.01 on these
shared machines, where separate runs per mode (overhead.py) move by a few percent. Reported
per model: the median of that ratio over rounds (modes in a shuffled order per round), and the
extra microseconds per step.

    .venv/bin/python benchmarks/overhead_floor.py [--models tanh_mlp] [--rounds 3]
        [--steps 1500]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import overhead as ov  # benchmarks/overhead.py: this script's folder is on sys.path
import torch
from torch import nn

from neuraldbg import NeuralDbg

MODES = ("norms", "+moments", "+hooks", "monitor")

_queue_callback = torch.autograd.Variable._execution_engine.queue_callback
_graph_task_id = torch._C._current_graph_task_id


def _moments(x: torch.Tensor) -> list[torch.Tensor]:
    lo, hi = torch.aminmax(x)
    return [lo, hi, x.sum(), torch.linalg.vector_norm(x)]


def _norms(grads: list[torch.Tensor]) -> list[float]:
    return [float(n) for n in torch._foreach_norm(grads, 2, dtype=torch.float32)]


class Inline:
    """`norms` and `+moments`: the work written in the loop itself."""

    def __init__(self, model: nn.Module, moments: bool) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.moments = moments

    def before_forward(self, x: torch.Tensor) -> None:
        if self.moments:
            [float(m) for m in _moments(x)]

    def after_backward(self) -> None:
        _norms([p.grad for p in self.params if p.grad is not None])

    def record_loss(self, loss: torch.Tensor) -> None:
        pass


class Hooked:
    """`+hooks`: the same work from the places a monitor has (removed on exit)."""

    def __init__(self, model: nn.Module, opt: torch.optim.Optimizer) -> None:
        self.pending: list[torch.Tensor] = []
        self.task: int | None = None
        self.handles = [
            model.register_forward_pre_hook(self._pre, with_kwargs=True),
            model.register_forward_hook(lambda m, a, o: None, always_call=True),
            opt.register_step_pre_hook(lambda o, a, k: None),
            opt.register_step_post_hook(lambda o, a, k: None),
        ]
        self.handles += [p.register_post_accumulate_grad_hook(self._grad)
                         for p in model.parameters() if p.requires_grad]

    def _pre(self, module: nn.Module, args: Any, kwargs: Any) -> None:
        [float(m) for m in _moments(args[0])]

    def _grad(self, p: torch.Tensor) -> None:
        if p.grad is None:
            return
        self.pending.append(p.grad)
        task = _graph_task_id()
        if task != self.task:
            self.task = task
            _queue_callback(self._flush)

    def _flush(self) -> None:
        self.task = None
        grads, self.pending = self.pending, []
        _norms(grads)

    def before_forward(self, x: torch.Tensor) -> None:
        pass

    def after_backward(self) -> None:
        pass

    def record_loss(self, loss: torch.Tensor) -> None:
        pass

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


class Monitored:
    def __init__(self, dbg: NeuralDbg) -> None:
        self.dbg = dbg

    def before_forward(self, x: torch.Tensor) -> None:
        pass

    def after_backward(self) -> None:
        pass

    def record_loss(self, loss: torch.Tensor) -> None:
        self.dbg.record_loss(loss)


@contextlib.contextmanager
def attached(mode: str, model: nn.Module, opt: torch.optim.Optimizer, tmpdir: Path
             ) -> Iterator[Any]:
    if mode in ("norms", "+moments"):
        yield Inline(model, moments=mode == "+moments")
    elif mode == "+hooks":
        hooked = Hooked(model, opt)
        try:
            yield hooked
        finally:
            hooked.remove()
    else:
        with NeuralDbg(model, path=Path(tempfile.mktemp(suffix=".ndbg", dir=tmpdir))) as dbg:
            yield Monitored(dbg)


def run_pair(spec: Any, mode: str, batches: list[Any], warmup: int, steps: int,
             tmpdir: Path) -> tuple[float, float]:
    """(median plain step, median mode step) of a model and its plain twin, stepped in turn."""
    torch.manual_seed(0)
    plain = spec.build()
    twin = copy.deepcopy(plain)
    opt_p = torch.optim.SGD(plain.parameters(), lr=spec.lr, momentum=0.9)
    opt_t = torch.optim.SGD(twin.parameters(), lr=spec.lr, momentum=0.9)
    times: tuple[list[float], list[float]] = ([], [])
    with attached(mode, twin, opt_t, tmpdir) as work:
        def plain_step(x: torch.Tensor, y: torch.Tensor) -> None:
            opt_p.zero_grad(set_to_none=True)
            spec.loss_fn(plain(x), y).backward()
            opt_p.step()

        def mode_step(x: torch.Tensor, y: torch.Tensor) -> None:
            opt_t.zero_grad(set_to_none=True)
            work.before_forward(x)
            loss = spec.loss_fn(twin(x), y)
            loss.backward()
            work.after_backward()
            work.record_loss(loss)
            opt_t.step()

        steps_of: tuple[Callable[..., None], Callable[..., None]] = (plain_step, mode_step)
        for i in range(warmup + steps):
            x, y = batches[i % len(batches)]
            for k in ((0, 1) if i % 2 else (1, 0)):
                t0 = time.perf_counter()
                steps_of[k](x, y)
                if i >= warmup:
                    times[k].append(time.perf_counter() - t0)
    return statistics.median(times[0]), statistics.median(times[1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=1500, help="timed steps per model and mode")
    p.add_argument("--warmup", type=int, default=60)
    p.add_argument("--models", default="tanh_mlp")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    malloc = ov.pin_malloc()  # as overhead.py does
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, rounds {args.rounds}, "
          f"warmup {args.warmup}, steps {args.steps} (each model and its plain twin in turn), "
          f"malloc {malloc}")
    print("\n| model | plain ms/step | " + " | ".join(f"{m} x (+us)" for m in MODES) + " |")
    print("|---|---:|" + "---:|" * len(MODES))
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            spec = ov.SPECS[name]
            g = torch.Generator().manual_seed(0)
            batches = [spec.make_batch(g) for _ in range(ov.N_BATCHES)]
            pairs: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
            for _ in range(args.rounds):
                order = list(MODES)
                rng.shuffle(order)
                for mode in order:
                    pairs[mode].append(run_pair(spec, mode, batches, args.warmup, args.steps,
                                                Path(tmp)))
            cells = []
            for m in MODES:
                ratio = statistics.median(b / a for a, b in pairs[m])
                extra = statistics.median(b - a for a, b in pairs[m])
                cells.append(f"{ratio:.3f} (+{extra * 1e6:.0f})")
            plain_ms = statistics.median(a for m in MODES for a, _ in pairs[m]) * 1e3
            print(f"| {name} | {plain_ms:.2f} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
