"""The flight recorder: the last K steps of per-layer statistics in a bounded ring buffer.

Memory is fixed at construction (K x layers x stats float64 plus a mask), whatever the run
length. `window()` freezes the buffer into a `Window` that is stored with every event, so the
engine can see what led up to it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causal.schema.run import Window


class FlightRecorder:
    """Ring buffer of per-layer statistic rows, one row set per recorded step."""

    def __init__(self, layers: Sequence[str], stats: Sequence[str], capacity: int = 32) -> None:
        if capacity < 1:
            raise ValueError("recorder capacity must be >= 1")
        self.layers = tuple(layers)
        self.stats = tuple(stats)
        self.capacity = capacity
        shape = (capacity, len(self.layers), len(self.stats))
        self._values = np.full(shape, np.nan, dtype=np.float64)
        self._mask = np.zeros(shape, dtype=bool)
        self._steps = np.zeros(capacity, dtype=np.int64)
        self._count = 0  # steps pushed in total
        self._col = {s: k for k, s in enumerate(self.stats)}

    def __len__(self) -> int:
        return min(self._count, self.capacity)

    def push(self, step: int, columns: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        """Record one step: for each stat, (values [layers], observed mask [layers])."""
        slot = self._count % self.capacity
        self._values[slot] = np.nan
        self._mask[slot] = False
        for stat, (vals, mask) in columns.items():
            k = self._col[stat]
            self._values[slot, :, k] = vals
            self._mask[slot, :, k] = mask
        self._steps[slot] = step
        self._count += 1

    def _order(self) -> list[int]:
        n = len(self)
        start = self._count - n
        return [(start + i) % self.capacity for i in range(n)]

    def window(self, end_step: int) -> Window:
        """The buffered steps, oldest first, as an immutable `Window`."""
        order = self._order()
        vals, mask = self._values[order], self._mask[order]
        values = tuple(
            tuple(
                tuple(float(v) if m else None for v, m in zip(vr, mr, strict=True))
                for vr, mr in zip(vs, ms, strict=True)
            )
            for vs, ms in zip(vals.tolist(), mask.tolist(), strict=True)
        )
        return Window(
            end_step=end_step,
            steps=tuple(int(s) for s in self._steps[order]),
            layers=self.layers,
            stats=self.stats,
            values=values,
        )
