"""Statistics as pure functions on tensors: computed on the model's device, never synced here.

Each function returns a small 1-D float tensor; the monitor concatenates everything of a step
and copies it to the host once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from causal.schema.run import ActivationKind, LayerStat
from neuraldbg.capture.sharded import local, local_all
from neuraldbg.capture.watched_units import norm32, saturation_mask

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


Moments = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def moments(x: torch.Tensor) -> Moments:
    """min, max, sum and L2 norm of `x` as four 0-d tensors, from three cheap reductions (NaN
    propagates through all); the monitor stacks them with the step's other scalars.

    Mean, std, min and max|x| follow on the host (`stats_from_moments`); the non-finite count is
    only counted when min or max shows a non-finite value.
    """
    if x.requires_grad:
        x = x.detach()
    if not x.is_floating_point():
        x = x.float()
    lo, hi = torch.aminmax(x)  # in x's dtype; stacking with the float32 sums promotes them
    if x.dtype == torch.float32:
        return (lo, hi, x.sum(), torch.linalg.vector_norm(x))
    return (lo, hi, x.sum(dtype=torch.float32), norm32(x))


def stats_from_moments(parts: Sequence[Sequence[float]], counts: Sequence[int]
                       ) -> tuple[float, float, float, float, bool]:
    """(max|x|, mean, std, min, finite) of the union of tensors, from their `moments`."""
    n = sum(counts)
    lo = min(p[0] for p in parts)
    hi = max(p[1] for p in parts)
    if not all(math.isfinite(p[0]) and math.isfinite(p[1]) for p in parts):
        return math.nan, math.nan, math.nan, math.nan, False
    total = sum(p[2] for p in parts)
    sq = sum(p[3] ** 2 for p in parts)
    mean = total / max(n, 1)
    var = max(sq / max(n, 1) - mean * mean, 0.0) * (n / (n - 1) if n > 1 else 0.0)
    return max(abs(lo), abs(hi)), mean, math.sqrt(var), lo, True


class LabelPool:
    """The class labels seen so far, counted per class on the device, and their entropy: what
    a model that ignores its inputs and predicts only the labels' frequencies scores (the
    trivial predictor's loss).

    One batch is a poor sample of a label distribution with many classes: a language model's
    512 tokens from a 50k vocabulary give a plug-in entropy below log(512), far under the
    unigram entropy the trivial predictor really scores. So the counts are pooled over every
    batch added (the steps with full statistics), and the entropy is the Chao-Shen
    coverage-adjusted estimate, which stays close where many classes were seen once. Negative
    labels (an `ignore_index` of -100) are left out. At most `MAX_CLASSES` distinct classes
    are kept: labels of classes not yet seen beyond that are not counted."""

    MAX_CLASSES = 1 << 20

    def __init__(self) -> None:
        self.classes = torch.empty(0, dtype=torch.long)  # sorted, distinct
        self.counts = torch.empty(0)  # per class

    def add(self, labels: Sequence[torch.Tensor]) -> torch.Tensor:
        """Count `labels` (integer tensors) into the pool; the pool's entropy in nats (0-d
        float32, NaN while no valid label was seen). Sorts (`torch.unique`): a device
        synchronisation, for steps with full statistics. Once `MAX_CLASSES` distinct classes
        were seen, the pool stops counting and keeps its entropy."""
        v = torch.cat([t.detach().reshape(-1) for t in labels]).long()
        if len(self.classes) >= self.MAX_CLASSES:
            return chao_shen_entropy(self.counts.to(v.device))
        v = v[v >= 0]
        both = torch.cat([self.classes.to(v.device), v])
        weights = torch.cat([self.counts.to(v.device), torch.ones(len(v), device=v.device)])
        self.classes, inverse = torch.unique(both, return_inverse=True)
        self.counts = torch.zeros(len(self.classes), device=v.device).index_add_(
            0, inverse, weights)
        return chao_shen_entropy(self.counts)


def chao_shen_entropy(counts: torch.Tensor) -> torch.Tensor:
    """The entropy (nats, 0-d float32) of the distribution behind per-class `counts`, Chao and
    Shen's (2003) coverage-adjusted estimate: the plug-in frequencies shrunk by the sample's
    coverage (1 - singletons / n), each term weighted by the chance its class was seen at all
    (Horvitz-Thompson). NaN for an empty sample."""
    counts = counts.float()
    n = counts.sum()
    singletons = (counts == 1).sum().float()
    singletons = torch.where(singletons >= n, n - 1.0, singletons)  # all seen once
    p = (1.0 - singletons / n.clamp_min(1.0)) * counts / n.clamp_min(1.0)
    seen = 1.0 - torch.exp(n * torch.log1p(-p))
    h = -(torch.special.xlogy(p, p) / seen.clamp_min(1e-30)).sum()
    return torch.where(n > 0, h, torch.full_like(h, math.nan))


def nonfinite_count(tensors: Sequence[torch.Tensor]) -> tuple[float, bool]:
    """Exact number of non-finite values in `tensors` and whether any is NaN (one sync)."""
    counts = torch.stack([(~torch.isfinite(t.detach())).sum().float() for t in tensors]).sum()
    nans = torch.stack([torch.isnan(t.detach()).any().float() for t in tensors]).amax()
    c, n = torch.stack([counts, nans]).tolist()
    return float(c), bool(n)


def activation_stats(module: nn.Module, x: torch.Tensor, kind: ActivationKind,
                     max_elems: int = 1 << 18) -> torch.Tensor:
    """max|a|, mean, std, saturated / zero / dead fractions, non-finite count, headroom, has-NaN.

    max|a| and the non-finite count cover the whole tensor (exactness for the non-finite hunt);
    the moments and fractions use a bounded strided sample of very large outputs. Fractions that
    do not apply to `kind` are NaN (the monitor marks them as not observed).
    """
    x = x.detach()
    lo, hi = torch.aminmax(x)
    if x.is_cpu and x.dtype in _HOST_DTYPES:  # values read in place: no sync to avoid
        row = _host_stats(module, x, kind, float(lo), float(hi), max_elems)
        if row is not None:
            return row
    nan = torch.full((), float("nan"), device=x.device)
    max_abs = torch.maximum(hi.float(), -lo.float())
    max_abs = torch.where(torch.isnan(lo) | torch.isnan(hi), nan, max_abs)
    nonfinite = (x.numel() - torch.isfinite(x).sum()).float()
    has_nan = (torch.isnan(lo) | torch.isnan(hi)).float()
    s = _sample(x, max_elems)
    n = s.numel()
    mean = s.sum(dtype=torch.float32) / n
    if n > 1:
        sq = norm32(s) ** 2 / n
        std = ((sq - mean * mean).clamp_min(0.0) * (n / (n - 1))).sqrt()
    else:
        std = torch.zeros_like(nan)
    sat, zero, dead = activation_fractions(module, x, kind, s)
    fmax = torch.finfo(x.dtype).max
    headroom = fmax / max_abs.double().clamp_min(1e-300)
    return torch.stack([max_abs, mean, std, sat, zero, dead, nonfinite, headroom.float(),
                        has_nan])


#: Dtypes whose host-memory statistics `_host_stats` computes with Python floats.
_HOST_DTYPES = (torch.float32, torch.float64)


def _host_stats(module: nn.Module, x: torch.Tensor, kind: ActivationKind, lo: float, hi: float,
                max_elems: int) -> torch.Tensor | None:
    """`activation_stats` of a finite output in host memory, with its scalars read as they come
    (a handful of torch calls instead of some thirty: a deep model's full-statistics step makes
    one such row per layer). The same float32 arithmetic as the general path, so the same
    values to the last bit (a near-constant output's std is float32 cancellation noise there,
    and the evidence was fitted on it). None when the output has a non-finite value: the
    general path counts them exactly."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    s = _sample(x, max_elems)
    n = s.numel()
    f32 = np.float32
    with np.errstate(over="ignore", invalid="ignore"):  # inf, as torch gives it, silently
        mean = f32(s.sum(dtype=torch.float32).item()) / f32(n)
        if n > 1:
            norm = f32(norm32(s).item())
            var = max(norm * norm / f32(n) - mean * mean, f32(0.0)) * f32(n / (n - 1))
            std = torch.tensor(var).sqrt().item()  # torch's float32 sqrt, as the general path
        else:
            std = 0.0
    max_abs = float(f32(max(hi, -lo)))
    sat, zero, dead = (float(f) for f in activation_fractions(module, x, kind, s))
    headroom = torch.finfo(x.dtype).max / max(max_abs, 1e-300)
    return torch.tensor([max_abs, float(mean), float(std), sat, zero, dead, 0.0, headroom, 0.0],
                        dtype=torch.float32)


