"""What a run file holds, shared by its writer (`run_file`) and its reader (`run_reader`): the
tables and their columns, the format marker, the schema versions this release reads, and the
flight-recorder window codec (decoding bounded, so a crafted blob cannot exhaust memory)."""

from __future__ import annotations

import json
import zlib
from typing import Any

import numpy as np

from causal.schema.run import SCHEMA_VERSION, StepStat, Window, encode_float

STEP_COLUMNS = [s.value for s in StepStat]
MAGIC = "neuraldbg-run"
#: The run schema versions this release reads.
READABLE_VERSIONS = (SCHEMA_VERSION,)

DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL,
    {", ".join(f'"{c}"' for c in STEP_COLUMNS)});
CREATE TABLE IF NOT EXISTS settings (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL,
    key TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS windows (id INTEGER PRIMARY KEY, end_step INTEGER NOT NULL,
    data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, step INTEGER NOT NULL,
    layer_name TEXT NOT NULL, kind TEXT NOT NULL, from_state TEXT NOT NULL,
    to_state TEXT NOT NULL, value, metadata TEXT NOT NULL, window_id INTEGER);
"""

#: Every table the writer creates, with its columns in order (what a reader accepts).
TABLES: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "steps": ("seq", "step", *STEP_COLUMNS),
    "settings": ("seq", "step", "key", "value"),
    "windows": ("id", "end_step", "data"),
    "events": ("id", "step", "layer_name", "kind", "from_state", "to_state", "value",
               "metadata", "window_id"),
}

#: SQLite turns NaN into NULL (which means "not observed" here): store non-finite as text.
store_float = encode_float


def load_float(x: Any) -> float | None:
    """A stored float back (None stays None: not observed)."""
    if x is None:
        return None
    if isinstance(x, (bytes, bytearray, memoryview)):
        raise ValueError(f"a binary value where a number belongs ({bytes(x[:16])!r}...)")
    return float(x)


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


def decode_window(blob: bytes, max_bytes: int = 1 << 30) -> Window:
    """Unpack `encode_window`'s bytes; ValueError when the blob is not one, or would take more
    than `max_bytes` once decompressed (checked before anything that size is allocated)."""
    if not isinstance(blob, bytes):
        raise ValueError(f"a window is stored as bytes, got {type(blob).__name__}")
    inflate = zlib.decompressobj()
    out, pending = bytearray(), blob
    while pending and len(out) <= max_bytes:  # in 1 MB pieces: no buffer twice the size
        out += inflate.decompress(pending, 1 << 20)
        pending = inflate.unconsumed_tail
    if len(out) > max_bytes or pending:
        raise ValueError(f"a window would take more than {max_bytes:,} bytes decompressed")
    raw = bytes(out)
    n = int.from_bytes(raw[:4], "little")
    head = json.loads(raw[4 : 4 + n])
    steps = tuple(int(s) for s in head["steps"])
    layers = tuple(str(x) for x in head["layers"])
    stats = tuple(str(x) for x in head["stats"])
    shape = (len(steps), len(layers), len(stats))
    size = shape[0] * shape[1] * shape[2]
    if len(raw) != 4 + n + 8 * size + (size + 7) // 8:
        raise ValueError(f"a window's values do not match its header's shape {shape}")
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
    return Window(end_step=int(head["end_step"]), steps=steps, layers=layers, stats=stats,
                  values=values)
