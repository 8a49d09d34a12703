"""The run file: RunWriter/load_run round trips, error cases, torch-free reading, live vs loaded."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from causal.errors import NeuralDbgError, RunFileError
from causal.schema.run import (
    SCHEMA_VERSION,
    Event,
    LayerGraph,
    LayerNode,
    Run,
    SettingChange,
    StepStat,
    Window,
)
from causal.schema.run_file import RunWriter, decode_window, encode_window, load_run
from neuraldbg import NeuralDbg
from neuraldbg.cli import main as cli_main

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[2]
NAN, INF = math.nan, math.inf
BAD_STEP = 12  # the monitored fixture run gets an inf input batch at this step


def _isnan(x: object) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _no_nan_json(text: str) -> object:
    """json.loads that fails on NaN / Infinity / -Infinity literals (strict JSON only)."""

    def refuse(const: str) -> object:
        raise ValueError(f"non-strict JSON constant {const!r} in output")

    return json.loads(text, parse_constant=refuse)


def _small_model(seed: int = 0) -> tuple[nn.Module, torch.optim.Optimizer,
                                         list[tuple[torch.Tensor, torch.Tensor]]]:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = []
    for _ in range(4):
        x = torch.randn(16, 8, generator=g)
        batches.append((x, x[:, :1] * 0.5))
    return model, opt, batches


def _hooked(model: nn.Module) -> list[str]:
    """Names of the modules that still carry forward hooks."""
    return [name for name, m in model.named_modules()
            if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks]


def _train_step(dbg: NeuralDbg, model: nn.Module, opt: torch.optim.Optimizer,
                x: torch.Tensor, y: torch.Tensor) -> float:
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    dbg.record_loss(loss)
    opt.step()
    return float(loss.item())


@pytest.fixture(scope="module")
def monitored_run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run file: 30 monitored steps, the input turns inf at BAD_STEP."""
    path = tmp_path_factory.mktemp("monitored") / "real.ndbg"
    model, opt, batches = _small_model()
    with NeuralDbg(model, path=path) as dbg:
        for step in range(30):
            x, y = batches[step % len(batches)]
            if step == BAD_STEP:
                x = x * INF
            dbg.step = step
            _train_step(dbg, model, opt, x, y)
    return path


# ------------------------------------------------------------------------ hand-written round trip

DAG = LayerGraph(
    method="fx",
    nodes=(
        LayerNode("fc1", "fc1", "Linear", 144, depth=1, order=0, ran=True,
                  activation_kind="other"),
        LayerNode("act", "act", "Tanh", 0, depth=1, order=1, ran=True,
                  activation_kind="saturating"),
        LayerNode("fc2", "fc2", "Linear", 17, depth=1, order=-1, ran=False),
    ),
    edges=(("fc1", "act"), ("act", "fc2")),
    notes=("hand-made",),
)

# observed values (finite, NaN, inf) and unobserved ones (None) side by side
WIN_A = Window(
    end_step=1,
    steps=(0, 1),
    layers=("fc1", "act"),
    stats=("grad_norm", "act_mean", "act_nonfinite"),
    values=(
        ((0.5, None, 0.0), (None, -0.25, 0.0)),
        ((NAN, INF, -INF), (1024.0, None, 3.0)),
    ),
)
WIN_B = Window(end_step=2, steps=(2,), layers=("fc1",), stats=("grad_norm",),
               values=(((None,),),))

EVENTS = (
    Event(1, "<loss>", "loss_finite", "loss_finite", "loss_nan", NAN,
          {"rule": "finite", "threshold": 8.5, "exact": True, "nested": {"k": [1, 2.5, None]}}),
    Event(1, "fc1", "grad", "grad_healthy", "grad_exploding", 1e9, {}),
    Event(1, "act", "activation", "activation_healthy", "activation_saturated", -INF,
          {"module_type": "Tanh"}),
)

META = {"model_class": "Toy", "n_params": 161, "status": "running", "flag": True,
        "thresholds": {"vanishing": 1e-6, "exploding": 1e3}, "tags": ["a", "b"], "none": None}


