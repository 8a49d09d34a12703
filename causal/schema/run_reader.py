"""Reading a run file, which may come from a stranger: never modify it, never trust it.

- The file is opened read-only (SQLite URI `mode=ro`). When a rollback journal lies beside it (a
  writer killed mid-commit, or a crafted one), the file and the journal are copied into a private
  directory and read there, the journal's super-journal field stripped first: nothing outside
  that directory can be changed or deleted.
- The schema must be the writer's: its tables and columns only; views, triggers and any other
  object are refused (a recursive VIEW would hang every query).
- The work a file can cause is bounded: a statement running past `READ_SECONDS` is aborted (Ctrl-C
  works too), window blobs are capped once decompressed (`window_budget`), and JSON nested too
  deeply is an error.
- Every failure is a `RunFileError` naming the part of the file that is bad; every string read
  is made printable (`safe_text`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from causal.errors import RunFileError
from causal.schema.layer_graph import LayerGraph
from causal.schema.run import Event, EventKind, Run, Series, SettingChange, State, Window
from causal.schema.run_format import (
    MAGIC,
    READABLE_VERSIONS,
    STEP_COLUMNS,
    TABLES,
    decode_window,
    load_float,
)
from causal.schema.safe_text import printable, printable_strings

#: A statement that runs longer than this is aborted (no real run file needs a tenth of it).
READ_SECONDS = 20.0
_SQLITE_HEADER = b"SQLite format 3\x00"
_JOURNAL_MAGIC = bytes([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7])
#: What a file's parts may fail with once it is open; each becomes a `RunFileError`.
_BAD_CONTENT = (sqlite3.Error, ValueError, TypeError, KeyError, AttributeError, IndexError,
                RecursionError, OverflowError, zlib.error, MemoryError)


def window_budget(file_size: int) -> int:
    """The most bytes all of a file's windows may take decompressed: far above what real runs
    store (float values compress a few times, not thousands), far below what a blob of zeros
    could expand to."""
    return (16 << 20) + 8 * file_size


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read a run file (also one whose writer was killed mid-run). Needs no torch, never
    changes the file or anything beside it."""
    p = _checked_path(path)
    with _opened(p) as db:
        return read_run(db, str(p), window_budget(p.stat().st_size))


