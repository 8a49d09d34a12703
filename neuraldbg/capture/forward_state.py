"""The module state a forward pass changes, so that a replayed pass starts where the original one
did.

Some forwards change their own module's state: a call counter that drives a temperature or a
warmup (`self.calls += 1`), a step buffer, a power-iteration vector (spectral norm), an EMA
codebook, a generator they draw noise from. Run again after the original pass, such a forward
would start from the state the original pass left, not the one it began with. `ForwardState`
learns which buffers and attributes the model's forward changes (on full-statistics steps, by
comparing version counters and attribute identities around the pass), keeps just those, and
the states of the generators the modules keep, as each quiet pass begins (usually nothing at
all), and puts them back before the pass is replayed. Normalisation layers' running
statistics are left out: a forward in training mode does not read them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase

from neuraldbg.capture.state_preservation import module_generators

#: What a pass began with: (module, buffer name, a copy), (module, attribute name, value) and
#: (a generator the modules keep, its state).
Snapshot = tuple[tuple[tuple[nn.Module, str, torch.Tensor], ...],
                 tuple[tuple[nn.Module, str, Any], ...],
                 tuple[tuple[torch.Generator, torch.Tensor], ...]]
EMPTY: Snapshot = ((), (), ())
#: Full-statistics passes whose state changes are learnt (each costs a walk over the modules).
LEARN_PASSES = 8


class ForwardState:
    """Learns what the forward of `model` changes; keeps and puts back that state, with the
    states of the random generators its modules keep (`torch.randn(..., generator=self.noise)`
    changes the generator in place)."""

    def __init__(self, model: nn.Module) -> None:
        self.modules = list(model.modules())
        self.generators = module_generators(self.modules)
        self.buffers: dict[tuple[int, str], tuple[nn.Module, str]] = {}
        self.attrs: dict[tuple[int, str], tuple[nn.Module, str]] = {}
        self.learnt = 0  # passes watched so far
        self._before: list[tuple[nn.Module, dict[str, Any],
                                 dict[str, tuple[torch.Tensor, int]]]] | None = None

    def watch_begin(self) -> None:
        """Note the state before a pass whose changes are to be learnt (the first
        `LEARN_PASSES` full-statistics passes: what a forward changes shows at once)."""
        if self.learnt >= LEARN_PASSES:
            return
        self.learnt += 1
        self._before = [
            (m, dict(vars(m)),
             {k: (b, b._version) for k, b in m._buffers.items() if b is not None})
            for m in self.modules if not isinstance(m, _NormBase)]

    def watch_end(self) -> None:
        """Learn what the pass changed: buffers written in place or replaced, attributes
        rebound (set for the first time by this pass: a lazily built cache, left alone)."""
        before, self._before = self._before, None
        if before is None:
            return
        for m, attrs, buffers in before:
            for key, (old, version) in buffers.items():
                buf = m._buffers.get(key)
                if buf is not None and (buf is not old or buf._version != version):
                    self.buffers.setdefault((id(m), key), (m, key))
            now = vars(m)
            for key, value in attrs.items():
                if key in now and now[key] is not value:
                    self.attrs.setdefault((id(m), key), (m, key))

    def snapshot(self) -> Snapshot:
        """The learnt state as it is now (a pass is about to begin)."""
        if not self.buffers and not self.attrs and not self.generators:
            return EMPTY
        bufs = tuple((m, k, b.detach().clone()) for m, k in self.buffers.values()
                     if (b := m._buffers.get(k)) is not None)
        attrs = tuple((m, k, vars(m)[k]) for m, k in self.attrs.values() if k in vars(m))
        return bufs, attrs, tuple((g, g.get_state()) for g in self.generators)


def restore(snap: Snapshot) -> None:
    """Put back a `snapshot` (the caller restores the state after the replay as a whole)."""
    bufs, attrs, generators = snap
    for g, state in generators:
        g.set_state(state)
    with torch.no_grad():
        for m, key, saved in bufs:
            buf = m._buffers.get(key)
            if buf is not None and buf.shape == saved.shape:
                buf.copy_(saved)
    for m, key, value in attrs:
        vars(m)[key] = value