def _write_hand_run(path: Path) -> RunWriter:
    w = RunWriter(path, META)
    w.set_dag(DAG)
    w.add_step(0, {"loss": 1.5, "grad_norm": 0.25, "input_max_abs": 3.0})
    w.add_step(1, {"loss": NAN, "grad_norm": INF, "input_max_abs": -INF, "input_nonfinite": 4.0})
    w.add_step(2, {"loss": None, "grad_norm": 1e300})
    w.add_setting(0, "lr/0", "0.1")
    w.add_setting(1, "lr/0", "0.01")
    w.add_setting(1, "amp_dtype", "none")
    w.add_events(EVENTS, window=WIN_A)
    w.add_window(WIN_B)
    return w


def _check_hand_run(run: Run, path: Path) -> None:
    for k, v in META.items():
        if k != "status":
            assert run.meta[k] == v, k
    assert run.meta["format"] == "neuraldbg-run"
    assert run.meta["schema_version"] == SCHEMA_VERSION
    assert run.dag == DAG
    assert run.path == str(path)

    s = run.series
    assert s.steps == (0, 1, 2)
    assert set(s.columns) == {c.value for c in StepStat}
    loss, gn = s.columns["loss"], s.columns["grad_norm"]
    assert loss[0] == 1.5 and _isnan(loss[1]) and loss[2] is None
    assert gn == (0.25, INF, 1e300)
    assert s.columns["input_max_abs"] == (3.0, -INF, None)
    assert s.columns["input_nonfinite"] == (None, 4.0, None)
    assert all(v is None for v in s.columns["target_mean"])  # never observed: None, not NaN
    got = s.get("loss")
    assert [st for st, _ in got] == [0, 1] and _isnan(got[1][1])  # NaN is a known value

    assert run.settings == (SettingChange(0, "lr/0", "0.1"), SettingChange(1, "lr/0", "0.01"),
                            SettingChange(1, "amp_dtype", "none"))
    assert run.setting("lr/0", step=0) == "0.1"
    assert run.setting("lr/0") == "0.01"

    assert run.events == EVENTS
    assert _isnan(run.events[0].value) and run.events[2].value == -INF
    assert run.events[0].metadata == EVENTS[0].metadata
    assert run.windows == (WIN_A, WIN_B)
    assert run.window_at(0) == WIN_A and run.window_at(2) == WIN_B


def test_runwriter_load_run_round_trip_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "hand.ndbg"
    w = _write_hand_run(path)
    live = w.read()  # flushes the buffered steps and settings
    _check_hand_run(live, path)
    assert live.meta["status"] == "running"
    w.close(status="finished", last_step=2)
    run = load_run(path)
    _check_hand_run(run, path)
    assert run.meta["status"] == "finished" and run.meta["last_step"] == 2
    assert run.first_nonfinite is None  # no nonfinite_origin event among EVENTS
    assert [e.layer_name for e in run.events_of(["grad", "activation"])] == ["fc1", "act"]


def test_buffered_steps_are_committed_on_close(tmp_path: Path) -> None:
    path = tmp_path / "buffered.ndbg"
    w = RunWriter(path, {}, flush_seconds=3600)
    for step in range(5):
        w.add_step(step, {"loss": float(step)})
    w.close(status="finished")
    run = load_run(path)
    assert run.series.steps == tuple(range(5))
    assert run.series.columns["loss"] == (0.0, 1.0, 2.0, 3.0, 4.0)


def test_run_to_json_is_strict_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "json.ndbg"
    _write_hand_run(path).close(status="finished")
    run = load_run(path)
    text = run.to_json()
    for bad in ("NaN", "Infinity"):
        assert bad not in text
    doc = _no_nan_json(text)
    assert isinstance(doc, dict) and doc["schema_version"] == SCHEMA_VERSION
    assert doc["series"]["columns"]["loss"] == [1.5, "nan", None]
    back = Run.from_json(text)
    assert back == run
    assert _isnan(back.series.columns["loss"][1]) and back.series.columns["loss"][2] is None
    assert back.windows[0].values[1][0][1] == INF
    assert Run.from_json(run.to_json(indent=2)) == run

    # an in-memory run with non-finite floats everywhere still gives strict JSON
    mem = Run(meta={"x": NAN, "y": [INF, 1.0]}, dag=DAG, events=EVENTS, windows=(WIN_A,))
    doc = _no_nan_json(mem.to_json())
    assert isinstance(doc, dict) and doc["meta"] == {"x": "nan", "y": ["inf", 1.0]}