def activation_fractions(module: nn.Module, x: torch.Tensor, kind: ActivationKind,
                         sample: torch.Tensor | None = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Saturated, zero and dead fractions of the activation output `x` of `module` (0-d
    tensors; NaN where `kind` has none). The saturated and zero fractions use `sample` (a
    bounded sample of `x`) when given; dead units (never active in the batch) use all of `x`."""
    x = x.detach()
    s = x if sample is None else sample
    nan = torch.full((), float("nan"), device=x.device)
    sat = saturation_mask(module, s).float().mean() if kind == ActivationKind.SATURATING else nan
    if kind != ActivationKind.RELU:
        return sat, nan, nan
    zero = (s == 0).float().mean()
    if x.dim() >= 2 and x.shape[0] > 1:
        return sat, zero, 1.0 - (x.reshape(x.shape[0], -1) != 0).any(0).float().mean()
    return sat, zero, zero


@dataclass(frozen=True)
class ParamNorms:
    """L2 norms of some of a model's parameters (or their gradients), still on the device.

    `present[k]` says whether parameter k had a tensor (a gradient can be None); `norms` holds
    the norms of the present ones, in order.
    """

    norms: torch.Tensor
    present: tuple[bool, ...]

    @property
    def index(self) -> list[int]:
        """The parameter index of each value in `norms`."""
        return [k for k, p in enumerate(self.present) if p]


#: `NormGrouper.group` sums in plain Python up to this many (parameter, unit) memberships.
_SMALL_GROUP = 64


class NormGrouper:
    """Per-unit L2 norms of parameters or gradients: one foreach reduction on the device, the
    grouping into units on the host.

    Parameters shared by several units (tied weights) count in each unit; the global norm counts
    each distinct parameter once.
    """

    def __init__(self, unit_params: Sequence[Sequence[nn.Parameter]]) -> None:
        self.n_units = len(unit_params)
        index: dict[int, int] = {}
        self.params: list[nn.Parameter] = []
        src, dst = [], []
        for u, params in enumerate(unit_params):
            for p in params:
                if id(p) not in index:
                    index[id(p)] = len(self.params)
                    self.params.append(p)
                src.append(index[id(p)])
                dst.append(u)
        self._src = np.array(src, dtype=np.int64)  # (parameter, unit) membership pairs
        self._dst = np.array(dst, dtype=np.int64)
        self._pairs = list(zip(src, dst, strict=True))
        # the last `index` grouped, and where each parameter's value is in it (-1: absent)
        self._last_index: list[int] = []
        self._position: list[int] = []

    def measure(self, tensors: Sequence[torch.Tensor | None]) -> ParamNorms | None:
        """Launch the norms of `tensors` (one per parameter); None when none is present."""
        tensors = local_all(tensors)  # a sharded parameter: this rank's shard
        have = [t for t in tensors if t is not None]
        if not have:
            return None
        present = tuple(t is not None for t in tensors)
        dense = [t for t in have if not t.is_sparse]
        found = iter(torch._foreach_norm(dense)) if dense else iter(())
        norms = [next(found) if not t.is_sparse else t.coalesce()._values().norm()
                 for t in have]
        out = torch.stack([n.to(norms[0].device, torch.float32) for n in norms])
        return ParamNorms(out, present)

    def refine(self, values: list[float], index: Sequence[int]) -> list[float]:
        """Recompute in float64 the gradient norms that came back inf: a float32 norm overflows
        for finite values above ~1e19 (an extra sync, only on such a step). A gradient already
        released (zero_grad before the step closed) keeps its inf. `index[i]` is the parameter
        of `values[i]`."""
        out = list(values)
        for slot, v in enumerate(values):
            if v != math.inf:
                continue
            g = self.params[index[slot]].grad
            if g is not None and not g.is_sparse:
                g = local(g)
                wide = torch.complex128 if g.is_complex() else torch.float64
                out[slot] = float(torch.linalg.vector_norm(g.detach().to(wide)))
        return out

    def group(self, values: Sequence[float], index: Sequence[int]
              ) -> tuple[np.ndarray, np.ndarray, float]:
        """(per-unit norms, per-unit observed mask, global norm) from the fetched values;
        `index[i]` is the parameter of `values[i]` (each parameter at most once).

        Up to `_SMALL_GROUP` memberships in plain Python (numpy's per-call cost dominates
        there: this runs for every step), the same sums in the same order as `np.bincount`."""
        if len(self._pairs) > _SMALL_GROUP:
            return self._group_np(values, index)
        if index != self._last_index:
            self._last_index = list(index)
            self._position = [-1] * len(self.params)
            for i, k in enumerate(index):
                self._position[k] = i
        pos = self._position
        sq = [v * v for v in values]
        acc = [0.0] * self.n_units
        seen = [False] * self.n_units
        for s, d in self._pairs:
            if (i := pos[s]) >= 0:
                acc[d] += sq[i]
                seen[d] = True
        per_unit = [math.sqrt(a) if o else math.nan for a, o in zip(acc, seen, strict=True)]
        return np.array(per_unit), np.array(seen), math.sqrt(math.fsum(sq))

    def _group_np(self, values: Sequence[float], index: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray, float]:
        mask = np.zeros(len(self.params), dtype=bool)
        mask[list(index)] = True
        sq = np.zeros(len(self.params))
        with np.errstate(over="ignore", invalid="ignore"):
            sq[list(index)] = np.square(values)
            per_unit = np.sqrt(np.bincount(self._dst, weights=sq[self._src],
                                           minlength=self.n_units))
            total = float(np.sqrt(sq.sum()))
        observed = np.bincount(self._dst, weights=mask[self._src],
                               minlength=self.n_units) > 0
        per_unit[~observed] = np.nan
        return per_unit, observed, total

    def grad_norms(self) -> ParamNorms | None:
        return self.measure([p.grad for p in self.params])

    def weight_norms(self) -> ParamNorms | None:
        return self.measure([p.detach() for p in self.params])

    def update_norms(self, previous: Sequence[torch.Tensor]) -> ParamNorms | None:
        """Norms of w - w_prev, from buffers filled by `copy_weights`."""
        if not self.params:
            return None
        with torch.no_grad():
            diffs = torch._foreach_sub([local(p.detach()) for p in self.params], list(previous))
        return self.measure(diffs)

    def alloc_copies(self) -> list[torch.Tensor]:
        return [torch.empty_like(local(p), memory_format=torch.preserve_format)
                for p in self.params]

    def copy_weights(self, buffers: list[torch.Tensor]) -> None:
        if not buffers:
            return
        with torch.no_grad():
            torch._foreach_copy_(buffers, [local(p.detach()) for p in self.params])
