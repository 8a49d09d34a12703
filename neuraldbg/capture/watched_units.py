"""Which modules neuraldbg watches ("units"), and how each one's output is judged.

A unit is a module with no children (a leaf) or a module that owns parameters directly (e.g.
`nn.MultiheadAttention`, whose `in_proj_weight` is used functionally; its child `out_proj` is a
unit of its own that may never be called as a module). The root is a unit only when it is a
leaf or owns parameters directly; its name is then "" as in `model.named_modules()`.
A `torch.compile`d model's modules keep the names they have in the model it wraps
(`user_root`): "0", not "_orig_mod.0".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from causal.schema.run import ActivationKind
from neuraldbg.capture.sharded import local

#: Activation modules whose output is bounded and whose gradient vanishes at the bounds.
SATURATING: tuple[type[nn.Module], ...] = (
    nn.Tanh,
    nn.Sigmoid,
    nn.Hardtanh,  # also ReLU6
    nn.Softsign,
    nn.Hardsigmoid,
)
#: Activation modules that output exact zeros for inactive units.
RELU_FAMILY: tuple[type[nn.Module], ...] = (nn.ReLU, nn.ReLU6, nn.Threshold)


def activation_kind(module: nn.Module) -> ActivationKind:
    """ReLU family wins over saturating (ReLU6 is both: its dead units are the failure mode). A
    ReLU `nn.RNN` or `nn.RNNCell` returns its ReLUs' output (its last layer's) as its own."""
    if isinstance(module, RELU_FAMILY) or (isinstance(module, (nn.RNN, nn.RNNCell))
                                           and module.nonlinearity == "relu"):
        return ActivationKind.RELU
    if isinstance(module, SATURATING):
        return ActivationKind.SATURATING
    return ActivationKind.OTHER


@dataclass(frozen=True)
class Unit:
    """A monitored module: its qualified name, the module, the parameters it owns, and the
    scale of its weights when the monitor started (`weight_gain`)."""

    name: str
    module: nn.Module
    params: tuple[nn.Parameter, ...]
    kind: ActivationKind
    weight_gain: float | None = None

    @property
    def module_type(self) -> str:
        return type(self.module).__name__

    @property
    def param_count(self) -> int:
        return sum(p.numel() for p in self.params)


def _own_params(module: nn.Module, leaf: bool) -> tuple[nn.Parameter, ...]:
    if leaf:
        return tuple(module.parameters(recurse=True))
    return tuple(p for p in module._parameters.values() if p is not None)


def is_unit(module: nn.Module) -> bool:
    has_children = next(iter(module.children()), None) is not None
    owns = any(p is not None for p in module._parameters.values())
    return (not has_children) or owns


def user_root(model: nn.Module) -> nn.Module:
    """The module whose `named_modules()` names are the user's: the model a `torch.compile`
    wrapper (`OptimizedModule`, which holds it as `_orig_mod`) wraps, else `model` itself."""
    inner = getattr(model, "_orig_mod", None)
    return inner if isinstance(inner, nn.Module) and is_compiled(model) else model


def is_compiled(model: nn.Module) -> bool:
    """A `torch.compile`d model (a function mode in its forward would break its graphs)."""
    return type(model).__name__ == "OptimizedModule" or hasattr(model, "_orig_mod")


def find_units(model: nn.Module) -> list[Unit]:
    """The units of `model` in `named_modules()` order (shared modules appear once), with the
    gains of their weights as they are now (one host read for all of them); a compiled
    model's under the names of the model it wraps (`user_root`)."""
    found = []
    for name, module in user_root(model).named_modules():
        if not is_unit(module):
            continue
        leaf = next(iter(module.children()), None) is None
        found.append((name, module, _own_params(module, leaf)))
    gains = weight_gains([params for _, _, params in found])
    return [Unit(name, module, params, activation_kind(module), gain)
            for (name, module, params), gain in zip(found, gains, strict=True)]


def _main_weight(params: Sequence[nn.Parameter]) -> nn.Parameter | None:
    """A unit's largest real parameter of two or more dimensions (its weight matrix or kernel),
    None when it has none or its values do not exist yet (lazy modules, the meta device)."""
    best = None
    for p in params:
        if isinstance(p, nn.parameter.UninitializedParameter):
            continue
        if (p.dim() >= 2 and p.is_floating_point() and p.numel() > 0 and not p.is_meta
                and (best is None or p.numel() > best.numel())):
            best = p
    return best


def dtype_name(dtype: torch.dtype) -> str:
    """"float16", not "torch.float16" (as the run file records dtypes)."""
    return str(dtype).replace("torch.", "")


def norm32(t: torch.Tensor) -> torch.Tensor:
    """The L2 norm of `t` as a 0-d float32 tensor: accumulated in float32 for float32 and
    narrower dtypes, in float64 for float64 (torch refuses a narrowing `dtype=` there)."""
    if t.dtype == torch.float64:
        return torch.linalg.vector_norm(t).float()
    return torch.linalg.vector_norm(t, dtype=torch.float32)


def weight_gains(groups: Sequence[Sequence[nn.Parameter]]) -> list[float | None]:
    """Per group of parameters (a unit's), the gain of its weight: the root mean square of its
    values times sqrt(fan_in), fan_in as `torch.nn.init` counts it (size(1) times the kernel
    size). About 0.58 under PyTorch's default init of Linear and Conv layers, 1-1.4 under
    Xavier or Kaiming init, 0 for a zero-initialised layer; None without a weight."""
    weights = [None if w is None else local(w) for w in (_main_weight(ps) for ps in groups)]
    present = [w for w in weights if w is not None]
    if not present:
        return [None] * len(weights)
    with torch.no_grad():
        device = present[0].device
        rms = torch.stack([
            (norm32(w.detach()) / math.sqrt(w.numel()))
            .to(device) for w in present]).tolist()  # one host read
    values = iter(rms)
    out: list[float | None] = []
    for w in weights:
        if w is None:
            out.append(None)
            continue
        fan_in = w.shape[1] * math.prod(w.shape[2:])
        v = next(values) * math.sqrt(fan_in)
        out.append(v if math.isfinite(v) else None)
    return out


def saturation_mask(module: nn.Module, out: torch.Tensor) -> torch.Tensor:
    """Boolean mask of saturated elements of a saturating activation's output."""
    a = out
    if isinstance(module, nn.Tanh):
        return a.abs() > 0.99
    if isinstance(module, nn.Sigmoid):
        return (a < 0.01) | (a > 0.99)
    if isinstance(module, nn.Hardsigmoid):
        return (a <= 0.0) | (a >= 1.0)
    if isinstance(module, nn.Hardtanh):
        return (a <= module.min_val) | (a >= module.max_val)
    if isinstance(module, nn.Softsign):
        return a.abs() > 0.9
    return torch.zeros_like(a, dtype=torch.bool)
