"""Live alerts while training: the monitor is not silent until someone asks.

Through Python's `logging` (logger "neuraldbg", level WARNING), one concise line at the run's
first non-finite value (where it was born, the step) and one at the loss's first turn into
divergence, each with the run file's path and the command that explains it; nothing on quiet
steps. Silence or redirect it the usual way (`logging.getLogger("neuraldbg")`). A user's
`on_event` callable is called with every event as it is recorded; one that raises is reported
once (a `NeuralDbgWarning`) and not called again, and training goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from causal.schema.run import Event, EventKind, State
from neuraldbg.reporting import Reporter

log = logging.getLogger("neuraldbg")


class LiveAlerts:
    """Called with each batch of events the analyzer writes."""

    def __init__(self, path: str, reporter: Reporter,
                 on_event: Callable[[Event], object] | None = None,
                 logged: bool = True) -> None:
        self.path = path
        self.logged = logged
        self.reporter = reporter
        self.on_event = on_event
        self.said: set[str] = set()

    def __call__(self, events: Sequence[Event]) -> None:
        for ev in events:
            if ev.kind == EventKind.NONFINITE_ORIGIN and "nonfinite" not in self.said:
                self.said.add("nonfinite")
                birth = ev.birth
                how = f"in the {birth.direction} pass" if birth.direction in (
                    "forward", "backward") else f"in the {birth.direction or 'run'}"
                kind = f" ({birth.module_type})" if birth.module_type else ""
                self._alert(f"first non-finite value at step {ev.step}, born {how} at "
                            f"'{ev.layer_name}'{kind}")
            elif ev.to_state == State.LOSS_DIVERGING and "diverging" not in self.said:
                self.said.add("diverging")
                self._alert(f"the loss started diverging at step {ev.step} ({ev.value:.3g})")
        if self.on_event is not None:
            self._call_user(events)

    def _alert(self, what: str) -> None:
        if not self.logged:
            return
        log.warning("neuraldbg: %s. Run file %s; why: neuraldbg diagnose %s", what, self.path,
                    self.path)

    def _call_user(self, events: Sequence[Event]) -> None:
        assert self.on_event is not None
        for ev in events:
            try:
                self.on_event(ev)
            except Exception as e:
                self.on_event = None
                self.reporter.warn(f"NeuralDbg(on_event=...) raised {type(e).__name__}: {e}; it "
                                   "is not called again (the recording goes on)")
                return
