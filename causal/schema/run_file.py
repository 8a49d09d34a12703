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
import math
import os
import sqlite3
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from causal.errors import RunFileError
from causal.schema.run import (
    SCHEMA_VERSION,
    Event,
    LayerGraph,
    Run,
    Series,
    SettingChange,
    StepStat,
    Window,
    encode_float,
    encode_json,
)

_STEP_COLUMNS = [s.value for s in StepStat]
_MAGIC = "neuraldbg-run"

_DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL,
    {", ".join(f'"{c}"' for c in _STEP_COLUMNS)});
CREATE TABLE IF NOT EXISTS settings (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL,
    key TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS windows (id INTEGER PRIMARY KEY, end_step INTEGER NOT NULL,
    data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, step INTEGER NOT NULL,
    layer_name TEXT NOT NULL, kind TEXT NOT NULL, from_state TEXT NOT NULL,
    to_state TEXT NOT NULL, value, metadata TEXT NOT NULL, window_id INTEGER);
"""


#: SQLite turns NaN into NULL (which means "not observed" here): store non-finite as text.
_store = encode_float


def _load(x: Any) -> float | None:
    return None if x is None else float(x)


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


def encode_window(w: Window) -> bytes:
    """Pack a window as zlib-compressed float64 values plus an 'observed' bitmask."""
    shape = (len(w.steps), len(w.layers), len(w.stats))
    vals = np.full(shape, np.nan, dtype=np.float64)
    mask = np.zeros(shape, dtype=bool)
    for i, rows in enumerate(w.values):
        for j, row in enumerate(rows):
            for k, v in enumerate(row):
                if v is not None:
                    vals[i, j, k] = v
                    mask[i, j, k] = True
    header = json.dumps(
        {"end_step": w.end_step, "steps": list(w.steps), "layers": list(w.layers),
         "stats": list(w.stats)}
    ).encode()
    body = vals.tobytes() + np.packbits(mask.reshape(-1)).tobytes()
    return zlib.compress(len(header).to_bytes(4, "little") + header + body, 6)


def decode_window(blob: bytes) -> Window:
    raw = zlib.decompress(blob)
    n = int.from_bytes(raw[:4], "little")
    head = json.loads(raw[4 : 4 + n])
    shape = (len(head["steps"]), len(head["layers"]), len(head["stats"]))
    size = int(np.prod(shape))
    vals = np.frombuffer(raw, dtype=np.float64, count=size, offset=4 + n).reshape(shape)
    bits = np.frombuffer(raw, dtype=np.uint8, offset=4 + n + 8 * size)
    mask = np.unpackbits(bits)[:size].astype(bool).reshape(shape)
    values = tuple(
        tuple(
            tuple(float(vals[i, j, k]) if mask[i, j, k] else None for k in range(shape[2]))
            for j in range(shape[1])
        )
        for i in range(shape[0])
    )
    return Window(
        end_step=int(head["end_step"]),
        steps=tuple(int(s) for s in head["steps"]),
        layers=tuple(head["layers"]),
        stats=tuple(head["stats"]),
        values=values,
    )


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
        p = Path(self.path)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            if p.exists():
                raise RunFileError(
                    f"run file {self.path!r} already exists; pass a new path "
                    "(or delete the old run) so no recorded run is overwritten"
                )
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.executescript(_DDL)
            self._db.execute("PRAGMA synchronous=OFF")
            self._write_meta({**meta, "format": meta.get("format", _MAGIC),
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
        self._steps.append((step, *(_store(values.get(c)) for c in _STEP_COLUMNS)))

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
            cols = ", ".join(f'"{c}"' for c in _STEP_COLUMNS)
            marks = ", ".join("?" * (len(_STEP_COLUMNS) + 1))
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
        if self.on_fault is not None:
            self.on_fault(message)
        else:
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def read(self) -> Run:
        """The run as written so far (flushes first)."""
        self.flush()
        try:
            return _read(self._db, self.path)
        except (sqlite3.Error, ValueError, KeyError, TypeError, zlib.error) as e:
            raise RunFileError(f"cannot read the run being written to {self.path!r}: {e}") from e

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
            self.on_fault = self._quiet
        if final_meta:
            self.set_meta(**final_meta)
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    @staticmethod
    def _quiet(message: str) -> None:
        """The fault was reported already."""


def _read(db: sqlite3.Connection, path: str | None) -> Run:
    meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}
    if meta.get("format") != _MAGIC:
        raise RunFileError(f"{path!r} is an SQLite file but not a neuraldbg run file")
    version = int(meta.get("schema_version", 0))
    if version > SCHEMA_VERSION:
        raise RunFileError(
            f"{path!r} was written with run schema v{version}, this neuraldbg reads up to "
            f"v{SCHEMA_VERSION}: upgrade neuraldbg to read it"
        )
    dag = LayerGraph.from_dict(meta.pop("dag", None) or {})
    cols = ", ".join(f'"{c}"' for c in _STEP_COLUMNS)
    rows = db.execute(f"SELECT step, {cols} FROM steps ORDER BY seq").fetchall()
    series = Series(
        steps=tuple(int(r[0]) for r in rows),
        columns={c: tuple(_load(r[i + 1]) for r in rows) for i, c in enumerate(_STEP_COLUMNS)},
    )
    settings = tuple(
        SettingChange(int(s), str(k), str(v))
        for s, k, v in db.execute("SELECT step, key, value FROM settings ORDER BY seq")
    )
    windows = tuple(
        decode_window(blob) for (blob,) in db.execute("SELECT data FROM windows ORDER BY id")
    )
    events = tuple(
        Event(
            step=int(r[0]), layer_name=r[1], kind=r[2], from_state=r[3], to_state=r[4],
            value=math.nan if r[5] is None else float(r[5]), metadata=json.loads(r[6]),
        )
        for r in db.execute(
            "SELECT step, layer_name, kind, from_state, to_state, value, metadata FROM events "
            "ORDER BY id"
        )
    )
    return Run(meta=meta, dag=dag, events=events, series=series, settings=settings,
               windows=windows, path=path)


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read a run file (also one whose writer was killed mid-run). Needs no torch."""
    p = Path(path)
    if not p.is_file():
        raise RunFileError(f"no run file at {str(path)!r}: check the path (dbg.run.path says "
                           "where a monitor wrote its run)")
    try:
        db = sqlite3.connect(str(p))
        try:
            return _read(db, str(p))
        finally:
            db.close()
    except (sqlite3.DatabaseError, ValueError, KeyError, zlib.error) as e:
        raise RunFileError(f"{str(path)!r} is not a readable neuraldbg run file: {e}") from e
