"""Quiet steps run without hooks inside the model; a step that turns non-finite is run again
(`neuraldbg/nonfinite/replay.py`) to find the first non-finite module output, leaving the run
unchanged."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from causal.schema.run import LOSS, Direction
from neuraldbg import NeuralDbg
from neuraldbg.capture.forward_calls import forward_call, weights_version
from neuraldbg.schedule import Schedule, every


class HookProbe(nn.Module):
    """Identity that notes, at each call, how many forward hooks its parent's modules have."""

    def __init__(self, watched: list[nn.Module]) -> None:
        super().__init__()
        self.watched = watched
        self.seen: list[int] = []

    def forward(self, x):
        self.seen.append(sum(len(m._forward_hooks) for m in self.watched))
        return x


class Blowup(nn.Module):
    """x * 1e30 squared (inf) once switched on from the training loop: a forward-born inf in a
    module without parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.on = False

    def forward(self, x):
        return (x * 1e30) ** 2 if self.on else x


def _model() -> nn.Sequential:
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(0.3), Blowup(),
                         nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))


def _train(model, steps, dbg=None, on_at=None, item=False):
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        model[3].on = on_at is not None and step >= on_at
        x, y = torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if dbg is not None:
            dbg.record_loss(loss.item() if item else loss)
        opt.step()


def _square_loss_steps(model, dbg, steps, batch=4, before_step=None):
    """`steps` SGD steps on the mean square of the output of random batches, recorded."""
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        if before_step is not None:
            before_step(step)
        opt.zero_grad()
        loss = model(torch.randn(batch, 8, generator=g)).pow(2).mean()
        loss.backward()
        dbg.record_loss(loss)
        opt.step()


def test_quiet_steps_run_without_hooks_inside_the_model(run_path):
    torch.manual_seed(0)
    body = [nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1)]
    probe = HookProbe(body)
    model = nn.Sequential(body[0], body[1], probe, body[2])
    sched = Schedule(activations=every(10, first=2), weights=every(10), escalate_steps=0)
    with NeuralDbg(model, path=run_path(), preset=sched) as dbg:
        _square_loss_steps(model, dbg, 12)
    hooked = [n > 0 for n in probe.seen]
    # full statistics on steps 0, 1 and 10 (and while the layer DAG is still being learnt)
    assert hooked[0] and hooked[1] and hooked[10]
    assert not any(hooked[3:10]) and not hooked[11]
    assert all(not m._forward_hooks for m in model.modules())  # all removed on exit
    # a schedule that keeps every output keeps its hooks on every step
    probe.seen.clear()
    keep = Schedule(activations=every(10, first=2), weights=every(10), stash=True)
    with NeuralDbg(model, path=run_path(), preset=keep) as dbg:
        _square_loss_steps(model, dbg, 5)
    assert all(n > 0 for n in probe.seen)


@pytest.mark.parametrize("item", [False, True])
def test_a_quiet_step_turning_non_finite_is_replayed_exactly(run_path, item):
    """Dropout before the blow-up: the replay needs the pass's own random state."""
    torch.manual_seed(3)
    model = _model()
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, 14, dbg, on_at=9, item=item)
    ev = dbg.run.first_nonfinite
    assert ev is not None
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (9, "3", Direction.FORWARD)
    assert ev.metadata["replayed"] is True and ev.metadata["exact"] is True
    assert ev.metadata["inputs_finite"] is True and ev.to_state == "inf"
    from causal.report import describe_origin

    text = describe_origin(dbg.run, ev)
    assert text.startswith("step 9 . 3 (Blowup): first inf born in the forward pass")
    assert "running the step's forward pass again" in text


