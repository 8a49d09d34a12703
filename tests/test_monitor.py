"""The monitor: the seed-compatible loop, untouched numerics, hook hygiene, steps, bad input."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn
from torch.optim.optimizer import _global_optimizer_post_hooks, _global_optimizer_pre_hooks

from causal.schema.run import EventKind, same_values
from neuraldbg import (
    ConfigError,
    MonitorStateError,
    NeuralDbg,
    NeuralDbgError,
    NeuralDbgWarning,
    RecordError,
    RunFileError,
    diagnose,
    load_run,
)
from neuraldbg.capture.host_transfer import Gather


def mlp(seed: int = 0, depth: int = 4, width: int = 16,
        act: type[nn.Module] = nn.Tanh) -> nn.Module:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    d = 8
    for _ in range(depth):
        layers += [nn.Linear(d, width), act()]
        d = width
    return nn.Sequential(*layers, nn.Linear(d, 1))


def batches(n: int, seed: int = 0, d: int = 8) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(16, d, generator=g), torch.randn(16, 1, generator=g)) for _ in range(n)]


def train(model, opt, data, dbg=None, item=False, set_step=True, loss_fn=None,
          grad_scale=None):
    """The seed loop; `grad_scale(step)`, when given, multiplies what is differentiated (the
    gradients change, the recorded loss does not)."""
    loss_fn = loss_fn or nn.functional.mse_loss
    for step, (x, y) in enumerate(data):
        if dbg is not None and set_step:
            dbg.step = step
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        (loss * grad_scale(step) if grad_scale is not None else loss).backward()
        if dbg is not None:
            dbg.record_loss(loss.item() if item else loss)
        opt.step()


# ---------------------------------------------------------------- the loop and numerics


@pytest.mark.parametrize("opt_cls", [torch.optim.SGD, torch.optim.Adam])
@pytest.mark.parametrize("preset", ["standard", "full"])
def test_monitored_run_is_bit_identical(run_path, opt_cls, preset):
    def build():
        torch.manual_seed(1)
        m = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
        return m, opt_cls(m.parameters(), lr=0.01)

    data = batches(60)
    m1, o1 = build()
    torch.manual_seed(7)
    train(m1, o1, data)
    m2, o2 = build()
    torch.manual_seed(7)
    with NeuralDbg(m2, path=run_path(), preset=preset) as dbg:
        train(m2, o2, data, dbg)
    for (n, a), b in zip(m1.state_dict().items(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b), n
    assert len(dbg.run.series) == 60


def test_seed_compatible_loop_with_item_and_explicit_step(run_path):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, threshold_vanishing=1e-6, threshold_exploding=1e3,
                   path=run_path()) as dbg:
        for step, (x, y) in enumerate(batches(12)):
            dbg.step = step * 10
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss.item())
            opt.step()
    run = dbg.run
    assert run.series.steps == tuple(range(0, 120, 10))
    assert all(v is not None and v > 0 for v in run.series.columns["loss"])
    assert run.meta["status"] == "finished"


def test_step_advances_by_itself_with_an_optimizer(run_path):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        train(model, opt, batches(7), dbg, set_step=False)
        assert dbg.step == 7
    assert dbg.run.series.steps == tuple(range(7))
    assert dbg.run.setting("optimizer") == "SGD"
    assert dbg.run.setting("lr/0") == "0.01"


def test_the_run_says_which_modules_each_param_group_updates(run_path):
    """With several param groups (a head trained faster than its body), the run records
    which monitored modules each group updates, next to its learning rate; with one group
    there is nothing to tell apart and nothing is recorded."""
    model = mlp(depth=2)
    body = [p for m in list(model)[:-1] for p in m.parameters()]
    opt = torch.optim.SGD([{"params": body}, {"params": model[-1].parameters(), "lr": 0.1}],
                          lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        train(model, opt, batches(3), dbg)
    assert dbg.run.setting("lr_group/0") == "0 2"
    assert dbg.run.setting("lr_group/1") == "4"
    assert dbg.run.setting("lr/1") == "0.1"
    single = mlp(depth=2)
    with NeuralDbg(single, path=run_path()) as dbg:
        train(single, torch.optim.SGD(single.parameters(), lr=0.01), batches(3), dbg)
    assert not any(c.key.startswith("lr_group/") for c in dbg.run.settings)


def test_step_advances_without_an_optimizer(run_path):
    """A hand-written update loop: the next forward after a backward closes the step."""
    model = mlp()
    with NeuralDbg(model, path=run_path()) as dbg:
        for x, y in batches(5):
            model.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.01 * p.grad
    run = dbg.run
    assert run.series.steps == tuple(range(5))
    grad = run.series.columns["grad_norm"]
    assert all(g is not None and g > 0 for g in grad)


@pytest.fixture
def fetches(monkeypatch) -> list[int]:
    """One entry per `Gather.fetch` call (the step's one host-device copy) from now on."""
    calls: list[int] = []
    real = Gather.fetch

    def counting(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(Gather, "fetch", counting)
    return calls


def train_on_path(run_path, cpu: bool, steps: int):
    """A healthy run of `mlp()` with the capture forced onto the host path (`cpu`) or the
    device path (one packed copy per step, as on an accelerator); its run."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        assert dbg._capture is not None
        dbg._capture.cpu = cpu
        train(model, opt, batches(steps), dbg)
    return dbg.run


def test_one_host_sync_per_healthy_step(run_path, fetches):
    calls = fetches
    for cpu in (False, True):  # the device path; in host memory, quiet steps read no Gather
        calls.clear()
        train_on_path(run_path, cpu, 30)
        assert len(calls) == 30 if not cpu else 0 < len(calls) < 30


def test_gather_packs_scalars_and_vectors_on_both_paths():
    """The device path (one stack, one cat, one copy) and the host path (read one by one) give
    the same values; dtypes are promoted; `finite` covers the scalars only."""
    for cpu in (False, True):
        g = Gather(cpu=cpu)
        g.add_scalars("loss", (torch.tensor(2.5),))
        g.add_scalars("in0", (torch.tensor(-1.0, dtype=torch.bfloat16), torch.tensor(3.0),
                              torch.tensor(4.0), torch.tensor(5.0, dtype=torch.float64)))
        g.add("act", torch.tensor([[1.0, float("nan")], [3.0, 4.0]]))
        g.add_scalars("grads", list(torch.tensor([0.5, 0.25]).unbind()))
        host = g.fetch()
        assert host["loss"] == [2.5]
        assert host["in0"] == [-1.0, 3.0, 4.0, 5.0]
        assert host["grads"] == [0.5, 0.25]
        assert host["act"][0] == 1.0 and math.isnan(host["act"][1]) and host["act"][2:] == [3, 4]
        assert g.finite
        g = Gather(cpu=cpu)
        g.add_scalars("loss", (torch.tensor(float("inf")),))
        assert g.fetch()["loss"] == [math.inf] and not g.finite


def test_device_path_records_the_same_run(run_path):
    """The one-copy path used for accelerators gives the same run file values as the CPU path."""
    runs = [train_on_path(run_path, cpu, 40) for cpu in (True, False)]
    for column in runs[0].series.columns:
        assert same_values(runs[0].series.get(column), runs[1].series.get(column)), column
    assert runs[0].events == runs[1].events


def test_record_loss_does_not_sync(run_path, monkeypatch):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(torch.randn(4, 8)), torch.randn(4, 1))
        loss.backward()

        def boom(*a, **k):
            raise AssertionError("record_loss synced")

        monkeypatch.setattr(torch.Tensor, "item", boom)
        monkeypatch.setattr(torch.Tensor, "tolist", boom)
        dbg.record_loss(loss)
        monkeypatch.undo()
        opt.step()


# ---------------------------------------------------------------- hooks and model state


def _hook_state(model: nn.Module):
    dicts = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
             "_backward_pre_hooks", "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs",
             "_forward_hooks_always_called", "_state_dict_hooks", "_load_state_dict_pre_hooks")
    mods = [(name, d, len(getattr(m, d, {}) or {})) for name, m in model.named_modules()
            for d in dicts]
    params = [len(p._post_accumulate_grad_hooks or ()) for p in model.parameters()]
    return mods, params, [p._backward_hooks for p in model.parameters()]


def test_hooks_removed_on_normal_exit_and_model_unchanged(run_path):
    model = mlp()
    before = _hook_state(model)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    global_hooks = len(_global_optimizer_post_hooks), len(_global_optimizer_pre_hooks)
    with NeuralDbg(model, path=run_path()):
        assert _hook_state(model) != before
        assert len(_global_optimizer_post_hooks) == global_hooks[0] + 1
        assert len(_global_optimizer_pre_hooks) == global_hooks[1] + 1
    assert _hook_state(model) == before
    assert (len(_global_optimizer_post_hooks), len(_global_optimizer_pre_hooks)) == global_hooks
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())
    assert model.training


def test_hooks_removed_when_the_body_raises(run_path):
    model = mlp()
    before = _hook_state(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with pytest.raises(KeyError, match="boom"), NeuralDbg(model, path=run_path()) as dbg:
        train(model, opt, batches(3), dbg)
        raise KeyError("boom")
    assert _hook_state(model) == before
    run = load_run(dbg.path)
    assert run.meta["status"] == "failed"
    assert "boom" in run.meta["error"]
    assert len(run.series) == 3


class Raises(nn.Module):
    def forward(self, x):
        raise RuntimeError("module failed")


def test_hooks_removed_when_a_module_raises(run_path):
    model = nn.Sequential(nn.Linear(8, 8), Raises())
    before = _hook_state(model)
    with pytest.raises(RuntimeError, match="module failed"), NeuralDbg(model, path=run_path()):
        model(torch.randn(2, 8))
    assert _hook_state(model) == before


def test_a_forward_that_raises_leaves_no_function_mode_on(run_path):
    """A full-statistics forward runs under the monitor's TorchFunctionMode; when the model
    raises mid-forward (and the loop catches it), the mode does not stay on into the user's
    own code, and the next steps are recorded as usual."""
    from torch.overrides import _get_current_function_mode_stack

    class Sometimes(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(8, 8)
            self.fail = False

        def forward(self, x):
            h = torch.tanh(self.fc(x))
            if self.fail:
                raise RuntimeError("bad batch")
            return h

    model = Sometimes()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path(), preset="full") as dbg:
        for step in range(6):
            model.fail = step in (1, 2)
            try:
                opt.zero_grad()
                loss = model(torch.randn(4, 8)).pow(2).mean()
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
            except RuntimeError:
                assert not _get_current_function_mode_stack()
    assert not _get_current_function_mode_stack()
    assert "internal_error" not in dbg.run.meta
    assert len(dbg.run.series.get("loss")) == 4


def test_monitor_can_not_be_reused_and_rejects_use_outside(run_path):
    model = mlp()
    dbg = NeuralDbg(model, path=run_path())
    with pytest.raises(MonitorStateError):
        dbg.record_loss(1.0)
    with dbg:
        pass
    with pytest.raises(MonitorStateError):
        dbg.record_loss(1.0)
    with pytest.raises(MonitorStateError), dbg:
        pass


# ---------------------------------------------------------------- bad input


def test_bad_configuration_fails_at_construction(run_path, tmp_path):
    model = mlp()
    with pytest.raises(ConfigError, match=r"nn\.Module"):
        NeuralDbg(model.parameters(), path=run_path())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="below threshold_exploding"):
        NeuralDbg(model, threshold_vanishing=1e3, threshold_exploding=1e-6, path=run_path())
    with pytest.raises(ConfigError, match="threshold_vanishing must be a positive"):
        NeuralDbg(model, threshold_vanishing=0.0, path=run_path())
    with pytest.raises(ConfigError, match="threshold_exploding must be a positive"):
        NeuralDbg(model, threshold_exploding=-1.0, path=run_path())
    with pytest.raises(ConfigError, match="preset"):
        NeuralDbg(model, preset="turbo", path=run_path())
    with pytest.raises(ConfigError, match="GradScaler"):
        NeuralDbg(model, scaler=object(), path=run_path())
    with pytest.raises(ConfigError, match="dummy batch"):  # lazy modules not run yet
        NeuralDbg(nn.Sequential(nn.LazyLinear(4), nn.Linear(4, 1)), path=run_path())
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with pytest.raises(RunFileError, match="writable"):
        NeuralDbg(model, path=str(blocker / "run.ndbg"))
    existing = run_path()
    open(existing, "w").close()
    with pytest.raises(RunFileError, match="already exists"):
        NeuralDbg(model, path=existing)
    with pytest.raises(RunFileError, match="is a directory: pass a file path"):
        NeuralDbg(model, path=tmp_path)
    assert issubclass(ConfigError, NeuralDbgError)


def test_bad_records_fail_clearly(run_path):
    model = mlp()
    with NeuralDbg(model, path=run_path()) as dbg:
        with pytest.raises(RecordError, match="None"):
            dbg.record_loss(None)
        with pytest.raises(RecordError, match="scalar"):
            dbg.record_loss(torch.ones(3))
        with pytest.raises(RecordError, match="number"):
            dbg.record_loss("0.5")
        with pytest.raises(RecordError, match="int"):
            dbg.step = 1.5  # type: ignore[assignment]
        with pytest.raises(RecordError, match="tuple, list or dict of them"):
            dbg.record_loss(torch.tensor(0.5), target=(1.0, "labels"))
        dbg.record_loss(torch.tensor(0.5))
        dbg.record_loss(torch.ones(1, 1))


def test_targets_of_several_parts_are_measured_together(run_path):
    """An RL or multi-task batch's targets come as a tuple or dict (returns ~ -500 next to
    actions, integer ids): their floating-point values are measured as one target, so raw
    returns show as a target scale; integer parts carry no scale."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step, (x, y) in enumerate(batches(3)):
            dbg.step = step
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            returns = torch.full((16,), -500.0)
            dbg.record_loss(loss, target={"actions": y, "returns": returns,
                                          "ids": torch.arange(16)})
            opt.step()
    max_abs = [v for _, v in dbg.run.series.get("target_max_abs")]
    assert max_abs == [500.0, 500.0, 500.0]


# ---------------------------------------------------------------- model shapes that must work


def test_model_without_parameters(run_path):
    model = nn.Sequential(nn.Tanh(), nn.ReLU())
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(4):
            dbg.step = step
            out = model(torch.randn(4, 3, requires_grad=True))
            dbg.record_loss(out.sum())
    assert dbg.run.series.steps == (0, 1, 2, 3)


def _layer_grad_norms(model: nn.Module) -> dict[str, float]:
    out = {}
    for name, m in model.named_modules():
        grads = [p.grad for p in m.parameters(recurse=False) if p.grad is not None]
        if grads:
            out[name] = math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))
    return out


