"""neuraldbg in a Lightning run: a callback that attaches the monitor for `trainer.fit` and records
each training step's loss.

    from neuraldbg.integrations.lightning import NeuralDbgCallback
    trainer = lightning.Trainer(..., callbacks=[NeuralDbgCallback(path="runs/exp1.ndbg")])
    trainer.fit(lit_module)

The monitor attaches to the LightningModule, or to the submodule `module` names (a dotted
attribute path, such as "model") when `training_step` calls that submodule rather than the
LightningModule's own forward. The loss is the one Lightning is about to backpropagate, taken
before the division by `accumulate_grad_batches` that automatic optimization applies, so the run
records what `training_step` returned. A GradScaler of Lightning's mixed precision is passed on.
The monitor closes when fit ends or raises (the run file keeps the error); at the end the
diagnosis is logged (logger "neuraldbg"), the HTML report written next to the run file (with
matplotlib) and the summary (`callback.summary`) logged as metrics to the Trainer's loggers.
Works with `lightning`
or `pytorch_lightning`, whichever is installed (neither is a dependency of neuraldbg).
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn

try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl  # type: ignore[no-redef]

from neuraldbg.integrations.summary import summarise
from neuraldbg.monitor import NeuralDbg


class NeuralDbgCallback(pl.Callback):
    """Attach neuraldbg for `trainer.fit`; `monitor_kwargs` go to `NeuralDbg` (thresholds,
    preset)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, module: str | None = None,
                 report: bool = True, **monitor_kwargs: Any) -> None:
        super().__init__()
        self.path = path
        self.module = module
        self.report = report
        self.summary: dict[str, Any] = {}
        self.monitor_kwargs = monitor_kwargs
        self.dbg: NeuralDbg | None = None

    @property
    def run(self) -> Any:
        """The run recorded (so far): `dbg.run`."""
        if self.dbg is None:
            raise RuntimeError("NeuralDbgCallback: nothing recorded yet (trainer.fit has not "
                               "started with this callback)")
        return self.dbg.run

    def _target(self, pl_module: nn.Module) -> nn.Module:
        try:
            return pl_module.get_submodule(self.module or "")
        except AttributeError as e:
            raise AttributeError(
                f"NeuralDbgCallback(module={self.module!r}): {e}; name the submodule "
                "training_step calls, as a dotted path from the LightningModule") from None

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        if self.dbg is not None:
            raise RuntimeError("NeuralDbgCallback records one fit: make a new callback (and "
                               "run file) for another")
        scaler = getattr(getattr(trainer, "precision_plugin", None), "scaler", None)
        self.dbg = NeuralDbg(self._target(pl_module), path=self.path,
                             scaler=scaler if isinstance(scaler, torch.amp.GradScaler) else None,
                             **self.monitor_kwargs).start()

    def on_before_backward(self, trainer: Any, pl_module: Any, loss: torch.Tensor) -> None:
        if self.dbg is None or not trainer.training:
            return
        loss = loss.detach()
        if getattr(pl_module, "automatic_optimization", True):
            loss = loss * trainer.accumulate_grad_batches  # undo Lightning's normalisation
        self.dbg.record_loss(loss)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self.dbg is not None:
            self.dbg.close()
            _, self.summary = summarise(self.dbg.run, self.report)
            for logger in trainer.loggers:  # numbers only: what every Lightning logger takes
                logger.log_metrics({k: float(v) for k, v in self.summary.items()
                                    if isinstance(v, (int, float)) and v is not None},
                                   step=trainer.global_step)

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        if self.dbg is not None:
            self.dbg.close(error=exception)
