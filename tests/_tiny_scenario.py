"""A tiny scenario file (DESIGN.md's contract) that tests write into temporary suites."""

from __future__ import annotations

import textwrap
from pathlib import Path

TEMPLATE = '''
import torch
from torch import nn

CAUSE = {cause!r}
ORIGIN = None
SOURCE = "tests: a tiny regression"


def build(seed, fixed=False):
    {raise_line}
    g = torch.Generator().manual_seed(seed + {offset})
    w = torch.randn(4, 1, generator=g)
    batches = []
    for step in range(30):
        x = torch.randn(16, 4, generator=g)
        y = x @ w
        if {nan!r} and step == 5 and not fixed:
            x = x.clone()
            x[0, 0] = float("nan")
        batches.append((x, y))
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    return {{"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.05),
            "loss_fn": nn.MSELoss(), "batches": batches, "steps": 30, "amp_dtype": None,
            "scaler": None}}
'''


def write_suite(directory: Path, files: dict[str, tuple[str, bool, str]],
                distinct_seeds: bool = False) -> Path:
    """Write {name: (cause, nan at step 5, a line run first in build)} as scenario files."""
    for i, (name, (cause, nan, raise_line)) in enumerate(files.items()):
        text = TEMPLATE.format(cause=cause, nan=nan, raise_line=raise_line or "pass",
                               offset=100 * i if distinct_seeds else 0)
        (directory / f"{name}.py").write_text(textwrap.dedent(text))
    return directory