def test_gradient_norms_are_exact_accumulated_and_taken_before_clipping(run_path):
    """Per-layer norms of the gradient the backward passes accumulated (two per step here),
    as it was before the loop clipped it; the global norm over all parameters."""
    model = mlp(width=16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = batches(7)
    expected: dict[int, dict[str, float]] = {}
    with NeuralDbg(model, path=run_path()) as dbg:
        for step, (x, y) in enumerate(data):
            opt.zero_grad()
            halves = [(x, y)] if step == 0 else [(x[:8], y[:8]), (x[8:], y[8:])]
            for xb, yb in halves:  # step 0 binds the optimizer, then 2 backward passes a step
                loss = nn.functional.mse_loss(model(xb), yb)
                loss.backward()
            expected[step] = _layer_grad_norms(model)
            dbg.record_loss(loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1e-4)
            opt.step()
    run = dbg.run
    assert run.series.steps == tuple(range(7))
    window = run.windows[-1]
    for layer in ("0", "2", "4", "6", "8"):
        got = dict(window.series(layer, "grad_norm"))
        assert sorted(got) == list(range(7)), layer
        for step, v in got.items():
            assert v == pytest.approx(expected[step][layer], rel=1e-5), (layer, step)
    for step, v in run.series.get("grad_norm"):
        total = math.sqrt(sum(n * n for n in expected[step].values()))
        assert v == pytest.approx(total, rel=1e-5)
        assert v > 1e-3  # not the clipped norm


class _SpectralConv(nn.Module):
    """A Fourier layer with complex weights (FNO): complex parameters and gradients."""

    def __init__(self, width: int, modes: int) -> None:
        super().__init__()
        self.modes = modes
        self.weight = nn.Parameter(0.1 * torch.randn(width, width, modes, dtype=torch.cfloat))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = torch.fft.rfft(x)
        out = torch.einsum("bim,iom->bom", xf[..., :self.modes], self.weight)
        return torch.fft.irfft(out, n=x.shape[-1])


def test_gradient_norms_of_complex_parameters(run_path):
    """Complex weights (a Fourier layer) next to real ones: exact real norms of their
    gradients every step, and nothing stops recording."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(1, 4, 1), _SpectralConv(4, 5), nn.GELU(), nn.Conv1d(4, 1, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = [(torch.randn(8, 1, 32), torch.randn(8, 1, 32)) for _ in range(5)]
    expected: dict[int, dict[str, float]] = {}
    with NeuralDbg(model, path=run_path()) as dbg:
        for step, (x, y) in enumerate(data):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            expected[step] = {name: math.sqrt(sum(float(p.grad.abs().double().pow(2).sum())
                                                  for p in m.parameters(recurse=False)))
                              for name, m in model.named_modules() if name in ("0", "1", "3")}
            dbg.record_loss(loss)
            opt.step()
    window = dbg.run.windows[-1]
    for layer in ("0", "1", "3"):
        got = dict(window.series(layer, "grad_norm"))
        assert sorted(got) == list(range(5)), layer
        for step, v in got.items():
            assert v == pytest.approx(expected[step][layer], rel=1e-5), (layer, step)


def test_a_parameter_without_a_gradient_this_step_is_not_observed(run_path):
    """Gradients zeroed in place (set_to_none=False) are not gradients of this step."""

    class TwoHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body, self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 1), nn.Linear(8, 1)
            self.use_b = False

        def forward(self, x):
            h = torch.tanh(self.body(x))
            return self.b(h) if self.use_b else self.a(h)

    torch.manual_seed(0)
    model = TwoHeads()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step, (x, y) in enumerate(batches(6)):
            model.use_b = step % 2 == 1
            opt.zero_grad(set_to_none=False)
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    window = dbg.run.windows[-1]
    assert [s for s, _ in window.series("b", "grad_norm")] == [1, 3, 5]
    assert [s for s, _ in window.series("a", "grad_norm")] == [0, 2, 4]
    assert [s for s, _ in window.series("body", "grad_norm")] == list(range(6))


def test_gradient_norms_through_reentrant_checkpointing(run_path):
    """A reentrant checkpoint accumulates its parameters' gradients in a nested backward
    pass (and re-runs their forward during backward): every layer's norm is still exact."""
    from torch.utils.checkpoint import checkpoint

    class Checkpointed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.pre = nn.Linear(8, 8)
            self.inner = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(checkpoint(self.inner, self.pre(x), use_reentrant=True))

    torch.manual_seed(0)
    model = Checkpointed()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    expected: dict[int, dict[str, float]] = {}
    with NeuralDbg(model, path=run_path()) as dbg:
        for step, (x, y) in enumerate(batches(4)):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            expected[step] = _layer_grad_norms(model)
            dbg.record_loss(loss)
            opt.step()
    run = dbg.run
    assert len(run.series) == 4
    window = run.windows[-1]
    for layer in ("pre", "inner.0", "head"):
        got = dict(window.series(layer, "grad_norm"))
        assert sorted(got) == [0, 1, 2, 3], layer
        for step, v in got.items():
            assert v == pytest.approx(expected[step][layer], rel=1e-5), (layer, step)


def test_update_ratios_measure_each_scheduled_update(run_path):
    """|dw| / |w| per layer on the scheduled steps, exact: the weights are copied after the
    update before each measured one."""
    from neuraldbg import Schedule, every

    def flat(m: nn.Module) -> torch.Tensor:
        return torch.cat([p.detach().reshape(-1) for p in m.parameters()]).double()

    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    layers = ("0", "2", "4", "6", "8")
    expected: dict[int, dict[str, float]] = {}
    schedule = Schedule(activations=every(100), weights=every(3))
    with NeuralDbg(model, path=run_path(), preset=schedule) as dbg:
        for step, (x, y) in enumerate(batches(10)):
            before = {n: flat(model.get_submodule(n)) for n in layers}
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
            after = {n: flat(model.get_submodule(n)) for n in layers}
            expected[step] = {n: float((after[n] - before[n]).norm() / after[n].norm())
                              for n in layers}
    window = dbg.run.windows[-1]
    for n in layers:
        got = dict(window.series(n, "update_ratio"))
        assert sorted(got) == [0, 3, 6, 9], n
        for step, v in got.items():
            assert v == pytest.approx(expected[step][n], rel=1e-4), (n, step)


@pytest.mark.parametrize("pass_before_step", [False, True])
def test_an_optimizer_with_a_closure_records_one_step_per_update(run_path, pass_before_step):
    model = mlp()
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=3)
    with NeuralDbg(model, path=run_path()) as dbg:
        for x, y in batches(4):
            def closure(x=x, y=y):
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                dbg.record_loss(loss)
                return loss

            if pass_before_step:  # a forward and backward pass before the update, too
                closure()
                opt.step(closure=closure)
            else:
                opt.step(closure)
    assert dbg.run.series.steps == (0, 1, 2, 3)


