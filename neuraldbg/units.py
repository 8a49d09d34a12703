"""Which modules neuraldbg watches ("units"), and how each one's output is judged.

A unit is a module with no children (a leaf) or a module that owns parameters directly (e.g.
`nn.MultiheadAttention`, whose `in_proj_weight` is used functionally; its child `out_proj` is a
unit of its own that may never be called as a module). The root is a unit only when it is a
leaf or owns parameters directly; its name is then "" as in `model.named_modules()`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from causal.run import ActivationKind

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
    """ReLU family wins over saturating (ReLU6 is both: its dead units are the failure mode)."""
    if isinstance(module, RELU_FAMILY):
        return ActivationKind.RELU
    if isinstance(module, SATURATING):
        return ActivationKind.SATURATING
    return ActivationKind.OTHER


@dataclass(frozen=True)
class Unit:
    """A monitored module: its qualified name, the module, and the parameters it owns."""

    name: str
    module: nn.Module
    params: tuple[nn.Parameter, ...]
    kind: ActivationKind

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


def find_units(model: nn.Module) -> list[Unit]:
    """The units of `model` in `named_modules()` order (shared modules appear once)."""
    units = []
    for name, module in model.named_modules():
        if not is_unit(module):
            continue
        leaf = next(iter(module.children()), None) is None
        units.append(Unit(name, module, _own_params(module, leaf), activation_kind(module)))
    return units


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