@pytest.mark.parametrize("window", [WIN_A, WIN_B], ids=["nan-inf-none", "all-none"])
def test_window_encode_decode_round_trip(window: Window) -> None:
    back = decode_window(encode_window(window))
    assert back == window
    # None (not observed) and NaN (observed NaN) stay distinct
    flat = [v for rows in back.values for row in rows for v in row]
    want = [v for rows in window.values for row in rows for v in row]
    assert [v is None for v in flat] == [v is None for v in want]


def test_window_values_round_trip_exactly() -> None:
    # float32-exact values, and values float32 cannot hold (0.1, 1e300, subnormal, > float32 max)
    vals = (0.5, -3.25, float(np.float32(0.1)), 0.1, 1.0 / 3.0, 1e300, 5e-324, 1e39)
    w = Window(end_step=4, steps=(4,), layers=("a",),
               stats=tuple(f"s{i}" for i in range(len(vals))), values=((vals,),))
    back = decode_window(encode_window(w))
    assert back.values[0][0] == vals
    assert back == w
    assert back.series("a", "s3") == [(4, 0.1)]
    assert back.series("a", "missing") == [] and back.series("b", "s0") == []


def test_window_with_no_steps_or_no_layers_round_trips() -> None:
    for w in (Window(3, (), ("a",), ("s",), ()),
              Window(3, (1, 2), (), ("s",), ((), ())),
              Window(3, (1,), ("a",), (), (((),),))):
        assert decode_window(encode_window(w)) == w


def test_window_value_above_float32_max_encodes_without_warning() -> None:
    big = 1e39  # finite, above float32 max (~3.4e38)
    w = Window(end_step=0, steps=(0,), layers=("a",), stats=("grad_norm",), values=(((big,),),))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back = decode_window(encode_window(w))
    assert not caught, [str(c.message) for c in caught]
    assert back.values[0][0][0] == big  # stays finite: a huge norm is not a non-finite one


def test_monitor_grad_norm_above_float32_max_records_without_warning(tmp_path: Path) -> None:
    model = nn.Linear(4, 1, bias=False)
    nn.init.constant_(model.weight, 1e-30)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    x = torch.full((1, 4), 3e38)  # each weight grad is 3e38 (finite): the norm is 6e38
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with NeuralDbg(model, path=tmp_path / "big.ndbg", preset="full") as dbg:
            for _ in range(3):
                opt.zero_grad()
                loss = model(x).sum()
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
    assert not caught, [f"{c.filename}:{c.lineno}: {c.message}" for c in caught]
    run = dbg.run
    assert "internal_error" not in run.meta
    assert [v for _, v in run.series.get("grad_norm")] == pytest.approx([6e38] * 3, rel=1e-6)
    assert run.first_nonfinite is None
    # the flight recorder keeps the finite norm (float32 would have turned it into inf)
    assert run.windows
    for window in run.windows:
        norms = [v for _, v in window.series("", "grad_norm")]
        assert norms and all(math.isfinite(v) for v in norms), norms
        assert norms == pytest.approx([6e38] * len(norms), rel=1e-6)


# ------------------------------------------------------------------------------ load_run errors


def _assert_run_file_error(path: Path, *needles: str) -> RunFileError:
    with pytest.raises(RunFileError) as info:
        load_run(path)
    err = info.value
    assert isinstance(err, NeuralDbgError) and isinstance(err, OSError)
    msg = str(err)
    assert str(path) in msg
    for needle in needles:
        assert needle in msg, msg
    return err


def test_load_run_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.ndbg"
    _assert_run_file_error(missing, "no run file")
    assert not missing.exists()  # reading never creates the file
    _assert_run_file_error(tmp_path, "no run file")  # a directory is not a run file


def test_load_run_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "text.ndbg"
    path.write_bytes(b"this is not a database, just some text\n" * 100)
    _assert_run_file_error(path, "not a neuraldbg run file", "not an SQLite database")