def test_weight_sharing_and_module_called_twice(run_path):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8)
            self.act = nn.Tanh()
            self.mid = nn.Linear(8, 8)
            self.head = nn.Linear(8, 20, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, idx):
            h = self.act(self.emb(idx))
            return self.head(self.act(self.mid(h)))

    torch.manual_seed(0)
    model = Tied()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with NeuralDbg(model, path=run_path(), preset="full") as dbg:
        for _ in range(5):
            idx = torch.randint(0, 20, (4, 6))
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(idx).reshape(-1, 20), idx.reshape(-1))
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    run = dbg.run
    assert len(run.series) == 5
    window = run.windows[-1]
    for layer in ("emb", "head", "mid"):
        assert window.series(layer, "grad_norm"), layer
    assert window.series("act", "act_saturated_frac")
    assert nx_acyclic(run)


def nx_acyclic(run) -> bool:
    import networkx as nx

    return nx.is_directed_acyclic_graph(run.dag.to_networkx())


@pytest.mark.parametrize("use_scaler", [False, True])
def test_gradient_accumulation_is_one_step_per_optimizer_step(run_path, use_scaler):
    """Three micro-batches per step and no `dbg.step`: the steps are the optimizer's, from the
    first one (before the optimizer is known) and under a GradScaler that skips a step (the
    micro-batches' forward passes must not each begin a step)."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10) if use_scaler else None
    data = batches(15)
    with NeuralDbg(model, path=run_path(), scaler=scaler) as dbg:
        for step in range(5):
            opt.zero_grad()
            for micro in range(3):
                x, y = data[3 * step + micro]
                if use_scaler and step == 2 and micro == 1:
                    x = torch.full_like(x, float("nan"))  # the scaler skips this step
                loss = nn.functional.mse_loss(model(x), y) / 3
                (scaler.scale(loss) if scaler is not None else loss).backward()
                dbg.record_loss(loss)
            if scaler is not None:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
        assert dbg.step == 5
    assert dbg.run.series.steps == tuple(range(5))
    if use_scaler:  # the skipped step is step 2, and the scale halved after it
        scales = dict(dbg.run.series.get("scaler_scale"))
        assert scales[2] == 2.0**10 and scales[3] == 2.0**9


def test_bf16_autocast_with_grad_scaler_on_cpu(run_path):
    model = mlp(width=32)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu")
    with NeuralDbg(model, path=run_path(), scaler=scaler, preset="full") as dbg:
        for x, y in batches(6):
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = nn.functional.mse_loss(model(x).float(), y)
            scaler.scale(loss).backward()
            dbg.record_loss(loss)
            scaler.step(opt)
            scaler.update()
    run = dbg.run
    assert run.setting("amp_dtype") == "bfloat16"
    scales = [v for _, v in run.series.get("scaler_scale")]
    assert scales and all(s == scaler.get_scale() for s in scales)
    # gradient norms are recorded unscaled (scale 65536 would look like an explosion)
    assert all(g < 100 for _, g in run.series.get("grad_norm"))
    assert not run.events_of("grad")
    headroom = run.windows[-1].series("1", "act_headroom")
    assert headroom and all(h > 1e30 for _, h in headroom)


def test_no_grad_evaluation_passes_are_not_recorded(run_path):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for x, y in batches(4):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
            with torch.no_grad():
                model(torch.full((2, 8), 1e6))
    run = dbg.run
    assert len(run.series) == 4
    assert all(v < 100 for _, v in run.series.get("input_max_abs"))


def test_escalation_records_full_statistics_after_an_abnormal_signal(run_path):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = batches(80)
    data[60] = (data[60][0] * 1e4, data[60][1])
    with NeuralDbg(model, path=run_path()) as dbg:
        train(model, opt, data, dbg)
    full = dict(dbg.run.series.get("full_stats"))
    assert full[0] == full[1] == full[2] == 1.0
    assert full[10] == 0.0
    assert full[61] == 1.0 and full[70] == 1.0
    assert math.isfinite(dict(dbg.run.series.get("loss"))[59])


def test_a_regime_that_stays_abnormal_is_sampled_ever_more_sparsely(run_path):
    """Gradients that stay under the vanishing limit for the whole run (a limit set above every
    norm) escalate to full statistics on every step once, for escalate_steps steps after the
    last new abnormal signal; then every abnormal_every steps, spaced out while nothing changes
    (a benign regime that lasts the whole run must not keep the monitor in full detail); a new
    abnormal signal (an outlier batch) escalates again."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = batches(260)
    data[230] = (data[230][0] * 1e4, data[230][1])
    with NeuralDbg(model, path=run_path(), threshold_vanishing=1e2,
                   threshold_exploding=1e6) as dbg:
        train(model, opt, data, dbg)
    run = dbg.run
    vanishing = [e.step for e in run.events if e.to_state == "grad_vanishing"]
    assert vanishing and max(vanishing) < 10  # the regime began early and stayed
    # nothing else happens before step 190 (a loss plateau, later, is news too)
    assert not [e for e in run.events if max(vanishing) < e.step < 190]
    last_new = max(vanishing)
    full = dict(run.series.get("full_stats"))
    assert all(full[s] == 1.0 for s in range(last_new + 1, last_new + 21))
    sampled = [s for s in range(last_new + 21, 190) if full[s] == 1.0]
    assert all(s % 5 == 0 for s in sampled)
    assert {50, 100, 150} <= set(sampled)  # the regular schedule goes on
    extra = [s for s in sampled if s % 50]
    gaps = [b - a for a, b in itertools.pairwise(extra)]
    assert extra[0] <= last_new + 30 and gaps == sorted(gaps) and gaps[-1] >= 20
    assert len(sampled) < 12  # every 5th step would be 34
    assert all(full[s] == 1.0 for s in range(231, 251))  # escalated again


