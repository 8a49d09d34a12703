"""What `neuraldbg confirm` found by re-running a run's failing step (`neuraldbg.replay`),
kept beside the run file (`RUN.confirm.json`) and reported by `diagnose` (`confirmed_by`).
Torch-free: the file is plain JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from causal.schema.run import Run
from causal.schema.safe_text import printable_strings


def confirm_path(run_path: str | Path) -> Path:
    """Beside the run file: `RUN.confirm.json`."""
    p = Path(run_path)
    return p.with_name(p.stem + ".confirm.json")


def confirmations(run: Run) -> tuple[dict[str, Any], ...]:
    """The interventions recorded for `run` (none when it was never confirmed, or the file is
    not what `neuraldbg confirm` writes)."""
    if run.path is None:
        return ()
    path = confirm_path(run.path)
    try:
        data = json.loads(path.read_text()) if path.is_file() else []
    except (OSError, ValueError, RecursionError):
        return ()
    if not isinstance(data, list):
        return ()
    keys = {"name", "removes_failure", "detail", "confirms"}
    return tuple(printable_strings(d) for d in data if isinstance(d, dict) and keys <= set(d))


def confirmation_lines(found: tuple[dict[str, Any], ...]) -> list[str]:
    """The report's lines: each intervention that confirms a cause, else what was tried."""
    confirming = [f for f in found if f.get("confirms")]
    if confirming:
        return [f"confirmed by intervention: {f['name']}: {f['detail']} -> {f['confirms']}"
                for f in confirming]
    return ["re-run by `neuraldbg confirm`, no intervention confirmed a cause: "
            + "; ".join(f"{f['name']}: {f['detail']}" for f in found)] if found else []