@pytest.mark.parametrize("batchnorm", [False, True])
def test_the_replay_leaves_the_run_bit_identical(run_path, batchnorm):
    """Same weights (NaN where NaN), buffers (BatchNorm running statistics) and random state
    as an unmonitored run."""
    def build():
        torch.manual_seed(3)
        m = _model()
        if batchnorm:  # keep the module indices: the BatchNorm goes inside the first Linear's slot
            m[0] = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16))
        return m

    m1 = build()
    torch.manual_seed(11)
    _train(m1, 14, on_at=9)
    rng1 = torch.get_rng_state()
    m2 = build()
    torch.manual_seed(11)
    with NeuralDbg(m2, path=run_path()) as dbg:
        _train(m2, 14, dbg, on_at=9)
    assert torch.equal(torch.get_rng_state(), rng1)
    for (n, a), b in zip(m1.state_dict().items(), m2.state_dict().values(), strict=True):
        assert torch.equal(a.isnan(), b.isnan()), n
        assert torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)), n
    assert dbg.run.first_nonfinite.metadata.get("replayed") is True


def test_a_backward_born_value_on_a_quiet_step_stays_backward(run_path):
    class SqrtAbs(nn.Module):
        def forward(self, x):
            return torch.sqrt(x.abs())  # finite forward at 0, NaN gradient

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 4), SqrtAbs(), nn.Linear(4, 1))

    def zero_unit_0(step):
        if step == 6:
            with torch.no_grad():  # unit 0 outputs exact zeros from here on
                model[0].weight[0].zero_()
                model[0].bias[0] = 0.0

    with NeuralDbg(model, path=run_path()) as dbg:
        _square_loss_steps(model, dbg, 8, batch=16, before_step=zero_unit_0)
    ev = dbg.run.first_nonfinite
    # the forward replay finds nothing; the backward one names the sqrt, not the Linear before
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (6, "1", Direction.BACKWARD)
    assert ev.metadata["replayed"] is True