def test_load_run_truncated_run_file(monitored_run_file: Path, tmp_path: Path) -> None:
    data = monitored_run_file.read_bytes()
    path = tmp_path / "truncated.ndbg"
    path.write_bytes(data[: len(data) // 2])
    _assert_run_file_error(path, "cannot be read", "damaged")


def test_load_run_sqlite_but_not_a_run(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE people (name TEXT)")
    db.commit()
    db.close()
    _assert_run_file_error(other, "holds a table 'people' that no neuraldbg run file has")

    # a 'meta' table of some other program
    lookalike = tmp_path / "lookalike.db"
    db = sqlite3.connect(lookalike)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('format', '\"something-else\"')")
    db.commit()
    db.close()
    _assert_run_file_error(lookalike, "SQLite file but not a neuraldbg run file", "steps")


def test_load_run_newer_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "future.ndbg"
    RunWriter(path, {"model_class": "Toy"}).close(status="finished")
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
               (json.dumps(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    _assert_run_file_error(path, f"schema v{SCHEMA_VERSION + 1}", "upgrade neuraldbg")


@pytest.mark.parametrize("corrupt", [
    "UPDATE meta SET value = '{oops' WHERE key = 'model_class'",
    "UPDATE meta SET value = '\"many\"' WHERE key = 'schema_version'",
    "UPDATE events SET metadata = 'not json'",
    "UPDATE windows SET data = X'00010203'",
], ids=["meta-json", "schema-version", "event-metadata", "window-blob"])
def test_load_run_corrupt_content_is_a_run_file_error(tmp_path: Path, corrupt: str) -> None:
    path = tmp_path / "corrupt.ndbg"
    w = RunWriter(path, {"model_class": "Toy"})
    w.add_events(EVENTS[1:2], window=WIN_B)
    w.close(status="finished")
    assert load_run(path).events == EVENTS[1:2]
    db = sqlite3.connect(path)
    db.execute(corrupt)
    db.commit()
    db.close()
    _assert_run_file_error(path, "damaged")


def test_cli_show_reports_a_bad_file_without_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["show", str(tmp_path / "missing.ndbg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("neuraldbg: error: no run file") and "Traceback" not in err


# ---------------------------------------------------------------------------- refusing to write


def test_runwriter_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "existing.ndbg"
    path.write_bytes(b"precious")
    with pytest.raises(RunFileError, match="already exists"):
        RunWriter(path, {})
    assert path.read_bytes() == b"precious"

    # also an existing real run file: it stays readable and unchanged
    run_path = tmp_path / "run.ndbg"
    RunWriter(run_path, {"model_class": "First"}).close(status="finished")
    before = run_path.read_bytes()
    with pytest.raises(RunFileError, match="already exists"):
        RunWriter(run_path, {"model_class": "Second"})
    assert run_path.read_bytes() == before
    assert load_run(run_path).meta["model_class"] == "First"


def test_neuraldbg_refuses_existing_path_at_construction(tmp_path: Path) -> None:
    path = tmp_path / "existing.ndbg"
    path.write_bytes(b"precious")
    model = nn.Linear(2, 1)
    with pytest.raises(RunFileError, match="already exists"):
        NeuralDbg(model, path=path)
    assert path.read_bytes() == b"precious"
    assert not _hooked(model)


@pytest.mark.parametrize("below", ["r.ndbg", "sub/dir/r.ndbg"])
def test_unwritable_path_fails_at_construction(tmp_path: Path, below: str) -> None:
    # a path whose ancestor is a regular file cannot be created (this holds even for root,
    # unlike a chmod'ed directory)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    path = blocker / below
    model = nn.Linear(2, 1)
    with pytest.raises(RunFileError) as info:
        NeuralDbg(model, path=path)
    assert isinstance(info.value, NeuralDbgError)
    assert str(path) in str(info.value) and "writable" in str(info.value)
    assert blocker.read_text() == "a file, not a directory"
    assert not _hooked(model)

    with pytest.raises(RunFileError, match="cannot write the run file"):
        RunWriter(path, {})


# ----------------------------------------------------------------------------- torch-free reading

_BLOCK_TORCH = "import sys; sys.modules['torch'] = None\n"


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)


def test_fixture_run_is_a_real_monitored_run(monitored_run_file: Path) -> None:
    run = load_run(monitored_run_file)
    assert run.meta["status"] == "finished"
    assert run.series.steps == tuple(range(30))
    assert run.dag.method != "none" and run.dag.node("0") is not None
    origin = run.first_nonfinite
    assert origin is not None and origin.step == BAD_STEP
    assert origin.layer_name == "<input>" and origin.metadata["direction"] == "input"
    assert run.windows


def test_load_run_without_torch(monitored_run_file: Path) -> None:
    code = _BLOCK_TORCH + """
try:
    import torch
except ImportError:
    pass
else:
    raise SystemExit("torch was importable: the block did not work")
from causal import load_run as causal_load_run
from neuraldbg import load_run as neuraldbg_load_run
a = causal_load_run(sys.argv[1])
b = neuraldbg_load_run(sys.argv[1])
assert a == b
assert sys.modules["torch"] is None
print(a.to_json())
"""
    proc = _python(code, str(monitored_run_file))
    assert proc.returncode == 0, proc.stderr
    here = load_run(monitored_run_file)
    there = Run.from_json(proc.stdout)
    assert there == here
    assert there.first_nonfinite is not None and there.first_nonfinite.step == BAD_STEP


def test_import_neuraldbg_does_not_import_torch() -> None:
    code = """
import sys
import causal
import neuraldbg
from neuraldbg import Run, RunFileError, load_run
assert "torch" not in sys.modules, "import neuraldbg imported torch"
neuraldbg.NeuralDbg  # the lazy attribute loads the monitor, and torch with it
assert "torch" in sys.modules
print("ok")
"""
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_cli_show_without_torch(monitored_run_file: Path) -> None:
    code = _BLOCK_TORCH + "import neuraldbg.cli\nsys.exit(neuraldbg.cli.main(sys.argv[1:]))\n"
    proc = _python(code, "show", str(monitored_run_file))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert str(monitored_run_file) in out
    assert "30 steps recorded" in out and "status finished" in out
    assert "First non-finite value" in out
    assert f"step {BAD_STEP} . <input>: first inf born in the input batch" in out

    proc = _python(code, "show", "--json", str(monitored_run_file))
    assert proc.returncode == 0, proc.stderr
    _no_nan_json(proc.stdout)
    assert Run.from_json(proc.stdout) == load_run(monitored_run_file)


# ---------------------------------------------------------------------------- live vs loaded


def test_live_run_equals_loaded_run(tmp_path: Path) -> None:
    model, opt, batches = _small_model()
    path = tmp_path / "live.ndbg"
    with NeuralDbg(model, path=path) as dbg:
        for step in range(10):
            dbg.step = step
            _train_step(dbg, model, opt, *batches[step % len(batches)])
            if step == 5:
                during = dbg.run
                assert during.meta["status"] == "running"
                assert during.series.steps == tuple(range(6))
                assert during == load_run(path)  # read() flushed: the file has them too
    run = dbg.run
    assert run.path == str(path)
    assert run == load_run(run.path)
    assert run.meta["status"] == "finished"
    assert run.meta.get("error") is None
    assert run.series.steps == tuple(range(10))
    assert all(math.isfinite(v) for _, v in run.series.get("loss"))
    assert run.setting("optimizer") == "SGD" and float(run.setting("lr/0") or "nan") == 0.01


def test_meta_last_step_is_the_last_recorded_step(tmp_path: Path) -> None:
    model, opt, batches = _small_model()
    with NeuralDbg(model, path=tmp_path / "last.ndbg") as dbg:
        for step in range(10):
            dbg.step = step
            _train_step(dbg, model, opt, *batches[step % len(batches)])
    run = dbg.run
    assert run.series.steps[-1] == 9
    assert run.meta["last_step"] == 9


def test_live_run_grows_while_running(tmp_path: Path) -> None:
    model, opt, batches = _small_model()
    with NeuralDbg(model, path=tmp_path / "grow.ndbg") as dbg:
        seen = []
        for step in range(6):
            dbg.step = step
            _train_step(dbg, model, opt, *batches[step % len(batches)])
            seen.append(len(dbg.run.series))
            assert dbg.run.meta["status"] == "running"
    assert seen == [1, 2, 3, 4, 5, 6]
    assert dbg.run.meta["status"] == "finished"


def test_failed_run_records_the_error(tmp_path: Path) -> None:
    model, opt, batches = _small_model()
    path = tmp_path / "failed.ndbg"
    with pytest.raises(RuntimeError, match="boom at step 3"), \
            NeuralDbg(model, path=path) as dbg:
        for step in range(10):
            dbg.step = step
            _train_step(dbg, model, opt, *batches[step % len(batches)])
            if step == 3:
                raise RuntimeError("boom at step 3")
    run = dbg.run
    assert run == load_run(path)
    assert run.meta["status"] == "failed"
    assert run.meta["error"] == "RuntimeError: boom at step 3"
    assert run.series.steps == (0, 1, 2, 3)
    # the monitor is detached: training after the failure is not recorded and nothing breaks
    assert not _hooked(model)
    model(batches[0][0]).sum().backward()
    opt.step()
    assert load_run(path).series.steps == (0, 1, 2, 3)
