"""How reliable the run file and the monitor are, as a hostile or unlucky user finds them.

    .venv/bin/python benchmarks/reliability.py [--mutations 1000] [--kills 10]

Prints four tables: (1) seeded mutations of a real run file (`run_file_mutations.py`) and what
reading each gave: usable, clean `RunFileError`, traceback, hang, memory blow-up, file touched;
(2) training processes killed with SIGKILL at random moments: loadable files and the steps lost;
(3) storage that fails mid-run, and what the user saw; (4) crafted files: a journal whose
super-journal names another file, a recursive VIEW, a decompression bomb.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_file_mutations as mutations

from causal.errors import RunFileError
from causal.schema.run_file import load_run

_TRAIN = textwrap.dedent("""
    import sys, warnings
    import torch
    from torch import nn
    from neuraldbg import NeuralDbg
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps, fault = int(sys.argv[2]), sys.argv[3]
    dbg = NeuralDbg(model, path=sys.argv[1])
    if fault == "fsize":
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (96 * 1024, 96 * 1024))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dbg:
            for step in range(steps):
                if fault == "rmdir" and step == 20:
                    import shutil, os
                    shutil.rmtree(os.path.dirname(sys.argv[1]))
                x = torch.randn(32, 16)
                if step == steps // 2:
                    x[0, 0] = float("inf")
                opt.zero_grad()
                loss = model(x).pow(2).mean()
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
                print("STEP", step, flush=True)
    ours = [w for w in caught if "neuraldbg" in str(w.category) or "run file" in str(w.message)]
    print("AFTER", len(ours), flush=True)
