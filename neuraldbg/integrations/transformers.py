"""neuraldbg in a Hugging Face `Trainer`: a callback, in the library's own shape.

    from neuraldbg.integrations.transformers import NeuralDbgCallback
    trainer = Trainer(model=model, args=args, train_dataset=ds, callbacks=[NeuralDbgCallback()])
    trainer.train()

The monitor attaches when training begins (to the model the Trainer trains) and closes when it
ends. The model's own loss (from `labels`) is the recorded loss; the Trainer's GradScaler (fp16
mixed precision, held by Accelerate's optimizer wrapper) is passed on. At the end, the diagnosis
is logged (logger "neuraldbg"), the report written next to the run file when matplotlib is
installed, and the first hypothesis put into the Trainer's log history (`state.log_history`,
keys `neuraldbg/...`), where other loggers pick it up. `with NeuralDbg(model): trainer.train()`
keeps working too. transformers is not a dependency of neuraldbg.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from transformers import TrainerCallback

from neuraldbg.integrations.summary import summarise
from neuraldbg.monitor import NeuralDbg


class NeuralDbgCallback(TrainerCallback):
    """Attach neuraldbg for `trainer.train()`; `path` is the run file (default: a new one under
    ./neuraldbg_runs/), `monitor_kwargs` go to `NeuralDbg` (thresholds, preset)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, report: bool = True,
                 **monitor_kwargs: Any) -> None:
        self.path = path
        self.report = report
        self.monitor_kwargs = monitor_kwargs
        self.dbg: NeuralDbg | None = None
        self.report_path: str | None = None

    @property
    def run(self) -> Any:
        """The run recorded (so far): `dbg.run`."""
        if self.dbg is None:
            raise RuntimeError("NeuralDbgCallback: nothing recorded yet (trainer.train() has not "
                               "started with this callback)")
        return self.dbg.run

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       optimizer: Any = None, **kwargs: Any) -> None:
        if self.dbg is not None:
            raise RuntimeError("NeuralDbgCallback records one training run: make a new "
                               "callback (and run file) for another")
        if model is None:
            raise RuntimeError("NeuralDbgCallback: the Trainer passed no model to attach to")
        scaler = getattr(optimizer, "scaler", None)  # accelerate's AcceleratedOptimizer
        self.dbg = NeuralDbg(model, path=self.path,
                             scaler=scaler if isinstance(scaler, torch.amp.GradScaler) else None,
                             **self.monitor_kwargs).start()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.dbg is None:
            return
        self.dbg.close()
        _, entry = summarise(self.dbg.run, self.report)
        self.report_path = entry.get("neuraldbg/report")
        state.log_history.append({**entry, "step": state.global_step})
