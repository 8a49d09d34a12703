"""Run many scenario x seed tasks in worker processes: results in task order whatever the number of
workers, a progress bar, and a task that crashes or hangs reported as an error instead of stalling
the batch.

Each worker is a fresh interpreter (`spawn`) that imports what the task needs once and sets torch's
thread count; a task that runs past `timeout` seconds has its worker killed and replaced, and comes
back as `TaskFailed`. With `workers=None` the tasks run in this process, one after the other (no
timeout: what tests and a custom in-memory registry need).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from neuraldbg.plugins import import_plugins

__all__ = ["DEFAULT_TIMEOUT", "TaskFailed", "default_workers", "progress_bar", "run_scenarios",
           "run_tasks"]

#: Seconds one scenario x seed may run before its worker is killed (the bundled runs take
#: seconds; an external suite may set its own).
DEFAULT_TIMEOUT = 900.0


@dataclass(frozen=True)
class TaskFailed:
    """What a task left instead of a result: its exception, or the timeout it ran past."""

    message: str


def default_workers() -> int:
    """The machine's cores (the CLI's default for --workers)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


def progress_bar(total: int, enabled: bool, what: str = "run") -> Any:
    """tqdm on stderr when it is installed and `enabled`; a one-line counter otherwise."""
    if not enabled:
        return _Silent(total, what)
    try:
        from tqdm import tqdm
    except ImportError:
        return _Counter(total, what)
    return tqdm(total=total, unit=what, file=sys.stderr, dynamic_ncols=True)


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *,
              workers: int | None, timeout: float = DEFAULT_TIMEOUT, threads: int = 1,
              bar: Any = None, describe: Callable[[tuple[Any, ...]], str] | None = None,
              setup: Callable[..., None] | None = None, setup_args: tuple[Any, ...] = ()
              ) -> list[Any]:
    """`fn(*task)` for every task, in task order; a failed task's entry is a `TaskFailed`.
    `fn` and `setup` must be importable module-level functions (they run in the workers);
    `setup(*setup_args)` runs once per worker before its first task (plugins, registries)."""
    results: list[Any] = [None] * len(tasks)
    if workers is None:
        if setup is not None:
            setup(*setup_args)
        for i, task in enumerate(tasks):
            if bar is not None and describe is not None:
                bar.set_description(describe(task))
            try:
                results[i] = fn(*task)
            except Exception as exc:  # a crash is reported; the batch goes on
                results[i] = TaskFailed(f"{type(exc).__name__}: {exc}")
            if bar is not None:
                bar.update(1)
        return results
    for i, result in _pool(fn, tasks, max(1, workers), timeout, threads, setup, setup_args):
        results[i] = result
        if bar is not None:
            if describe is not None:
                bar.set_description(describe(tasks[i]))
            bar.update(1)
    return results


def run_scenarios(task_fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *,
                  workers: int | None, timeout: float = DEFAULT_TIMEOUT, threads: int = 1,
                  plugins: Sequence[str] = (), progress: bool = False) -> list[Any]:
    """`run_tasks` for scenario x seed tasks (a scenario file's path first, the seed second),
    with a progress bar naming the run; each worker imports `plugins` first. `task_fn` runs in
    the workers, so it must be importable (a partial of one is fine in this process)."""
    bar = progress_bar(len(tasks), progress)
    try:
        return run_tasks(task_fn, tasks, workers=workers, timeout=timeout, threads=threads,
                         bar=bar, describe=lambda t: f"{Path(t[0]).stem} seed {t[1]}",
                         setup=import_plugins, setup_args=(tuple(plugins),))
    finally:
        bar.close()


# ---------------------------------------------------------------- the pool


def _worker(conn: Connection, threads: int, setup: Callable[..., None] | None,
            setup_args: tuple[Any, ...]) -> None:
    """A worker's loop: receive (index, fn, task), send back (index, ok, result)."""
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass
    try:
        if setup is not None:
            setup(*setup_args)
    except Exception as exc:
        conn.send((_SETUP_FAILED, False, f"worker set-up failed: {type(exc).__name__}: {exc}"))
        return
    conn.send((_READY, True, None))  # a task's clock starts once its worker is ready
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        index, fn, task = msg
        try:
            conn.send((index, True, fn(*task)))
        except Exception as exc:
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            conn.send((index, False, detail))


_READY, _SETUP_FAILED = -2, -1


@dataclass
class _Slot:
    process: Any
    conn: Connection
    index: int | None = None
    started: float = 0.0
    ready: bool = False


def _pool(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], workers: int,
          timeout: float, threads: int, setup: Callable[..., None] | None,
          setup_args: tuple[Any, ...]) -> Iterator[tuple[int, Any]]:
    ctx = mp.get_context("spawn")
    pending = list(range(len(tasks)))[::-1]  # popped from the end: task order
    slots: list[_Slot] = []

    def start() -> _Slot:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, threads, setup, setup_args),
                           daemon=True)
        proc.start()
        child.close()
        return _Slot(proc, parent)

    def give(slot: _Slot) -> None:
        if not slot.ready:
            slot.index = None
            return
        if pending:
            slot.index = pending.pop()
            slot.started = time.monotonic()
            slot.conn.send((slot.index, fn, tasks[slot.index]))
        else:
            slot.index = None

    def retire(slot: _Slot) -> None:
        slot.process.kill()
        slot.process.join()
        slot.conn.close()

    try:
        for _ in range(min(workers, len(tasks))):
            slots.append(start())
        done = 0
        while done < len(tasks):
            live = [s for s in slots if s.index is not None or not s.ready]
            ready = wait([s.conn for s in live], timeout=1.0)
            now = time.monotonic()
            for slot in live:
                if slot.conn in ready:
                    died = False
                    try:
                        index, ok, value = slot.conn.recv()
                    except (EOFError, OSError):  # the worker died (killed, out of memory)
                        index, ok, value, died = slot.index, False, "its worker process died", True
                        if index is None:  # it died before it was ready
                            raise RuntimeError("a worker process died while starting") from None
                    if index == _SETUP_FAILED:  # every task would fail the same way
                        raise RuntimeError(value)
                    if index == _READY:
                        slot.ready = True
                        give(slot)
                        continue
                    assert slot.index is not None
                    done += 1
                    yield slot.index, value if ok else TaskFailed(str(value))
                    if died:
                        retire(slot)
                        slots[slots.index(slot)] = slot = start()
                    give(slot)
                elif slot.index is not None and now - slot.started > timeout:
                    done += 1
                    yield slot.index, TaskFailed(f"timed out after {timeout:g} s")
                    retire(slot)
                    slots[slots.index(slot)] = fresh = start()
                    give(fresh)
    finally:
        for slot in slots:
            if slot.process.is_alive():
                with contextlib.suppress(OSError):
                    slot.conn.send(None)
                slot.process.join(timeout=2)
                if slot.process.is_alive():
                    slot.process.kill()
                    slot.process.join()


# ---------------------------------------------------------------- progress fallbacks


class _Counter:
    """The progress fallback when tqdm is not installed: one rewritten stderr line."""

    def __init__(self, total: int, what: str = "run") -> None:
        self.total, self.n, self.text, self.what = total, 0, "", what

    def set_description(self, text: str) -> None:
        self.text = text
        print(f"\r{self.what} {self.n}/{self.total} {text:<40}", end="", file=sys.stderr,
              flush=True)

    def update(self, n: int = 1) -> None:
        self.n += n
        self.set_description(self.text)

    def close(self) -> None:
        print(file=sys.stderr, flush=True)


class _Silent(_Counter):
    def set_description(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass
