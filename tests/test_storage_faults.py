"""Storage that fails mid-run (the run directory deleted, a file-size limit, a disk that errors)
never raises into training nor out of the `with` block: one warning, training goes on, the user's
own exception is the one that propagates, and the run file keeps what was written."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from causal.schema.run_file import RunWriter, load_run
from neuraldbg import NeuralDbg
from neuraldbg.errors import NeuralDbgWarning


class _FailingDisk:
    """An SQLite connection whose writes fail once `broken` is set (what a full disk does)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.broken = False

    def _check(self) -> None:
        if self.broken:
            raise sqlite3.OperationalError("database or disk is full")

    def execute(self, *args: Any) -> Any:
        self._check()
        return self.db.execute(*args)

    def executemany(self, *args: Any) -> Any:
        self._check()
        return self.db.executemany(*args)

    def commit(self) -> None:
        self._check()
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self.db.close()


def _train(steps: int, dbg: NeuralDbg, model: nn.Module, on_step=None) -> list[float]:
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    losses = []
    for step in range(steps):
        if on_step is not None:
            on_step(step)
        x, y = torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        dbg.record_loss(loss)
        opt.step()
        losses.append(float(loss))
    return losses


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def test_a_disk_that_fails_mid_run_warns_once_and_training_goes_on(run_path) -> None:
    model = _model()
    dbg = NeuralDbg(model, path=run_path())
    after_block = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dbg:
            disk = _FailingDisk(dbg._writer._db)
            dbg._writer._db = disk

            def fail_at_10(step: int) -> None:
                if step == 10:
                    assert dbg.run.series.steps  # steps 0-8 are committed
                    disk.broken = True

            losses = _train(30, dbg, model, on_step=fail_at_10)
        after_block = True
    assert after_block and len(losses) == 30
    ours = [w for w in caught if issubclass(w.category, NeuralDbgWarning)]
    assert len(ours) == 1 and "cannot write the run file" in str(ours[0].message)
    run = load_run(dbg.path)  # what was committed before the fault
    assert run.series.steps and run.series.steps[-1] < 10


def test_the_users_exception_is_never_replaced_by_a_storage_fault(run_path) -> None:
    model = _model()
    dbg = NeuralDbg(model, path=run_path())
    with pytest.raises(KeyError, match="the user's own"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dbg:
            _train(3, dbg, model)
            disk = _FailingDisk(dbg._writer._db)
            dbg._writer._db = disk
            disk.broken = True
            raise KeyError("the user's own")


def test_the_run_directory_deleted_mid_run(tmp_path: Path) -> None:
    model = _model()
    run_dir = tmp_path / "runs"
    dbg = NeuralDbg(model, path=run_dir / "run.ndbg")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dbg:
            losses = _train(40, dbg, model,
                            on_step=lambda s: shutil.rmtree(run_dir) if s == 5 else None)
    assert len(losses) == 40
    assert any("cannot write the run file" in str(w.message) for w in caught)


def test_a_writer_reports_a_fault_once_and_still_marks_the_status(run_path) -> None:
    path = run_path()
    faults: list[str] = []
    w = RunWriter(path, {"model_class": "Toy"}, on_fault=faults.append)
    w.add_step(0, {"loss": 1.0})
    w.flush()
    disk = _FailingDisk(w._db)
    w._db = disk
    disk.broken = True
    for step in range(1, 5):
        w.add_step(step, {"loss": 1.0})
        w.flush()
    assert len(faults) == 1 and "disk is full" in faults[0]
    disk.broken = False  # the space came back: the final status still lands
    w.close(status="finished")
    run = load_run(path)
    assert run.meta["status"] == "finished" and "disk is full" in run.meta["storage_error"]
    assert run.series.steps == (0,)


_CHILD = textwrap.dedent("""
    import resource, sys, warnings
    import torch
    from torch import nn
    from neuraldbg import NeuralDbg
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    dbg = NeuralDbg(model, path=sys.argv[1], preset="full")
    resource.setrlimit(resource.RLIMIT_FSIZE, (48 * 1024, 48 * 1024))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dbg:
            for step in range(300):
                x = torch.randn(16, 32)
                opt.zero_grad()
                loss = model(x).pow(2).mean()
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
    print("AFTER THE BLOCK", sum("cannot write the run file" in str(w.message) for w in caught))
""")


def test_a_file_size_limit_does_not_raise_from_exit(tmp_path: Path) -> None:
    path = tmp_path / "run.ndbg"
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "AFTER THE BLOCK 1" in done.stdout
    run = load_run(path)  # the file keeps what fitted under the limit, and stays readable
    assert run.meta["model_class"] == "Sequential" and path.stat().st_size <= 48 * 1024
