"""Statistics as pure functions on tensors: computed on the model's device, never synced here.

Each function returns a small 1-D float tensor; the monitor concatenates everything of a step
and copies it to the host once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn

from causal.run import ActivationKind, LayerStat
from neuraldbg.units import saturation_mask

#: Columns of `activation_stats` (the last one, has_nan, feeds the finiteness machine only).
ACT_COLUMNS: tuple[str, ...] = (
    LayerStat.ACT_MAX_ABS,
    LayerStat.ACT_MEAN,
    LayerStat.ACT_STD,
    LayerStat.ACT_SATURATED,
    LayerStat.ACT_ZERO,
    LayerStat.ACT_DEAD,
    LayerStat.ACT_NONFINITE,
    LayerStat.ACT_HEADROOM,
    "act_has_nan",
)
N_ACT = len(ACT_COLUMNS)
#: Columns of `tensor_stats` (inputs and targets).
TENSOR_COLUMNS = ("max_abs", "mean", "std", "nonfinite", "has_nan")
_INF = float("inf")


def iter_tensors(obj: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    """Tensors inside a module output or argument: tensor, tuple/list, dict or ModelOutput."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif depth < 4 and isinstance(obj, (list, tuple)):
        for o in obj:
            yield from iter_tensors(o, depth + 1)
    elif depth < 4 and isinstance(obj, dict):
        for o in obj.values():
            yield from iter_tensors(o, depth + 1)


def first_float(obj: Any) -> torch.Tensor | None:
    """The first floating-point tensor in `obj`, else None."""
    for t in iter_tensors(obj):
        if t.is_floating_point() and t.numel() > 0:
            return t
    return None


