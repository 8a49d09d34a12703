"""A folder of recorded scenario runs, so that a change to the diagnosis is re-scored in seconds.

`bench` and `fit` train every scenario x seed under the monitor and then diagnose the run. Given a
store (`--runs DIR`), each run file is kept there with a small JSON sidecar (the per-step losses
and a key), and a later call reuses it instead of training again when the key still matches: the
scenario file's bytes, the seed, the loop (`instrument`), the torch version and the source of the
capture side (every module of `neuraldbg` except the suite runner and the CLI). Any of those
changing retrains the run; the diagnosis side (`causal/`) is free to change, which is the point.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuraldbg.errors import ConfigError

if TYPE_CHECKING:
    from causal.schema.run import Run

__all__ = ["capture_digest", "run_key", "train_or_load"]

#: Parts of the neuraldbg package that do not change what a run records.
_NOT_CAPTURE = ("suite", "cli.py", "integrations")


@functools.cache
def capture_digest() -> str:
    """A digest of the capture side's source and the torch version: what a stored run depends
    on besides its scenario."""
    import torch

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"torch {torch.__version__}".encode())
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        if rel.parts[0] in _NOT_CAPTURE:
            continue
        h.update(str(rel).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def run_key(path: Path, seed: int, instrument: str) -> str:
    """The key a stored run must match to be reused."""
    h = hashlib.sha256(path.read_bytes())
    h.update(f"\0{seed}\0{instrument}\0{capture_digest()}".encode())
    return h.hexdigest()[:24]


def _stored(store: Path, path: Path, seed: int, instrument: str) -> tuple[Path, Path]:
    stem = f"{path.stem}-{seed}-{instrument}"
    return store / f"{stem}.ndbg", store / f"{stem}.json"


def train_or_load(spec_of: Any, path: Path, seed: int, instrument: str, store: Path | None,
                  tmp: str) -> tuple[list[float], Run | None]:
    """The losses and the run of one scenario x seed: trained (`spec_of()` builds the scenario)
    into `tmp`, or with a `store`, read back from it when its key matches, else trained into it.
    """
    from neuraldbg.suite.scenario import train

    if store is None:
        return train(spec_of(), os.path.join(tmp, f"{path.stem}-{seed}.ndbg"),
                     instrument=instrument)
    if not store.is_dir():
        raise ConfigError(f"run store {str(store)!r} is not a directory: create it, or pass "
                          "another --runs folder")
    run_file, side = _stored(store, path, seed, instrument)
    key = run_key(path, seed, instrument)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        meta = json.loads(side.read_text(encoding="utf-8"))
        if meta["key"] == key and run_file.is_file():
            from causal.schema.run_file import load_run

            return [float(v) for v in meta["losses"]], load_run(run_file)
    for stale in (run_file, side, *run_file.parent.glob(run_file.name + "-*")):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    losses, run = train(spec_of(), run_file, instrument=instrument)
    tmp_side = side.with_suffix(".json.tmp")
    tmp_side.write_text(json.dumps({"key": key, "scenario": str(path), "seed": seed,
                                    "instrument": instrument, "losses": losses}),
                        encoding="utf-8")
    os.replace(tmp_side, side)
    return losses, run
