"""What every integration does when training ends: diagnose the run, log the diagnosis (logger
"neuraldbg": WARNING when failing, INFO when healthy), write the HTML report next to the run file
when matplotlib is installed, and sum it up as flat `neuraldbg/...` metrics for the framework's
own log."""

from __future__ import annotations

import logging
from typing import Any

from causal.diagnose import Diagnosis, diagnose
from causal.schema.run import Run

log = logging.getLogger("neuraldbg")


def summarise(run: Run, report: bool = True) -> tuple[Diagnosis, dict[str, Any]]:
    """The run's diagnosis, logged, and its summary (`neuraldbg/report` when one was written)."""
    diagnosis = diagnose(run)
    top = diagnosis.top
    level = logging.INFO if top is None else logging.WARNING
    log.log(level, "neuraldbg diagnosis of %s:\n%s", run.path, diagnosis.format())
    entry: dict[str, Any] = {"neuraldbg/healthy": diagnosis.healthy,
                             "neuraldbg/failing": diagnosis.failing, "neuraldbg/run": run.path}
    if top is not None:
        entry.update({"neuraldbg/cause": top.cause, "neuraldbg/confidence": top.confidence,
                      "neuraldbg/layer": top.layer, "neuraldbg/cause_step": top.step})
    if report:
        from causal.html_report import MissingDependencyError, write_report

        try:
            entry["neuraldbg/report"] = str(write_report(run, diagnosis=diagnosis))
            log.log(level, "neuraldbg report: %s", entry["neuraldbg/report"])
        except MissingDependencyError as e:
            log.info("neuraldbg: no HTML report (%s)", e)
    return diagnosis, entry