def _checked_path(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise RunFileError(f"load_run() needs the path of a run file (str or os.PathLike), got "
                           f"{type(path).__name__}: pass e.g. dbg.run.path or 'run.ndbg'")
    p = Path(path)
    if not p.is_file():
        raise RunFileError(f"no run file at {str(path)!r}: check the path (dbg.run.path says "
                           "where a monitor wrote its run)")
    with open(p, "rb") as f:
        head = f.read(100)
    if head.lstrip()[:1] == b"{":
        raise RunFileError(f"{str(path)!r} is a JSON export of a run (Run.to_json), not a run "
                           "file: read it with neuraldbg.Run.from_json(Path(path).read_text())")
    if not head.startswith(_SQLITE_HEADER) or len(head) < 100:
        raise RunFileError(f"{str(path)!r} is not a neuraldbg run file (not an SQLite "
                           "database): pass the .ndbg file a monitor wrote")
    if head[18:20] != b"\x01\x01":
        raise RunFileError(f"{str(path)!r} is an SQLite database in a journal mode neuraldbg "
                           "never writes (WAL): not a neuraldbg run file")
    return p


@contextlib.contextmanager
def _opened(p: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the run file, or to a private copy when a journal is beside it."""
    journal = p.with_name(p.name + "-journal")
    with contextlib.ExitStack() as stack:
        try:
            if os.path.lexists(journal):
                private = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                copy = private / "run.ndbg"
                shutil.copyfile(p, copy)
                if journal.is_file() and not journal.is_symlink():
                    _copy_journal(journal, private / "run.ndbg-journal")
                # read-write on the copy only: SQLite rolls the journal back inside `private`
                db = sqlite3.connect(str(copy))
            else:
                uri = f"file:{urllib.parse.quote(str(p.resolve()))}?mode=ro"
                db = sqlite3.connect(uri, uri=True)
        except (OSError, sqlite3.Error) as e:
            raise RunFileError(f"cannot open the run file {str(p)!r}: {e}") from e
        stack.callback(db.close)
        deadline = time.monotonic() + READ_SECONDS
        db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
        yield db


def _copy_journal(journal: Path, dest: Path) -> None:
    """Copy a rollback journal without its super-journal record (whose rollback would delete the
    file it names)."""
    data = journal.read_bytes()
    if data[-8:] == _JOURNAL_MAGIC and len(data) >= 20:
        name_len = int.from_bytes(data[-16:-12], "big")
        start = len(data) - 16 - name_len - 4
        data = data[:max(start, 0)]
    dest.write_bytes(data)


@contextlib.contextmanager
def _part(path: str | None, what: str) -> Iterator[None]:
    """Turn any failure while reading `what` into a `RunFileError` that names it."""
    try:
        yield
    except RunFileError:
        raise
    except sqlite3.OperationalError as e:
        if "interrupted" in str(e):
            raise RunFileError(f"{path!r}: reading its {what} took over {READ_SECONDS:g} s and "
                               "was stopped: the file is damaged or crafted") from e
        raise RunFileError(f"{path!r}: its {what} cannot be read ({e}): the file is damaged "
                           "or was not written by neuraldbg") from e
    except _BAD_CONTENT as e:
        raise RunFileError(f"{path!r}: its {what} cannot be read ({type(e).__name__}: {e}): "
                           "the file is damaged or was not written by neuraldbg") from e


def read_run(db: sqlite3.Connection, path: str | None, window_bytes: int = 1 << 30) -> Run:
    """The run in an open run-file database (checked against the writer's schema first)."""
    with _part(path, "schema"):
        step_columns = _check_schema(db, path)
    with _part(path, "meta table"):
        meta = _read_meta(db, path)
    with _part(path, "layer graph"):
        dag = LayerGraph.from_dict(_mapping(meta.pop("dag", None) or {}, "the layer graph"))
    with _part(path, "steps table"):
        series = _read_series(db, step_columns)
    with _part(path, "settings table"):
        settings = tuple(
            SettingChange(_int(s), printable(_text(k)), printable(_text(v)))
            for s, k, v in db.execute("SELECT step, key, value FROM settings ORDER BY seq"))
    with _part(path, "windows table"):
        windows = _read_windows(db, window_bytes)
    with _part(path, "events table"):
        events = tuple(_event(r) for r in db.execute(
            "SELECT step, layer_name, kind, from_state, to_state, value, metadata FROM events "
            "ORDER BY id"))
    return Run(meta=meta, dag=dag, events=events, series=series, settings=settings,
               windows=windows, path=path)


def _check_schema(db: sqlite3.Connection, path: str | None) -> list[str]:
    """Refuse any object the writer does not create; the step columns present (older files may
    lack later ones)."""
    seen: set[str] = set()
    for kind, name, table in db.execute("SELECT type, name, tbl_name FROM sqlite_master"):
        if kind == "table" and name in TABLES:
            seen.add(name)
        elif not (kind == "index" and str(name).startswith("sqlite_autoindex_")
                  and table in TABLES):
            raise RunFileError(f"{path!r} holds a {printable(str(kind))} "
                               f"{printable(str(name))!r} that no neuraldbg run file has: refused "
                               "(the file was not written by neuraldbg, or was altered)")
    missing = [t for t in TABLES if t not in seen]
    if missing:
        raise RunFileError(f"{path!r} is an SQLite file but not a neuraldbg run file (it lacks "
                           f"the table(s) {', '.join(missing)} every run file has)")
    step_columns: list[str] = []
    for table, expected in TABLES.items():
        columns = [str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")]
        fixed = expected if table != "steps" else ("seq", "step")
        unknown = [c for c in columns if c not in expected]
        if columns[:len(fixed)] != list(fixed) or unknown:
            raise RunFileError(f"{path!r}: the {table} table's columns are not a run file's "
                               f"({', '.join(printable(c) for c in columns)})")
        if table == "steps":
            step_columns = [c for c in STEP_COLUMNS if c in columns]
    return step_columns


#: The meta values readers use, and the JSON types they must have (None allowed for each).
_META_TYPES: dict[str, type | tuple[type, ...]] = {
    "model_class": str, "status": str, "param_dtype": str, "internal_error": str,
    "storage_error": str, "n_units": int, "warnings": list, "thresholds": dict,
    "sharded_params": int, "targets": str,
}


def _check_meta_types(meta: dict[str, Any]) -> None:
    for key, kind in _META_TYPES.items():
        value = meta.get(key)
        if value is None:
            continue
        bad = not isinstance(value, kind) or isinstance(value, bool)
        if key == "warnings" and not bad:
            bad = not all(isinstance(w, str) for w in value)
        if key == "thresholds" and not bad:
            bad = not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                          for v in value.values())
        if bad:
            raise ValueError(f"its {key!r} is a {type(value).__name__}, not what the writer "
                             "stores")


def _read_meta(db: sqlite3.Connection, path: str | None) -> dict[str, Any]:
    meta = {printable(_text(k)): printable_strings(json.loads(_text(v)))
            for k, v in db.execute("SELECT key, value FROM meta")}
    if meta.get("format") != MAGIC:
        raise RunFileError(f"{path!r} is an SQLite file but not a neuraldbg run file")
    version = meta.get("schema_version")
    readable = ", ".join(f"v{v}" for v in READABLE_VERSIONS)
    if isinstance(version, int) and not isinstance(version, bool) \
            and version > max(READABLE_VERSIONS):
        raise RunFileError(f"{path!r} was written with run schema v{version}, this neuraldbg "
                           f"reads {readable}: upgrade neuraldbg to read it")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise RunFileError(f"{path!r} claims run schema version {version!r}, which no neuraldbg "
                           f"wrote (this release reads {readable}): the file is damaged")
    _check_meta_types(meta)
    return meta


def _read_series(db: sqlite3.Connection, columns: list[str]) -> Series:
    cols = "".join(f', "{c}"' for c in columns)
    rows = db.execute(f"SELECT step{cols} FROM steps ORDER BY seq").fetchall()
    present = {c: tuple(load_float(r[i + 1]) for r in rows) for i, c in enumerate(columns)}
    absent: tuple[float | None, ...] = (None,) * len(rows)
    return Series(steps=tuple(_int(r[0]) for r in rows),
                  columns={c: present.get(c, absent) for c in STEP_COLUMNS})


def _read_windows(db: sqlite3.Connection, budget: int) -> tuple[Window, ...]:
    windows = []
    for (blob,) in db.execute("SELECT data FROM windows ORDER BY id"):
        w = decode_window(blob, max_bytes=max(budget, 0))
        budget -= 8 * len(w.steps) * len(w.layers) * len(w.stats)
        windows.append(Window(end_step=w.end_step, steps=w.steps,
                              layers=tuple(printable(x) for x in w.layers),
                              stats=tuple(printable(x) for x in w.stats), values=w.values))
    return tuple(windows)


def _event(r: tuple[Any, ...]) -> Event:
    metadata = printable_strings(json.loads(_text(r[6])))
    value = load_float(r[5])
    return Event(step=_int(r[0]), layer_name=printable(_text(r[1])), kind=EventKind(_text(r[2])),
                 from_state=State(_text(r[3])), to_state=State(_text(r[4])),
                 value=math.nan if value is None else value,
                 metadata=_mapping(metadata, "an event's metadata"))


def _int(x: Any) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"a step must be an integer, got {printable(repr(x))[:40]}")
    return x


def _text(x: Any) -> str:
    if not isinstance(x, str):
        raise ValueError(f"a text value is stored as {type(x).__name__}")
    return x


def _mapping(x: Any, what: str) -> dict[str, Any]:
    if not isinstance(x, dict):
        raise ValueError(f"{what} must be a JSON object, got {type(x).__name__}")
    return x