def test_a_change_the_queue_finds_late_still_escalates(run_path, monkeypatch):
    """Gradients 1000x their scale from step 120 on, with the loss as before and no absolute
    limit crossed: no cheap check flags the step, so the queue finds the jump only when it is
    analysed (up to BATCH steps later). Full statistics still follow on escalate_steps steps in
    a row, from the step the jump was found at."""
    import neuraldbg.detect.analyzer as analyze

    monkeypatch.setattr(analyze, "BATCH", 64)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    data = batches(260)
    with NeuralDbg(model, path=run_path(), threshold_exploding=1e12) as dbg:
        train(model, opt, data, dbg, grad_scale=lambda step: 1000.0 if step >= 120 else 1.0)
    run = dbg.run
    jumps = [e.step for e in run.events if e.to_state == "grad_exploding"]
    assert jumps and min(jumps) == 120
    full = dict(run.series.get("full_stats"))
    runs = [s for s in range(121, 120 + 64) if all(full[s + k] == 1.0 for k in range(20))]
    assert runs, "no escalation after the jump"


def test_a_limit_crossed_again_and_again_stops_escalating(run_path):
    """Gradients pushed over threshold_exploding for 3 steps every 40 (a layer whose norm sits
    near the limit): every crossing and every return is recorded, the first two crossings
    escalate to full statistics on escalate_steps steps, the later ones (recurrences) do not,
    so such a run is not kept in full detail for good (MobileNetV2 from a tiny config: 1.64x
    mean step time before, 1.25x after)."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    pulses = range(30, 300, 40)
    with NeuralDbg(model, path=run_path(), threshold_exploding=100.0) as dbg:
        train(model, opt, batches(300), dbg, grad_scale=lambda step: 1e5 if any(
            p <= step < p + 3 for p in pulses) else 1.0)
    run = dbg.run
    entries = {e.step for e in run.events if e.to_state == "grad_exploding"}
    exits = {e.step for e in run.events if e.kind == "grad" and e.to_state == "grad_healthy"}
    assert entries == set(pulses) and len(exits) == len(pulses)
    full = dict(run.series.get("full_stats"))
    escalated = [all(full[s] == 1.0 for s in range(p + 1, p + 21)) for p in pulses]
    assert escalated[:2] == [True, True] and not any(escalated[2:])
    assert sum(full[s] for s in range(pulses[2], 300)) < 40  # every step would be 190


def test_gradients_that_stay_above_the_limit_are_not_analysed_one_by_one(run_path, fetches):
    """A model whose gradients sit above threshold_exploding for the whole run (a limit set
    under every norm): once that regime has settled, its steps are triaged and queued like
    healthy ones (each step packed and analysed at once cost this model 1.17x instead of
    1.10x), while the regime itself is recorded and sampled as any lasting one."""
    calls = fetches
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path(), threshold_exploding=1e-6,
                   threshold_vanishing=1e-9) as dbg:
        train(model, opt, batches(200), dbg)
    run = dbg.run
    exploding = [e.step for e in run.events if e.to_state == "grad_exploding"]
    assert exploding and max(exploding) < 10
    assert all(e.to_state in ("grad_exploding", "loss_plateau") for e in run.events)
    # the full-statistics steps and the settling ones (after the regime began and after a
    # loss plateau, which is news too): every step would be 200
    assert len(calls) < 90


def test_the_abnormal_sampling_interval_doubles_while_nothing_changes():
    from neuraldbg.schedule import abnormal_interval

    assert [abnormal_interval(5, q) for q in (0, 19, 20, 39, 40, 60, 80, 10**9)] == [
        5, 5, 10, 10, 20, 40, 80, 80]
    assert abnormal_interval(1, 3) == 1 and abnormal_interval(1, 4) == 2
    assert abnormal_interval(25, -3) == 25  # an event analysed after the step began


def test_a_schedule_needs_sane_escalation_settings():
    from neuraldbg.schedule import Schedule, every

    with pytest.raises(ConfigError, match="abnormal_every"):
        Schedule(every(10), every(10), abnormal_every=0)
    with pytest.raises(ConfigError, match="escalate_steps"):
        Schedule(every(10), every(10), escalate_steps=-1)


def test_batched_analysis_matches_step_by_step_analysis(run_path, monkeypatch):
    """Quiet steps are analysed in batches: the run must be the same as analysing each at once."""
    import neuraldbg.detect.analyzer as analyze
    from neuraldbg.suite.demo import build_demo

    def record(batch: int):
        monkeypatch.setattr(analyze, "BATCH", batch)
        model, opt, data = build_demo(seed=0)
        with NeuralDbg(model, path=run_path()) as dbg:
            train(model, opt, data[:390], dbg)
        return dbg.run

    one, batched = record(1), record(32)
    assert one.events and one.first_nonfinite is not None
    # every-step signals give the same events at the same steps; activation statistics may be
    # sampled on other steps (escalation follows a relative gradient jump only once analysed)
    cheap = [k for k in EventKind if k not in (EventKind.ACTIVATION, EventKind.ACTIVATION_FINITE)]
    assert batched.events_of(cheap) == one.events_of(cheap)
    assert batched.first_nonfinite == one.first_nonfinite
    for column in one.series.columns:
        if column != "full_stats":
            assert same_values(batched.series.get(column), one.series.get(column)), column


class _Wrapper(nn.Module):
    """A LightningModule's shape: the loop calls training_step, which calls a submodule."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))

    def training_step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return nn.functional.mse_loss(self.net(x), y)