""")


def _base_run(folder: Path) -> Path:
    path = folder / "base.ndbg"
    subprocess.run([sys.executable, "-c", _TRAIN, str(path), "60", "none"], check=True,
                   capture_output=True, text=True, timeout=300)
    return path


def mutation_table(base: Path, n: int) -> None:
    folder = Path(tempfile.mkdtemp())
    counts: collections.Counter[str] = collections.Counter()
    touched, slowest, examples = 0, 0.0, {}
    for seed in range(n):
        o = mutations.try_one(base, folder, seed)
        counts[o.result] += 1
        touched += o.touched
        slowest = max(slowest, o.seconds)
        if o.result not in ("usable", "clean error"):
            examples.setdefault(o.result, f"{o.mutation}: {o.detail.strip()[-300:]}")
    print(f"\n1. Mutated run files ({n} seeded mutations of one real run)")
    print(f"  {'outcome':<28}{'files':>8}")
    for key in ("usable", "clean error", "traceback", "hang", "memory"):
        label = {"usable": "usable (a diagnosis)", "clean error": "clean RunFileError",
                 "traceback": "traceback", "hang": f"hang (> {mutations.TIME_BOUND_S:g} s)",
                 "memory": f"memory blow-up (> {mutations.MEMORY_BOUND_MB:g} MB)"}[key]
        print(f"  {label:<28}{counts[key]:>8}")
    print(f"  {'file modified by reading':<28}{touched:>8}")
    print(f"  slowest read: {slowest:.2f} s")
    for result, text in examples.items():
        print(f"  e.g. {result}: {text}")


def kill_table(kills: int) -> None:
    rng = random.Random(0)
    loadable, lost, rates = 0, [], []
    for _ in range(kills):
        folder = Path(tempfile.mkdtemp())
        path = folder / "run.ndbg"
        proc = subprocess.Popen([sys.executable, "-c", _TRAIN, str(path), "100000", "none"],
                                stdout=subprocess.PIPE, text=True)
        target, last, began = rng.randint(100, 1500), -1, 0.0
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("STEP"):
                last = int(line.split()[1])
                began = began or time.monotonic()
                if last >= target:
                    break
        rates.append(last / max(time.monotonic() - began, 1e-3))
        time.sleep(rng.random() * 0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        try:
            run = load_run(path)
            loadable += 1
            lost.append(max(0, last - (run.series.steps[-1] if run.series.steps else -1)))
        except RunFileError:
            pass
    print(f"\n2. SIGKILL at random moments ({kills} training processes)")
    print(f"  loadable run files: {loadable} of {kills}")
    if lost:
        rate = sorted(rates)[len(rates) // 2]
        print(f"  steps lost (printed by the loop, not in the file): median "
              f"{sorted(lost)[len(lost) // 2]}, max {max(lost)}, at about {rate:.0f} steps/s: "
              f"{sorted(lost)[len(lost) // 2] / rate:.1f} s of training")


def fault_table() -> None:
    print("\n3. Storage that fails mid-run (1,000-step runs)")
    print(f"  {'fault':<30}{'exit':>6}{'after block':>13}{'warnings':>10}{'file':>22}")
    for fault, label in (("rmdir", "run directory deleted"), ("fsize", "file-size limit 96 KB")):
        folder = Path(tempfile.mkdtemp()) / "runs"
        folder.mkdir()
        path = folder / "run.ndbg"
        done = subprocess.run([sys.executable, "-c", _TRAIN, str(path), "1000", fault],
                              capture_output=True, text=True, timeout=300)
        after = [ln for ln in done.stdout.splitlines() if ln.startswith("AFTER")]
        if path.exists():
            try:
                run = load_run(path)
                state = f"{len(run.series)} steps, {run.meta.get('status')}"
            except RunFileError:
                state = "unreadable"
        else:
            state = "gone with the dir"
        print(f"  {label:<30}{done.returncode:>6}{'ran' if after else 'never':>13}"
              f"{after[0].split()[1] if after else '-':>10}{state:>22}")


def hostile_table(base: Path) -> None:
    print("\n4. Crafted files")
    folder = Path(tempfile.mkdtemp())
    # a hot journal whose super-journal field names a file elsewhere
    path = folder / "run.ndbg"
    path.write_bytes(base.read_bytes())
    code = ("import sqlite3, os, sys\ndb = sqlite3.connect(sys.argv[1]); db.execute('BEGIN')\n"
            "db.execute('DELETE FROM steps'); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    victim = folder / "victim.txt"
    victim.write_text("precious")
    name = str(victim).encode()
    with open(str(path) + "-journal", "ab") as f:
        f.write(struct.pack(">I", (1 << 30) // 4096 + 1) + name + struct.pack(">I", len(name))
                + struct.pack(">I", sum(name)) + bytes.fromhex("d9d505f920a163d7"))
    try:
        load_run(path)
        read = "read"
    except RunFileError as e:
        read = f"RunFileError ({e})"[:60]
    print(f"  super-journal attack: {read}; the named file "
          f"{'still exists' if victim.exists() else 'WAS DELETED'}")
    # a recursive VIEW in place of a table
    path = folder / "view.ndbg"
    path.write_bytes(base.read_bytes())
    db = sqlite3.connect(path)
    db.execute("DROP TABLE settings")
    db.execute("CREATE VIEW settings AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 "
               "FROM c) SELECT x AS seq, x AS step, 'k' AS key, 'v' AS value FROM c")
    db.commit()
    db.close()
    start = time.monotonic()
    try:
        load_run(path)
        outcome = "read (!)"
    except RunFileError:
        outcome = "RunFileError"
    print(f"  recursive VIEW: {outcome} in {time.monotonic() - start:.3f} s")
    # a window blob that inflates to 2 GB
    path = folder / "bomb.ndbg"
    path.write_bytes(base.read_bytes())
    header = json.dumps({"end_step": 0, "steps": list(range(8192)), "layers": ["a"] * 4096,
                         "stats": ["s"] * 8}).encode()
    z = zlib.compressobj(9)
    parts = [z.compress(len(header).to_bytes(4, "little") + header)]
    chunk = bytes(1 << 20)
    parts += [z.compress(chunk) for _ in range(2048)]
    parts.append(z.flush())
    db = sqlite3.connect(path)
    db.execute("UPDATE windows SET data = ?", (b"".join(parts),))
    db.commit()
    db.close()
    import tracemalloc
    tracemalloc.start()
    try:
        load_run(path)
        outcome = "read (!)"
    except RunFileError:
        outcome = "RunFileError"
    grew = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"  2 GB decompression bomb in a {path.stat().st_size / 1e6:.1f} MB file: {outcome}, "
          f"peak Python memory {grew:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    base = _base_run(Path(tempfile.mkdtemp()))
    print(f"base run: {base} ({base.stat().st_size / 1e3:.0f} kB, "
          f"{len(load_run(base).series)} steps, {len(load_run(base).events)} events)")
    mutation_table(base, args.mutations)
    kill_table(args.kills)
    fault_table()
    hostile_table(base)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