def test_a_loss_born_value_on_a_quiet_step_is_the_loss(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(8):
            opt.zero_grad()
            out = model(torch.randn(16, 8, generator=g))
            loss = out.pow(2).mean() + (torch.log(out.detach().min() * 0) if step == 5 else 0)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (5, LOSS, Direction.LOSS)


def test_a_forward_whose_input_changed_in_place_is_not_run_again():
    x = torch.randn(3, 2)
    w = nn.Linear(2, 2)
    params = list(w.parameters())
    call = forward_call((x,), {"mask": torch.ones(3)}, "cpu", weights_version(params))
    assert call.repeatable(weights_version(params))
    x.mul_(2)
    assert not call.repeatable(weights_version(params))
    call = forward_call((x,), {}, "cpu", weights_version(params))
    with torch.no_grad():
        w.weight.add_(1.0)  # an optimizer's in-place update
    assert not call.repeatable(weights_version(params))


def test_float32_rerun_sees_the_weights_of_the_failing_forward(run_path):
    """Under float16 autocast without a GradScaler the optimizer applies the non-finite
    gradient in the same step; the hunt runs before that, so the float32 re-run of a layer
    with weights still has an answer."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Linear(8, 1))
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(8):
            if step == 5:  # outputs of about 8 * 0.5 * 3e4: past float16's 65504
                with torch.no_grad():
                    model[2].weight.fill_(3e4)
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                out = model(torch.randn(16, 8, generator=g))
            loss = nn.functional.mse_loss(out.float(), torch.zeros(16, 1))
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    assert not torch.isfinite(model[2].weight).all()  # the update was applied
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (5, "2", Direction.FORWARD)
    assert ev.metadata["replayed"] is True
    assert ev.metadata["fp32_finite"] is True  # an overflow of the half format
    assert ev.metadata["fp32_max_abs"] > 65504


def test_the_replay_puts_back_what_a_forward_rebinds_on_its_module(run_path):
    """A module that counts its calls (a common way to inject a fault at a given step) sees
    the same calls with and without the monitor, although the failing step ran again."""
    class Counting(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0
            self.seen: list[int] = []

        def forward(self, x):
            self.calls += 1
            self.seen.append(self.calls)  # a list it appends to in place
            if self.calls == 9:
                self.first_bad = True  # an attribute a forward creates
            return x * float("inf") if self.calls >= 9 else x

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), Counting(), nn.Linear(8, 1))
    with NeuralDbg(model, path=run_path()) as dbg:
        _square_loss_steps(model, dbg, 12)
    assert model[1].calls == 12 and model[1].first_bad is True
    assert model[1].seen == list(range(1, 13))
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (8, "1", Direction.FORWARD)
    assert ev.metadata["replayed"] is True


def test_grad_scaler_skips_are_replayed_without_changing_the_run(run_path):
    """Early GradScaler overflows (a healthy run) start a hunt, and so a replay, on each new
    episode: the run still ends bit-identical to an unmonitored one, dropout included."""
    def run(dbg_path=None):
        torch.manual_seed(5)
        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 40)
        g = torch.Generator().manual_seed(0)
        dbg = NeuralDbg(model, path=dbg_path, scaler=scaler) if dbg_path else None
        if dbg is not None:
            dbg.start()
        for _ in range(30):
            x, y = torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                out = model(x)
            loss = nn.functional.mse_loss(out.float(), y)
            scaler.scale(loss).backward()
            if dbg is not None:
                dbg.record_loss(loss)
            scaler.step(opt)
            scaler.update()
        if dbg is not None:
            dbg.close()
        return model, scaler.get_scale(), dbg

    m1, s1, _ = run()
    m2, s2, dbg = run(run_path())
    assert s1 == s2 < 2.0 ** 40  # the scaler did skip steps
    for (n, a), b in zip(m1.state_dict().items(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b), n
    assert dbg.run.first_nonfinite is not None


def test_two_forward_passes_in_one_step_are_both_run_again(run_path):
    """A siamese-style step: two passes, the second one turns non-finite."""
    torch.manual_seed(0)
    model = _model()
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(10):
            opt.zero_grad()
            model[3].on = False
            a = model(torch.randn(8, 8, generator=g))
            model[3].on = step == 6  # only the second pass of step 6 blows up
            b = model(torch.randn(8, 8, generator=g))
            loss = (a - b).pow(2).mean()
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (6, "3", Direction.FORWARD)
    assert ev.metadata["replayed"] is True


def test_lbfgs_passes_with_other_weights_are_not_run_again(run_path, monkeypatch):
    """LBFGS updates the weights between the closure's passes of one step: only the passes
    of the current weights may be run again (the earlier ones would not repeat)."""
    import neuraldbg.step_capture as capture

    replayed = []
    run_again = capture.run_again
    monkeypatch.setattr(capture, "run_again",
                        lambda model, call: replayed.append(call) or run_again(model, call))
    torch.manual_seed(0)
    model = _model()
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=4)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(8):
            x, y = torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)
            passes = []

            def closure(x=x, y=y, step=step, passes=passes):
                passes.append(1)
                model[3].on = step == 5 and len(passes) >= 2  # the second pass of step 5
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                dbg.record_loss(loss)
                return loss

            opt.step(closure)
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (5, "3", Direction.FORWARD)
    assert ev.metadata["replayed"] is True
    assert len(replayed) == 1  # the second pass; the first one had the weights before the update


def test_a_hugging_face_model_called_with_keywords_is_run_again(run_path):
    """GPT-2 from a config (no download), called as model(input_ids=..., labels=...) and
    returning a ModelOutput with dropout on: an inf injected by the user's own forward hook
    in one MLP from step 6 on is found there, on a quiet step."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                  n_positions=32, bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(cfg)
    model.train()
    state = {"on": False}
    target = model.transformer.h[1].mlp.c_fc
    target.register_forward_hook(lambda m, i, o: o * float("inf") if state["on"] else None)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(8):
            state["on"] = step >= 6
            ids = torch.randint(0, 100, (2, 8), generator=g)
            opt.zero_grad()
            out = model(input_ids=ids, labels=ids)
            out.loss.backward()
            dbg.record_loss(out.loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (
        6, "transformer.h.1.mlp.c_fc", Direction.FORWARD)
    assert ev.metadata["replayed"] is True


def test_preserved_restores_lists_of_tensors_by_identity():
    from neuraldbg.capture.state_preservation import preserved

    class Keeps(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.outs: list[torch.Tensor] = [torch.ones(3)]
            self.named: dict[str, torch.Tensor] = {"a": torch.ones(2)}

        def forward(self, x):
            self.outs.append(x)
            self.outs[0] = x * 2  # same length as before for the dict below
            self.named["a"] = x
            return x

    m = Keeps()
    first, a = m.outs[0], m.named["a"]
    with preserved(m):
        m(torch.randn(3))
    assert len(m.outs) == 1 and m.outs[0] is first and m.named == {"a": a}


class Noisy(nn.Module):
    """Adds noise drawn from a generator the module keeps (a VAE's reparameterisation)."""

    def __init__(self) -> None:
        super().__init__()
        self.noise = torch.Generator().manual_seed(5)

    def forward(self, x):
        return x + 0.1 * torch.randn(x.shape, generator=self.noise)


def test_the_replay_puts_back_the_generators_modules_keep(run_path):
    """The replayed pass draws the same noise as the original one, and the module's generator
    is left where the original pass left it."""
    def build():
        torch.manual_seed(3)
        m = _model()
        m[2] = Noisy()  # in the Dropout's slot, before the blow-up
        return m

    m1 = build()
    _train(m1, 14, on_at=9)
    m2 = build()
    with NeuralDbg(m2, path=run_path()) as dbg:
        _train(m2, 14, dbg, on_at=9)
    assert torch.equal(m1[2].noise.get_state(), m2[2].noise.get_state())
    for (n, a), b in zip(m1.state_dict().items(), m2.state_dict().values(), strict=True):
        assert torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)), n
    ev = dbg.run.first_nonfinite
    assert ev.layer_name == "3" and ev.metadata.get("replayed") is True


def test_a_loss_born_value_names_the_layer_whose_outputs_sat_on_its_singular_point(run_path):
    """A hand-written BCE, -(y log p + (1 - y) log(1 - p)), on a sigmoid output that rounds to
    exactly 1.0: 0 * log(0) is NaN in the loss; the origin names the Sigmoid and the count."""
    from causal.causes.unsafe_op import UnsafeOp

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(8):
            if step == 5:
                with torch.no_grad():
                    model[2].bias.fill_(100.0)  # sigmoid(100) == 1.0 in float32
            opt.zero_grad()
            p = model(torch.randn(16, 8, generator=g))
            y = torch.ones_like(p)
            loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (5, LOSS, Direction.LOSS)
    assert ev.metadata["output_layer"] == "3" and ev.metadata["output_ones"] == 16
    loc = UnsafeOp().localize(dbg.run)
    assert (loc.layer, loc.step) == ("3", 5)
    assert UnsafeOp().describe(dbg.run, loc) == (
        "An unsafe op in the loss produced nan at step 5: 0 output values of '3' (Sigmoid) were "
        "exactly 0 and 16 exactly 1 (log(p), log(1 - p) or a division there is inf)")


class FaultOnCall(nn.Module):
    """inf on exactly its `at`-th call, counted by a buffer or by a plain attribute: a forward
    that changes its own state (a counter driving a schedule)."""

    def __init__(self, at: int, buffer: bool) -> None:
        super().__init__()
        self.at, self.buffer = at, buffer
        if buffer:
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        else:
            self.calls = 0

    def forward(self, x):
        if isinstance(x, torch.fx.Proxy):  # the layer DAG's trace is not a call
            return x
        self.calls += 1
        return x * float("inf") if int(self.calls) == self.at else x


@pytest.mark.parametrize("buffer", [True, False])
def test_a_replayed_pass_starts_from_the_state_its_forward_changes(run_path, buffer):
    """The fault fires on call 8 only; replayed from the state left after that call (9), the
    pass would be clean and the origin lost."""
    def build():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 8), nn.Tanh(), FaultOnCall(8, buffer), nn.Linear(8, 1))

    m1 = build()
    with torch.no_grad():
        for _ in range(10):
            m1(torch.randn(2, 8))
    calls_after_10 = int(m1[2].calls)
    m2 = build()
    with NeuralDbg(m2, path=run_path()) as dbg:
        _square_loss_steps(m2, dbg, 10)
    assert int(m2[2].calls) == calls_after_10 == 10  # the replay left the counter as it was
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (7, "2", Direction.FORWARD)
    assert ev.metadata.get("replayed") is True