def _train_without_record_loss(opt, loss_of_step, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss_of_step().backward()
        opt.step()


def test_a_loop_that_never_calls_the_monitored_forward_is_told_how_to_attach(run_path):
    torch.manual_seed(0)
    model = _Wrapper()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    path = run_path()
    def step():
        return model.training_step(torch.randn(4, 8), torch.randn(4, 1))

    with pytest.warns(NeuralDbgWarning, match=r"no call of the model .* NeuralDbg\(model\.net\)"
                      ), NeuralDbg(model, path=path):
        _train_without_record_loss(opt, step, 3)
    run = load_run(path)
    assert len(run.series) == 0 and len(run.meta["warnings"]) == 1  # said once
    report = diagnose(run).format()
    assert report.startswith("Nothing to diagnose: no training step was recorded.")
    assert "NeuralDbg(model.net)" in report
    from causal.report import format_run

    assert "warning: neuraldbg: gradients reached" in format_run(run)  # neuraldbg show
    # attached to the module the loop calls, the same loop is recorded
    path = run_path()
    with NeuralDbg(model.net, path=path):
        _train_without_record_loss(opt, step, 3)
    assert len(load_run(path).series) == 3


def test_a_run_without_a_loss_is_told_to_record_one(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    path = run_path()
    with pytest.warns(NeuralDbgWarning, match=r"no loss was recorded in the first 10 steps"
                      ), NeuralDbg(model, path=path):
        _train_without_record_loss(
            opt, lambda: nn.functional.mse_loss(model(torch.randn(4, 8)), torch.randn(4, 1)), 12)
    run = load_run(path)
    assert len(run.series) == 12 and len(run.meta["warnings"]) == 1
    assert run.series.get("loss") == []


def _scaled_loop(model, dbg, scaler=None, clip=None, steps=6):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        x = torch.randn(8, 8)
        loss = nn.functional.mse_loss(model(x), x[:, :1])
        (scaler.scale(loss) if scaler is not None else loss).backward()
        dbg.record_loss(loss)
        if scaler is not None:
            scaler.unscale_(opt)
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()


def test_a_gradscaler_not_given_to_the_monitor_is_named(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    path = run_path()
    with pytest.warns(NeuralDbgWarning, match=r"shrank by exactly 65536.*scaler=scaler"), \
            NeuralDbg(model, path=path) as dbg:
        _scaled_loop(model, dbg, torch.amp.GradScaler("cpu"))
    assert len(load_run(path).meta["warnings"]) == 1
    # given to the monitor: nothing to say (pytest turns any warning into an error)
    with NeuralDbg(model, path=run_path(), scaler=(scaler := torch.amp.GradScaler("cpu"))
                   ) as dbg:
        _scaled_loop(model, dbg, scaler)


def test_clipped_gradients_are_not_taken_for_a_gradscaler(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    for clip in (1e-3, 0.25, 100.0):  # clipping hard, a little, not at all
        with NeuralDbg(model, path=run_path()) as dbg:
            _scaled_loop(model, dbg, clip=clip)


def _loop_steps(run_path, update) -> tuple[int, ...]:
    """The step labels of 10 loop iterations whose update `update(it, opt, model, loss_of)`
    makes (loss_of(x) runs a forward and returns the loss)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    path = run_path()
    with NeuralDbg(model, path=path) as dbg:
        for it in range(10):
            x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)

            def loss_of(x=x, y=y):
                return nn.functional.mse_loss(model(x), y)

            opt.zero_grad()
            loss = loss_of()
            loss.backward()
            dbg.record_loss(loss)
            update(it, opt, model, loss_of)
    return load_run(path).series.steps


def test_a_step_the_loop_skips_keeps_its_own_label(run_path):
    def skip_some(it, opt, model, loss_of):
        if it not in (3, 4):  # e.g. a non-finite gradient norm: no update this step
            opt.step()

    assert _loop_steps(run_path, skip_some) == tuple(range(10))


def test_a_two_pass_update_is_one_step_once_the_optimizer_is_known(run_path):
    def sam(it, opt, model, loss_of):  # sharpness-aware: perturb, a second pass, then update
        with torch.no_grad():
            eps = [0.01 * p.grad / (p.grad.norm() + 1e-12) for p in model.parameters()]
            for p, e in zip(model.parameters(), eps, strict=True):
                p.add_(e)
        opt.zero_grad()
        loss_of().backward()
        with torch.no_grad():
            for p, e in zip(model.parameters(), eps, strict=True):
                p.sub_(e)
        opt.step()

    # one step per iteration once the optimizer is known (its first step ends the first one:
    # before it, the perturbed pass cannot be told from a hand-written update's next step)
    assert _loop_steps(run_path, sam)[2:] == tuple(range(2, 11))
