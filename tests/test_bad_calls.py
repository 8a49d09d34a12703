"""Bad calls get a `NeuralDbgError` that names the fix, at the call that made them; a value the
monitor cannot use never stops the recording silently; a run whose recording stopped says so."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

from causal.diagnose import diagnose
from causal.schema.run_file import load_run
from neuraldbg import NeuralDbg
from neuraldbg.cli import main as cli_main
from neuraldbg.errors import ConfigError, NeuralDbgWarning, RecordError, RunFileError


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def _steps(dbg: NeuralDbg, model: nn.Module, n: int, bad_loss=None, bad_target=None) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(n):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if step == 2 and bad_loss is not None:
            with pytest.raises(RecordError, match=bad_loss[1]):
                dbg.record_loss(bad_loss[0])
        else:
            dbg.record_loss(loss, target=bad_target if step == 2 else None)
        opt.step()


@pytest.mark.parametrize("bad", [
    (torch.tensor(1.0 + 2.0j), "real-valued loss, got a complex64"),
    (torch.tensor(True), "real-valued loss, got a bool"),
    (torch.empty((), device="meta"), "meta device"),
], ids=["complex", "bool", "meta"])
def test_a_loss_the_monitor_cannot_read_is_refused_at_the_call(run_path, bad) -> None:
    model = _model()
    with NeuralDbg(model, path=run_path()) as dbg:
        _steps(dbg, model, 6, bad_loss=bad)
    run = load_run(dbg.path)
    assert len(run.series) == 6 and "internal_error" not in run.meta  # recording went on
    assert run.series.get("loss")[-1][0] == 5


def test_a_target_the_monitor_cannot_measure_is_skipped_with_one_warning(run_path) -> None:
    model = _model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with NeuralDbg(model, path=run_path()) as dbg:
            _steps(dbg, model, 5, bad_target=(torch.randn(8, 1), torch.empty(8, device="meta")))
    ours = [str(w.message) for w in caught if issubclass(w.category, NeuralDbgWarning)]
    assert len(ours) == 1 and "not measured" in ours[0]
    run = load_run(dbg.path)
    assert len(run.series) == 5 and "internal_error" not in run.meta


@pytest.mark.parametrize("path", [5, 1.5, ["run.ndbg"]])
def test_a_path_that_is_no_path(path) -> None:
    with pytest.raises(ConfigError, match=r"path must be a str or os\.PathLike"):
        NeuralDbg(_model(), path=path)


def test_a_dangling_symlink_is_refused_and_its_target_not_created(tmp_path: Path) -> None:
    link = tmp_path / "run.ndbg"
    target = tmp_path / "elsewhere" / "target.ndbg"
    os.symlink(target, link)
    with pytest.raises(RunFileError, match="symbolic link"):
        NeuralDbg(_model(), path=link)
    assert not target.exists() and not target.parent.exists()


def test_a_run_whose_recording_stopped_says_so(run_path, capsys) -> None:
    model = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NeuralDbg(model, path=run_path()) as dbg:
            _steps(dbg, model, 3)
            dbg._reporter.internal_error("a test", RuntimeError("boom"))
            _steps(dbg, model, 3)
    run = load_run(dbg.path)
    report = diagnose(run).format()
    assert report.startswith("Recording stopped after step 2: neuraldbg hit an internal error "
                             "(a test: RuntimeError: boom)")
    assert diagnose(run).to_dict()["recording_stopped"].startswith("Recording stopped")
    assert cli_main(["diagnose", "--json", str(dbg.path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "internal error" in data["recording_stopped"]


class _Warns(nn.Module):
    """A forward that warns through torch (softmax without dim) and by itself."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        warnings.warn("the program's own warning", UserWarning, stacklevel=1)
        return nn.functional.log_softmax(self.b(torch.tanh(self.a(x))))  # no dim: warns


def _warned(path: str | None) -> list[tuple[str, int, str]]:
    torch.manual_seed(0)
    model = _Warns()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dbg = NeuralDbg(model, path=path, preset="full") if path else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        if dbg is not None:
            dbg.start()
        for step in range(12):
            x = torch.randn(8, 4)
            if step == 8:
                x[0, 0] = float("inf")  # a non-finite step: the monitor runs passes again
            opt.zero_grad()
            loss = -model(x).mean()
            loss.backward()
            if dbg is not None:
                dbg.record_loss(loss)
            opt.step()
        if dbg is not None:
            dbg.close()
    return sorted((Path(w.filename).name, w.lineno, str(w.message)[:20]) for w in caught
                  if not issubclass(w.category, NeuralDbgWarning))


def test_the_programs_warnings_keep_their_line_and_come_once(run_path) -> None:
    unmonitored = _warned(None)
    assert len(unmonitored) == 2 and {f for f, _, _ in unmonitored} == {"test_bad_calls.py"}
    assert _warned(run_path()) == unmonitored


def test_show_into_a_closed_pipe_ends_quietly(run_path) -> None:
    import subprocess
    import sys

    model = _model()
    with NeuralDbg(model, path=run_path()) as dbg:
        _steps(dbg, model, 3)
    for command in (["show"], ["diagnose"], ["diagnose", "--json"]):
        done = subprocess.run(
            f"{sys.executable} -m neuraldbg.cli {' '.join(command)} {dbg.path} | true",
            shell=True, capture_output=True, text=True, timeout=120)
        assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, \
            done.stderr


def test_a_plugin_in_the_working_directory_is_found(run_path, tmp_path: Path) -> None:
    import subprocess
    import sys

    model = _model()
    with NeuralDbg(model, path=run_path()) as dbg:
        _steps(dbg, model, 3)
    (tmp_path / "my_local_plugin.py").write_text("print('PLUGIN LOADED')\n")
    script = Path(sys.executable).parent / "neuraldbg"  # the console script: no cwd on its path
    assert script.exists()
    done = subprocess.run([str(script), "diagnose", str(dbg.path), "--plugin", "my_local_plugin"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PLUGIN LOADED")
