"""The run file: one embedded SQLite database per run, written while training, read without torch.

Written incrementally (rollback journal, committed at least every `flush_seconds` and whenever
events arrive), so a process killed with SIGKILL leaves a file with everything committed before
the kill. Storage that fails mid-run (disk full, a file-size limit, the directory deleted) never
raises into training: the writer reports the fault once (`on_fault`), stops writing, keeps what
was committed, and still tries to mark the run's final status when it closes.

Non-finite floats are stored as the text 'nan', 'inf', '-inf' (SQLite would turn NaN into NULL,
and NULL means "not observed" here).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from causal.errors import RunFileError
from causal.schema.run import SCHEMA_VERSION, Event, LayerGraph, Run, Window, encode_json
from causal.schema.run_format import DDL, MAGIC, STEP_COLUMNS, decode_window, encode_window
from causal.schema.run_format import store_float as _store
from causal.schema.run_reader import load_run, read_run

__all__ = ["RunWriter", "decode_window", "encode_window", "load_run"]

def _absorbing_faults(method: Callable[..., None]) -> Callable[..., None]:
    """A write that reports a storage fault instead of raising it (and is skipped after one)."""

    @functools.wraps(method)
    def write(self: RunWriter, *args: Any, **kwargs: Any) -> None:
        if self.fault is not None:
            return
        try:
            method(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as e:
            self._failed(e)

    return write


class RunWriter:
    """Appends a run to its SQLite file while training; every write is cheap and buffered.

    Opening raises `RunFileError` (before training starts); after that no write raises: the first
    storage fault is kept in `fault`, passed to `on_fault` (default: a `RuntimeWarning`) and ends
    the writing, except for the final status `close` still tries to write.
    """

    def __init__(self, path: str | os.PathLike[str], meta: Mapping[str, Any],
                 flush_seconds: float = 1.0,
                 on_fault: Callable[[str], None] | None = None) -> None:
        self.path = str(path)
        self.flush_seconds = flush_seconds
        self.fault: str | None = None
        self.on_fault = on_fault
        self._reported = False  # the first fault is reported, never a later one
        p = Path(self.path)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            if p.exists():
                raise RunFileError(
                    f"run file {self.path!r} already exists; pass a new path "
                    "(or delete the old run) so no recorded run is overwritten"
                )
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.executescript(DDL)
            self._db.execute("PRAGMA synchronous=OFF")
            self._write_meta({**meta, "format": meta.get("format", MAGIC),
                              "schema_version": SCHEMA_VERSION})
        except (OSError, sqlite3.Error) as e:
            raise RunFileError(
                f"cannot write the run file {self.path!r}: {e}. Pass NeuralDbg(..., path=...) "
                "pointing to a writable directory"
            ) from e
        self._steps: list[tuple[Any, ...]] = []
        self._settings: list[tuple[int, str, str]] = []
        self._last_flush = time.monotonic()
        self._closed = False

    # -- writes
    @_absorbing_faults
    def set_meta(self, **items: Any) -> None:
        self._write_meta(items)

    def _write_meta(self, items: Mapping[str, Any]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(k, json.dumps(encode_json(v), allow_nan=False)) for k, v in items.items()],
        )
        self._db.commit()

    def set_dag(self, graph: LayerGraph) -> None:
        self.set_meta(dag=graph.to_dict())

    def add_step(self, step: int, values: Mapping[str, float | None]) -> None:
        if self.fault is not None:
            return
        self._steps.append((step, *(_store(values.get(c)) for c in STEP_COLUMNS)))

    def add_setting(self, step: int, key: str, value: str) -> None:
        if self.fault is not None:
            return
        self._settings.append((step, key, value))

    @_absorbing_faults
    def add_events(self, events: Iterable[Event], window: Window | None = None) -> None:
        """Write events (and the recorder window they share) and commit at once."""
        events = list(events)
        if not events:
            return
        self._write_buffers()
        window_id = None
        if window is not None:
            cur = self._db.execute(
                "INSERT INTO windows (end_step, data) VALUES (?, ?)",
                (window.end_step, encode_window(window)),
            )
            window_id = cur.lastrowid
        self._db.executemany(
            "INSERT INTO events (step, layer_name, kind, from_state, to_state, value, metadata,"
            " window_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (e.step, e.layer_name, str(e.kind), str(e.from_state), str(e.to_state),
                 _store(e.value), json.dumps(encode_json(dict(e.metadata)), allow_nan=False),
                 window_id)
                for e in events
            ],
        )
        self.flush()

    @_absorbing_faults
    def add_window(self, window: Window) -> None:
        """Store a window that no event points to (e.g. the last steps before the run ended)."""
        self._db.execute(
            "INSERT INTO windows (end_step, data) VALUES (?, ?)",
            (window.end_step, encode_window(window)),
        )

    def _write_buffers(self) -> None:
        if self._steps:
            cols = ", ".join(f'"{c}"' for c in STEP_COLUMNS)
            marks = ", ".join("?" * (len(STEP_COLUMNS) + 1))
            self._db.executemany(f"INSERT INTO steps (step, {cols}) VALUES ({marks})", self._steps)
            self._steps.clear()
        if self._settings:
            self._db.executemany(
                "INSERT INTO settings (step, key, value) VALUES (?, ?, ?)", self._settings
            )
            self._settings.clear()

    @_absorbing_faults
    def flush(self) -> None:
        self._write_buffers()
        self._db.commit()
        self._last_flush = time.monotonic()

    def maybe_flush(self) -> None:
        if time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def _failed(self, error: BaseException) -> None:
        """Keep the first storage fault, drop what is buffered, report it once."""
        self.fault = f"{type(error).__name__}: {error}"
        self._steps.clear()
        self._settings.clear()
        with contextlib.suppress(sqlite3.Error):
            self._db.rollback()
        message = (f"neuraldbg cannot write the run file {self.path!r} ({self.fault}); it stops "
                   "recording, training goes on, and the file keeps what was written before")
        if self._reported:
            return
        self._reported = True
        if self.on_fault is not None:
            self.on_fault(message)
        else:
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def read(self) -> Run:
        """The run as written so far (flushes first)."""
        self.flush()
        return read_run(self._db, self.path)

    def close(self, **final_meta: Any) -> None:
        """Write what is buffered and the final meta (the status), then close; never raises
        a storage fault. After a fault, the final meta (with `storage_error`) is still tried."""
        if self._closed:
            return
        self._closed = True
        self.flush()
        if self.fault is not None:
            final_meta["storage_error"] = self.fault
            self.fault = None  # one last try: the status is what a reader needs most
        if final_meta:
            self.set_meta(**final_meta)
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