def _sample(x: torch.Tensor, max_elems: int) -> torch.Tensor:
    """A strided view of at most about `max_elems` elements (whole tensor when small)."""
    flat = x.reshape(-1)
    n = flat.numel()
    if n <= max_elems:
        return flat
    return flat[:: (n + max_elems - 1) // max_elems]


def activation_stats(module: nn.Module, x: torch.Tensor, kind: ActivationKind,
                     max_elems: int = 1 << 18) -> torch.Tensor:
    """max|a|, mean, std, saturated / zero / dead fractions, non-finite count, headroom, has-NaN.

    max|a| and the non-finite count cover the whole tensor (exactness for the non-finite hunt);
    the moments and fractions use a bounded strided sample of very large outputs. Fractions that
    do not apply to `kind` are NaN (the monitor marks them as not observed).
    """
    x = x.detach()
    nan = x.new_full((), float("nan"), dtype=torch.float32)
    max_abs = torch.linalg.vector_norm(x, ord=_INF).float()
    finite = torch.isfinite(x)
    nonfinite = (x.numel() - finite.sum()).float()
    has_nan = torch.isnan(x).any().float()
    s = _sample(x, max_elems).float()
    if s.numel() > 1:
        std, mean = torch.std_mean(s)
    else:
        mean, std = s.mean(), torch.zeros_like(nan)
    sat = saturation_mask(module, s).float().mean() if kind == ActivationKind.SATURATING else nan
    if kind == ActivationKind.RELU:
        zeros = s == 0
        zero = zeros.float().mean()
        if x.dim() >= 2 and x.shape[0] > 1:
            alive = (x.reshape(x.shape[0], -1) != 0).any(0)
            dead = 1.0 - alive.float().mean()
        else:
            dead = zero
    else:
        zero = dead = nan
    fmax = torch.finfo(x.dtype).max
    headroom = fmax / max_abs.double().clamp_min(1e-300)
    return torch.stack([max_abs, mean, std, sat, zero, dead, nonfinite, headroom.float(), has_nan])


def tensor_stats(x: torch.Tensor) -> torch.Tensor:
    """max|x|, mean, std, non-finite count and has-NaN of an input or target batch."""
    x = x.detach()
    if not x.is_floating_point():
        x = x.float()
    max_abs = torch.linalg.vector_norm(x, ord=_INF).float()
    nonfinite = (x.numel() - torch.isfinite(x).sum()).float()
    has_nan = torch.isnan(x).any().float()
    xf = x.float().reshape(-1)
    if xf.numel() > 1:
        std, mean = torch.std_mean(xf)
    else:
        mean, std = xf.mean(), torch.zeros((), device=x.device)
    return torch.stack([max_abs, mean, std, nonfinite, has_nan])


def nonfinite_flags(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """Per tensor: 0 finite, 1 has inf (no NaN), 2 has NaN. One small tensor, no sync."""
    if not tensors:
        return torch.zeros(0)
    out = []
    for t in tensors:
        t = t.detach()
        if not t.is_floating_point():
            out.append(torch.zeros((), device=t.device))
            continue
        nan = torch.isnan(t).any()
        bad = ~torch.isfinite(t).all()
        out.append(bad.float() + nan.float())
    return torch.stack([o.to(out[0].device) for o in out])


class NormGrouper:
    """Per-unit L2 norms of parameters (or their gradients) in one foreach reduction.

    Parameters shared by several units (tied weights) count in each unit; the global norm
    counts each distinct parameter once.
    """

    def __init__(self, unit_params: Sequence[Sequence[nn.Parameter]]) -> None:
        self.n_units = len(unit_params)
        index: dict[int, int] = {}
        self.params: list[nn.Parameter] = []
        pairs: list[tuple[int, int]] = []
        for u, params in enumerate(unit_params):
            for p in params:
                if id(p) not in index:
                    index[id(p)] = len(self.params)
                    self.params.append(p)
                pairs.append((index[id(p)], u))
        self._pairs = pairs

    def _combine(self, tensors: Sequence[torch.Tensor | None]) -> tuple[torch.Tensor, list[bool]]:
        """(per-unit norms [U] followed by the global norm, per-unit 'observed' flags)."""
        have = {i: t for i, t in enumerate(tensors) if t is not None}
        present = list(have)
        observed = [False] * self.n_units
        if not present:
            return torch.full((self.n_units + 1,), float("nan")), observed
        dense = [i for i in present if not have[i].is_sparse]
        norms: dict[int, torch.Tensor] = {}
        if dense:
            # float64 accumulation: a float32 norm overflows to inf for finite values > ~1e19
            found = torch._foreach_norm([have[i] for i in dense], 2, dtype=torch.float64)
            for i, n in zip(dense, found, strict=True):
                norms[i] = n
        for i in present:
            if have[i].is_sparse:
                norms[i] = have[i].coalesce()._values().double().norm()
        device = next(iter(norms.values())).device
        sq = torch.stack([norms[i].double().to(device) for i in present]) ** 2
        slot = {i: k for k, i in enumerate(present)}
        src, dst = [], []
        for p, u in self._pairs:
            if p in slot:
                src.append(slot[p])
                dst.append(u)
                observed[u] = True
        per_unit = torch.zeros(self.n_units, dtype=torch.float64, device=device)
        if src:
            per_unit.index_add_(0, torch.tensor(dst, device=device),
                                sq[torch.tensor(src, device=device)])
        total = sq.sum().reshape(1)
        return torch.cat([per_unit.sqrt(), total.sqrt()]), observed

    def grad_norms(self) -> tuple[torch.Tensor, list[bool]]:
        return self._combine([p.grad for p in self.params])

    def weight_norms(self) -> tuple[torch.Tensor, list[bool]]:
        return self._combine([p.detach() for p in self.params])

    def update_norms(self, previous: Sequence[torch.Tensor]) -> tuple[torch.Tensor, list[bool]]:
        """Norms of w - w_prev, from buffers filled by `copy_weights`."""
        if not self.params:
            return self._combine([])
        with torch.no_grad():
            diffs = torch._foreach_sub([p.detach() for p in self.params], list(previous))
        return self._combine(list(diffs))

    def alloc_copies(self) -> list[torch.Tensor]:
        return [torch.empty_like(p, memory_format=torch.preserve_format) for p in self.params]

    def copy_weights(self, buffers: list[torch.Tensor]) -> None:
        if not buffers:
            return
        with torch.no_grad():
            torch._foreach_copy_(buffers, [p.detach() for p in self.params])
