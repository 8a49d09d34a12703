"""NaN-safe JSON: non-finite floats as the strings "nan", "inf", "-inf", and NaN-aware equality."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def encode_float(x: float | None) -> float | str | None:
    """A float as JSON-safe value: non-finite values become the strings 'nan', 'inf', '-inf'."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def decode_float(x: float | int | str | None) -> float | None:
    """Inverse of `encode_float`."""
    if x is None:
        return None
    return float(x)


def encode_json(obj: Any) -> Any:
    """Recursively make an object JSON-safe (non-finite floats as strings)."""
    if isinstance(obj, float):
        return encode_float(obj)
    if isinstance(obj, Mapping):
        return {str(k): encode_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode_json(v) for v in obj]
    return obj


def same_values(a: Any, b: Any) -> bool:
    """Structural equality where NaN equals NaN (recorded NaNs must survive a round trip)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    return bool(a == b)
