"""Seeded mutations of a real run file, and what reading each one gives (`benchmarks/reliability.py`
prints the table; `tests/causal/test_run_file_fuzz.py` runs a few hundred in CI).

A mutation is byte-level (truncation, flipped bytes, a damaged header) or structural (through
SQLite: wrong value types, malformed or hostile JSON, dropped tables, foreign schema objects,
window blobs that lie or explode, odd schema versions, huge values). Each mutated file is read
with `load_run`, diagnosed and formatted the way `neuraldbg show` and `diagnose` print it; the
outcome is "usable" (a diagnosis), "clean error" (a `RunFileError`), "traceback" (any other
exception), "hang" (past the time bound) or "memory" (past the memory bound), and whether the
file was modified.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import resource
import shutil
import signal
import sqlite3
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causal.errors import RunFileError

TIME_BOUND_S = 10.0
MEMORY_BOUND_MB = 300.0
_TABLES = ("meta", "steps", "settings", "windows", "events")


@dataclass(frozen=True)
class Outcome:
    """What reading one mutated file gave."""

    mutation: str
    result: str  # usable | clean error | traceback | hang | memory
    touched: bool
    seconds: float
    detail: str = ""


# ------------------------------------------------------------------ mutations

def _random_value(rng: random.Random) -> Any:
    return rng.choice([
        None, 0, -1, 1, 2**63 - 1, -(2**63), 1.5, -1e308, 1e308, "nan", "inf", "", "x" * 5000,
        "\x1b[31mred\n", b"\x00\xff", b"", "[]", "{}", "null", '{"a": ' * 50 + "1" + "}" * 50,
        rng.random(), rng.randint(-10**6, 10**6), "grad", "grad_healthy", "loss",
    ])


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    if depth > 3 or rng.random() < 0.4:
        if rng.random() < 0.2:
            return {"deep": [[[[["x"]]]]]}
        v = _random_value(rng)
        return v.decode("latin-1") if isinstance(v, bytes) else v
    if rng.random() < 0.5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["name", "module", "module_type", "param_count", "nodes", "edges", "method", "order",
            "ran", "weight_gain", "direction", "status", "lr", "x"]
    return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _mutate_json_text(rng: random.Random, text: str) -> str:
    """A JSON document with one node replaced, or made malformed, or nested absurdly deep."""
    roll = rng.random()
    if roll < 0.15:
        return text[: rng.randint(0, len(text))]
    if roll < 0.25:
        return "[" * rng.choice([100, 5000, 200000]) + "]" * rng.choice([0, 100])
    try:
        doc = json.loads(text)
    except ValueError:
        return json.dumps(_random_json(rng))

    def nodes(x: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        yield path
        if isinstance(x, dict):
            for k, v in x.items():
                yield from nodes(v, (*path, k))
        elif isinstance(x, list):
            for i, v in enumerate(x[:20]):
                yield from nodes(v, (*path, i))

    paths = list(nodes(doc))
    target = rng.choice(paths)
    if not target:
        return json.dumps(_random_json(rng))
    parent = doc
    for key in target[:-1]:
        parent = parent[key]
    parent[target[-1]] = _random_json(rng)
    return json.dumps(doc)


def _zeros_after(head: bytes, n_zeros: int) -> bytes:
    """zlib stream of `head` then `n_zeros` zero bytes, compressed without allocating them."""
    z = zlib.compressobj(9)
    out = [z.compress(head)]
    chunk = bytes(1 << 20)
    for _ in range(n_zeros >> 20):
        out.append(z.compress(chunk))
    out.append(z.flush())
    return b"".join(out)


def _sql_mutation(rng: random.Random, db: sqlite3.Connection) -> str:
    kind = rng.choice(["value", "value", "json", "json", "json", "drop", "object", "window",
                       "window", "version", "rows", "column"])
    if kind == "value":
        table = rng.choice(_TABLES)
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        col = rng.choice(cols)
        v = _random_value(rng)
        db.execute(f'UPDATE {table} SET "{col}" = ? WHERE rowid IN (SELECT rowid FROM {table} '
                   "ORDER BY random() LIMIT ?)", (v, rng.choice([1, 3, 1000])))
        return f"value {table}.{col}"
    if kind == "json":
        table, col, key = rng.choice([("meta", "value", "key"), ("events", "metadata", "id")])
        rows = db.execute(f"SELECT {key}, {col} FROM {table}").fetchall()
        if not rows:
            return "json (none)"
        k, text = rng.choice(rows)
        text = text if isinstance(text, str) else "{}"
        db.execute(f"UPDATE {table} SET {col} = ? WHERE {key} = ?",
                   (_mutate_json_text(rng, text), k))
        return f"json {table}.{col}" + (f" [{k}]" if table == "meta" else "")
    if kind == "drop":
        table = rng.choice(_TABLES)
        db.execute(f"DROP TABLE {table}")
        return f"drop {table}"
    if kind == "object":
        sql = rng.choice([
            "CREATE VIEW v AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
            "SELECT x FROM c",
            "CREATE TRIGGER t AFTER UPDATE ON meta BEGIN DELETE FROM steps; END",
            "CREATE TABLE extra (x)", "CREATE INDEX i ON events (step)",
        ])
        db.execute(sql)
        return "object " + sql.split()[1].lower()
    if kind == "window":
        rows = db.execute("SELECT id, data FROM windows").fetchall()
        if not rows:
            return "window (none)"
        wid, blob = rng.choice(rows)
        roll = rng.random()
        if roll < 0.3:
            new = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        elif roll < 0.5:  # a decompression bomb
            header = json.dumps({"end_step": 0, "steps": list(range(2000)),
                                 "layers": ["a"] * 2000, "stats": ["s"] * 8}).encode()
            new = _zeros_after(len(header).to_bytes(4, "little") + header, 8 * 2000 * 2000 * 8)
        else:  # a valid stream whose header lies
            raw = bytearray(zlib.decompress(blob))
            n = int.from_bytes(raw[:4], "little")
            head = _mutate_json_text(rng, raw[4:4 + n].decode())
            raw = (len(head.encode()).to_bytes(4, "little") + head.encode() + raw[4 + n:])
            new = zlib.compress(bytes(raw))
        db.execute("UPDATE windows SET data = ? WHERE id = ?", (new, wid))
        return "window blob"
    if kind == "version":
        v = rng.choice([0, -1, 1.5, 2, 999, True, "1", None, [1]])
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (json.dumps(v),))
        return f"version {v!r}"
    if kind == "rows":
        table = rng.choice(["steps", "events", "settings"])
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")][1:]
        for _ in range(rng.randint(1, 5)):
            with contextlib.suppress(sqlite3.Error):
                db.execute(f"INSERT INTO {table} ({', '.join(map(repr, cols))}) VALUES "
                           f"({', '.join('?' * len(cols))})",
                           [_random_value(rng) for _ in cols])
        return f"rows {table}"
    table = rng.choice(_TABLES)
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    col = rng.choice(cols)
    with contextlib.suppress(sqlite3.Error):
        db.execute(f'ALTER TABLE {table} RENAME COLUMN "{col}" TO "{col}_x"')
    return f"column {table}.{col}"


def _byte_mutation(rng: random.Random, data: bytearray) -> str:
    roll = rng.random()
    if roll < 0.3:
        cut = rng.randint(0, len(data))
        del data[cut:]
        return "truncate"
    if roll < 0.5:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(min(100, len(data)))] = rng.randrange(256)
        return "header bytes"
    for _ in range(rng.randint(1, 32)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return "flip bytes"


def mutate(base: Path, dest: Path, seed: int) -> str:
    """Write a mutation of `base` to `dest`; the mutation's name."""
    rng = random.Random(seed)
    shutil.copyfile(base, dest)
    if rng.random() < 0.35:
        data = bytearray(dest.read_bytes())
        name = _byte_mutation(rng, data)
        dest.write_bytes(bytes(data))
        return name
    db = sqlite3.connect(dest)
    try:
        names = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            try:
                names.append(_sql_mutation(rng, db))
            except (sqlite3.Error, IndexError, ValueError, zlib.error):  # what an earlier one broke
                names.append("(refused by sqlite)")
        db.commit()
    finally:
        db.close()
    return " + ".join(names)


