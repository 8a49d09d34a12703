"""Crash safety (SIGKILL mid-run), bounded file size and memory, and few events on healthy runs."""

from __future__ import annotations

import gc
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
import torch
from torch import nn

from causal.schema.run import EventKind
from neuraldbg import NeuralDbg, load_run
from neuraldbg.suite.demo import build_demo

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]
CHILD = Path(__file__).resolve().parent / "_train_child.py"


# ------------------------------------------------------------------------------- crash safety


def _reader(stream: object, out: queue.Queue[str | None]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        out.put(line)
    out.put(None)


def test_sigkill_mid_run_leaves_a_readable_run_file(tmp_path: Path) -> None:
    path = tmp_path / "killed.ndbg"
    bad_step = 30
    seen_target = bad_step + 30  # well after the non-finite step
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    err_path = tmp_path / "child.err"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(path), str(bad_step)], cwd=REPO, env=env,
            stdout=subprocess.PIPE, stderr=err, text=True,
        )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    deadline = time.monotonic() + 90

    def next_step() -> int:
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"child too slow:\n{err_path.read_text()}"
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, f"child exited early:\n{err_path.read_text()}"
            if line.startswith("STEP "):
                return int(line.split()[1])

    try:
        reached = -1
        while reached < seen_target:
            reached = next_step()
        # The writer commits at least every second (on the first step that closes a second or
        # more after the last commit): once a step closes 1.5 s after `reached` was printed,
        # `reached` is committed, however slowly the child runs.
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.5:
            next_step()
        assert proc.poll() is None, f"child stopped by itself:\n{err_path.read_text()}"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()

    run = load_run(path)
    assert run.meta["status"] == "running"  # it never finished
    assert "ended" not in run.meta and "error" not in run.meta
    steps = run.series.steps
    assert steps[: reached + 1] == tuple(range(reached + 1)), steps[:80]
    loss = dict(run.series.get("loss"))
    assert all(math.isfinite(loss[s]) for s in range(bad_step))
    assert not math.isfinite(loss[bad_step])

    origin = run.first_nonfinite
    assert origin is not None, [str(e) for e in run.events]
    assert origin.step == bad_step and origin.kind == EventKind.NONFINITE_ORIGIN
    assert origin.layer_name == "<input>" and origin.metadata["direction"] == "input"
    assert all(e.step >= bad_step for e in run.events), [str(e) for e in run.events]
    window = run.window_at(bad_step)
    assert window is not None and window.end_step == bad_step and bad_step in window.steps
    # the killed run's file is diagnosed like any other: an input-born inf is a data problem
    from causal.diagnose import diagnose

    top = diagnose(run)[0]
    assert (top.cause, top.step) == ("data_outlier", bad_step)


# ------------------------------------------------------------------------------- boundedness


def _rss_kib() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


@pytest.mark.slow
def test_long_healthy_run_has_bounded_file_and_memory(tmp_path: Path) -> None:
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = []
    for _ in range(16):
        x = torch.randn(32, 8, generator=g)
        batches.append((x, x[:, :1] * 0.5 + 0.1))
    path = tmp_path / "long.ndbg"
    n_steps, warm = 20_000, 2_000
    first_loss = last_loss = math.nan
    mem: dict[str, int] = {}
    rss: dict[str, int | None] = {}
    # Tracing starts after `warm` steps (it slows every allocation): whatever is allocated from
    # then on and still alive at the end is growth.
    try:
        with NeuralDbg(model, path=path) as dbg:
            for step in range(n_steps):
                x, y = batches[step % len(batches)]
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
                if step + 1 == warm:
                    first_loss = float(loss.item())
                    gc.collect()
                    tracemalloc.start()
                    mem["warm"] = tracemalloc.get_traced_memory()[0]
                    rss["warm"] = _rss_kib()
                elif step + 1 == n_steps:
                    last_loss = float(loss.item())
                    gc.collect()
                    mem["end"] = tracemalloc.get_traced_memory()[0]
                    rss["end"] = _rss_kib()
    finally:
        tracemalloc.stop()

    run = load_run(path)
    assert run.meta["status"] == "finished"
    assert len(run.series) == n_steps
    assert run.series.steps == tuple(range(n_steps))
    assert last_loss <= first_loss
    size = path.stat().st_size
    assert size < 5 * 2**20, f"run file is {size / 2**20:.2f} MiB for {n_steps} steps"
    growth = mem["end"] - mem["warm"]
    assert growth < 2**20, f"traced memory grew by {growth / 1024:.0f} KiB from step {warm}"
    if rss["warm"] is not None and rss["end"] is not None:
        rss_growth = rss["end"] - rss["warm"]
        assert rss_growth < 32 * 1024, f"RSS grew by {rss_growth} KiB from step {warm}"
    print(f"\n{n_steps} steps: file {size / 2**20:.2f} MiB, traced growth {growth / 1024:.0f} KiB, "
          f"RSS {rss}")
    assert len(run.events) <= 5, [str(e) for e in run.events]


# ------------------------------------------------------------------------- few events on healthy


def test_healthy_deep_tanh_run_has_few_events(tmp_path: Path) -> None:
    # the demo's deep tanh MLP, but with a step size it can take: lr 0.0005 trains smoothly
    # (lr 0.002 trains too but passes through a genuinely spiky phase around steps 200-300)
    model, opt, batches = build_demo(seed=0, lr=0.0005)
    n_steps = 2000
    losses = []
    with NeuralDbg(model, path=tmp_path / "healthy.ndbg") as dbg:
        for step in range(n_steps):
            x, y = batches[step % len(batches)]
            dbg.step = step
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
            losses.append(float(loss.item()))
    assert all(math.isfinite(v) for v in losses)
    head, tail = sum(losses[:100]) / 100, sum(losses[-100:]) / 100
    assert tail < head / 10, (head, tail)
    run = dbg.run
    assert run.meta["status"] == "finished" and len(run.series) == n_steps
    assert run.first_nonfinite is None
    assert len(run.events) <= 5, "\n".join(str(e) for e in run.events)


def test_queued_quiet_steps_do_not_keep_the_batches_alive(tmp_path: Path) -> None:
    """Quiet steps wait in the analysis queue; their input batches must not wait with them."""
    import weakref

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    refs = []
    with NeuralDbg(model, path=tmp_path / "q.ndbg") as dbg:
        for _ in range(20):
            x = torch.randn(16, 8)
            refs.append(weakref.ref(x))
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
        del x, loss
        gc.collect()
        assert dbg._capture is not None and dbg._capture.analyzer.pending  # steps are queued
        alive = [k for k, r in enumerate(refs) if r() is not None]
        assert alive == [], alive