# ------------------------------------------------------------------ reading one

class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_bound(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: Any) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fingerprint(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def read_everything(path: Path) -> None:
    """What the CLI does with a run file: load it, print `show`'s text, diagnose and format."""
    from causal.diagnose import diagnose
    from causal.report import format_run
    from causal.schema.run_file import load_run

    run = load_run(path)
    format_run(run)
    diagnosis = diagnose(run, min_confidence=0.0)
    diagnosis.format()
    json.dumps([h.to_dict() for h in diagnosis])


def try_one(base: Path, folder: Path, seed: int,
            reader: Callable[[Path], None] = read_everything) -> Outcome:
    """Mutate `base` into `folder` with `seed` and read it; the outcome."""
    for p in folder.iterdir():
        p.unlink()
    path = folder / "run.ndbg"
    name = mutate(base, path, seed)
    before = _fingerprint(folder)
    rss = _rss_mb()
    start = time.monotonic()
    result, detail = "usable", ""
    try:
        with _time_bound(TIME_BOUND_S):
            reader(path)
    except RunFileError as e:
        result, detail = "clean error", str(e)[:200]
    except _Timeout:
        result = "hang"
    except Exception:
        result, detail = "traceback", traceback.format_exc(limit=-3)
    seconds = time.monotonic() - start
    if result in ("usable", "clean error") and _rss_mb() - rss > MEMORY_BOUND_MB:
        result = "memory"
    return Outcome(name, result, _fingerprint(folder) != before, seconds, detail)
