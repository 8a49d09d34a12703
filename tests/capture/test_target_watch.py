"""The README's loop passes no targets; the monitor finds them where the loss takes them, for
every common loss and for hand-written ones, and never takes anything else for them."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from neuraldbg import NeuralDbg

BATCH = 16

LOSSES = {
    "mse": (lambda out, y: F.mse_loss(out, y),
            lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "l1": (lambda out, y: F.l1_loss(out, y), lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "smooth_l1": (lambda out, y: F.smooth_l1_loss(out, y),
                  lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "huber": (lambda out, y: F.huber_loss(out, y),
              lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "bce": (lambda out, y: F.binary_cross_entropy(torch.sigmoid(out), y),
            lambda g: torch.rand(BATCH, 2, generator=g)),
    "bce_with_logits": (lambda out, y: F.binary_cross_entropy_with_logits(out, y),
                        lambda g: torch.rand(BATCH, 2, generator=g)),
    "cross_entropy_soft": (lambda out, y: F.cross_entropy(out, y),
                           lambda g: torch.softmax(torch.randn(BATCH, 2, generator=g), 1)),
    "nll_soft": (lambda out, y: -(y * F.log_softmax(out, 1)).sum(1).mean(),
                 lambda g: torch.softmax(torch.randn(BATCH, 2, generator=g), 1)),
    "poisson_nll": (lambda out, y: F.poisson_nll_loss(out, y),
                    lambda g: 50.0 * torch.rand(BATCH, 2, generator=g)),
    "gaussian_nll": (lambda out, y: F.gaussian_nll_loss(out, y, torch.ones_like(y)),
                     lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "kl_div": (lambda out, y: F.kl_div(F.log_softmax(out, 1), y, reduction="batchmean"),
               lambda g: torch.softmax(torch.randn(BATCH, 2, generator=g), 1)),
    "hand_squared": (lambda out, y: ((out - y) ** 2).mean(),
                     lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "hand_reversed": (lambda out, y: (y - out).abs().mean(),
                      lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
    "squeezed_output": (lambda out, y: F.mse_loss(out.sum(1), y),
                        lambda g: 300.0 * torch.randn(BATCH, generator=g)),
    "flattened": (lambda out, y: F.mse_loss(out.reshape(-1), y.reshape(-1)),
                  lambda g: 300.0 * torch.randn(BATCH, 2, generator=g)),
}


def _train(run_path, loss_fn, make_target, steps=6, after_backward=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(0)
    targets = []
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(steps):
            x, y = torch.randn(BATCH, 4, generator=g), make_target(g)
            targets.append(y)
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            if after_backward:  # the README's order
                loss.backward()
                dbg.record_loss(loss)
            else:
                dbg.record_loss(loss)
                loss.backward()
            opt.step()
    return dbg.run, targets


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_targets_a_loss_takes_are_recorded_without_being_passed(run_path, name):
    loss_fn, make_target = LOSSES[name]
    run, targets = _train(run_path, loss_fn, make_target)
    recorded = [v for _, v in run.series.get("target_max_abs")]
    assert len(recorded) == len(targets), f"{name}: targets seen on {len(recorded)} steps"
    assert recorded == pytest.approx([float(y.abs().max()) for y in targets], rel=1e-5)


def test_recording_the_loss_before_backward_finds_them_too(run_path):
    loss_fn, make_target = LOSSES["mse"]
    run, targets = _train(run_path, loss_fn, make_target, after_backward=False)
    assert len(run.series.get("target_max_abs")) == len(targets)


def test_class_labels_and_a_loss_without_targets_give_none(run_path):
    run, _ = _train(run_path, lambda out, y: F.cross_entropy(out, y),
                    lambda g: torch.randint(0, 2, (BATCH,), generator=g))
    assert run.series.get("target_max_abs") == []  # categories have no scale
    run, _ = _train(run_path, lambda out, y: out.pow(2).mean(), lambda g: None)
    assert run.series.get("target_max_abs") == []


def test_tensors_of_another_size_or_parameters_are_not_targets(run_path):
    scale = torch.full((2,), 5.0)  # broadcast over the batch: not a per-example target

    run, _ = _train(run_path, lambda out, y: ((out * scale) ** 2).mean() + 0 * y.sum(),
                    lambda g: torch.randn(3, 2, generator=g))
    assert run.series.get("target_max_abs") == []


def test_targets_the_loop_passes_win_and_stop_the_search(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(3):
            x, y, other = torch.randn(BATCH, 4), torch.randn(BATCH, 2), 100.0 * torch.ones(BATCH, 2)
            opt.zero_grad()
            loss = F.mse_loss(model(x), other)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    run = dbg.run
    assert all(v < 10 for _, v in run.series.get("target_max_abs"))


def test_training_is_unchanged_by_the_search(run_path):
    def losses(monitored):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(0)
        out = []
        dbg = NeuralDbg(model, path=run_path()) if monitored else None
        if dbg is not None:
            dbg.start()
        for _ in range(5):
            x, y = torch.randn(BATCH, 4, generator=g), torch.randn(BATCH, 2, generator=g)
            opt.zero_grad()
            loss = F.gaussian_nll_loss(model(x), y, torch.ones_like(y))
            loss.backward()
            if dbg is not None:
                dbg.record_loss(loss)
            opt.step()
            out.append(loss.item())
        if dbg is not None:
            dbg.close()
        return out, [p.detach().clone() for p in model.parameters()]

    (a, pa), (b, pb) = losses(False), losses(True)
    assert a == b and all(torch.equal(x, y) for x, y in zip(pa, pb, strict=True))


def test_the_watch_leaves_even_when_another_mode_came_on_after_it():
    from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack

    from neuraldbg.capture.target_watch import TargetWatch

    class Users(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    found = []
    watch = TargetWatch(found.append)
    out = nn.Linear(4, 2)(torch.randn(BATCH, 4))
    watch.begin(out)
    with Users() as users:
        F.mse_loss(out, torch.randn(BATCH, 2))
        watch.end()  # the user's mode is on top: the watch still comes off
        assert _get_current_function_mode_stack() == [users]
    assert _get_current_function_mode_stack() == [] and len(found) == 1


def test_a_target_made_where_a_freed_value_of_the_model_s_side_was_is_still_found():
    """The loss's intermediates are freed while the watch runs and the next tensor made often
    takes the freed one's id: the target must not inherit what was known about it (found on
    some runs and not on others)."""
    from neuraldbg.capture.target_watch import TargetWatch

    out = nn.Linear(4, 2)(torch.randn(BATCH, 4))
    y = torch.randn(BATCH, 2)
    reused = 0
    for _ in range(50):
        found = []
        watch = TargetWatch(found.append)
        watch.begin(out)
        scaled = out * 2.0  # of the model's side
        freed = id(scaled)
        del scaled
        target = y + 0.0  # computed from the data alone
        reused += id(target) == freed
        ((out - target) ** 2).mean()
        watch.end()
        assert len(found) == 1 and found[0] is y
    assert reused  # the case arose (CPython reuses a freed object's memory at once)


def test_weights_computed_from_a_detached_prediction_are_not_targets(run_path):
    """Advantage weights made from the model's own (detached) outputs are part of the loss,
    not data: a NaN born there is not a corrupt target."""

    def weighted(out, y):
        weights = torch.exp(out.detach()[:, :1] - out.detach()[:, 1:]).squeeze(1)
        return (weights * ((out[:, 0] - y) ** 2)).mean()

    run, targets = _train(run_path, weighted, lambda g: 300.0 * torch.randn(BATCH, generator=g))
    recorded = [v for _, v in run.series.get("target_max_abs")]
    assert recorded == pytest.approx([float(y.abs().max()) for y in targets], rel=1e-5)


def _normalised_mse(out, y):
    """A loss that standardises its targets first, with no eps: a flat row divides 0 by 0."""
    mean, std = y.mean(1, keepdim=True), y.std(1, keepdim=True)
    return F.mse_loss(out, (y - mean) / std)


def _labels_edited_at_step_3(edit):
    """Labels (BATCH x 2) for `_train`, those of step 3 changed in place by `edit`."""
    calls = [0]

    def make_target(g):
        y = torch.randn(BATCH, 2, generator=g)
        if calls[0] == 3:
            edit(y)
        calls[0] += 1
        return y
    return make_target


def test_a_target_the_loss_computes_is_traced_back_to_the_data(run_path):
    run, targets = _train(run_path, _normalised_mse,
                          lambda g: 300.0 * torch.randn(BATCH, 2, generator=g))
    recorded = [v for _, v in run.series.get("target_max_abs")]
    assert recorded == pytest.approx([float(y.abs().max()) for y in targets], rel=1e-5)
    assert run.meta["targets"] == "found"


def test_a_value_the_loss_made_non_finite_from_finite_labels_is_born_in_the_loss(run_path):
    """Standardising a flat row of labels gives 0/0 inside the loss: the labels the loop
    would have passed are finite, so the first NaN is the loss's, not the data's."""
    def flat_row(y):
        y[3] = 1.5  # its std is 0

    run, _ = _train(run_path, _normalised_mse, _labels_edited_at_step_3(flat_row))
    origin = run.first_nonfinite
    assert origin is not None and origin.step == 3
    assert origin.birth.direction == "loss"
    assert not any(v for _, v in run.series.get("target_nonfinite"))


def test_a_corrupt_label_behind_a_computed_target_is_still_the_data(run_path):
    def nan_label(y):
        y[3, 0] = float("nan")

    run, _ = _train(run_path, _normalised_mse, _labels_edited_at_step_3(nan_label))
    origin = run.first_nonfinite
    assert origin is not None and origin.step == 3
    assert origin.birth.direction == "input" and origin.birth.tensor == "target"


def test_targets_passed_by_the_loop_are_marked_given(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(3):
            x, y = torch.randn(BATCH, 4), torch.randn(BATCH, 2)
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    assert dbg.run.meta["targets"] == "given" and dbg.run.targets_given


def _label_entropy(labels: list[torch.Tensor]) -> float:
    """The Chao-Shen entropy of all the labels `labels`, negatives left out (written out here
    in float64, apart from the capture's own code)."""
    y = torch.cat([t.reshape(-1) for t in labels])
    y = y[y >= 0]
    counts = torch.bincount(y).double()
    counts = counts[counts > 0]
    n = float(y.numel())
    f1 = min(float((counts == 1).sum()), n - 1)
    p = (1 - f1 / n) * counts / n
    return float((-(p * p.log()) / (1 - (1 - p) ** n)).sum())


def _pooled(ys: list[torch.Tensor]) -> list[float]:
    """The entropy the capture records after each of `ys`: of every batch so far."""
    return [_label_entropy(ys[:k + 1]) for k in range(len(ys))]


LABEL_LOSSES = {
    "cross_entropy": lambda out, y: F.cross_entropy(out, y),
    "nll": lambda out, y: F.nll_loss(F.log_softmax(out, 1), y),
    "flattened": lambda out, y: F.cross_entropy(out.reshape(-1, 2), y.reshape(-1)),
    "gathered": lambda out, y: -F.log_softmax(out, 1).gather(1, y[:, None]).mean(),
    "arange_picked": lambda out, y: -F.log_softmax(out, 1)[torch.arange(len(y)), y].mean(),
    "ignore_index": lambda out, y: F.cross_entropy(out, y, ignore_index=-100),
}


@pytest.mark.parametrize("name", sorted(LABEL_LOSSES))
def test_class_labels_are_found_for_their_entropy(run_path, name):
    def labels(g):
        y = torch.randint(0, 2, (BATCH,), generator=g)
        if name == "ignore_index":
            y[:3] = -100
        return y

    run, targets = _train(run_path, LABEL_LOSSES[name], labels)
    full = {s for s, v in run.series.get("full_stats") if v == 1.0}
    recorded = dict(run.series.get("target_entropy"))
    assert full and set(recorded) == full, f"{name}: entropy on {sorted(recorded)}"
    for s, v in recorded.items():
        assert v == pytest.approx(_label_entropy([targets[k] for k in sorted(full) if k <= s]),
                                  rel=1e-5)


def test_given_labels_and_a_model_s_own_labels_give_their_entropy(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    ys = [torch.tensor([0, 1, 2, 2] * 4), torch.tensor([1] * 15 + [0])]
    with NeuralDbg(model, path=run_path()) as dbg:
        for y in ys:
            opt.zero_grad()
            loss = F.cross_entropy(model(torch.randn(BATCH, 4)), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    assert [v for _, v in dbg.run.series.get("target_entropy")] == pytest.approx(
        _pooled(ys), rel=1e-5)


def test_indices_the_loss_makes_and_integer_tensors_of_another_size_are_no_labels(run_path):
    run, _ = _train(run_path, lambda out, y: out[torch.arange(BATCH), torch.zeros(
        BATCH, dtype=torch.long)].mean() + 0 * y.sum(), lambda g: torch.randn(3, generator=g))
    assert run.series.get("target_entropy") == []


class _OwnLoss(nn.Module):
    """A model that computes its own loss from the `labels` it is passed (Hugging Face's way)."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 3)

    def forward(self, x, labels=None):
        logits = self.head(x)
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


def test_the_labels_a_model_computing_its_own_loss_is_passed_give_their_entropy(run_path):
    torch.manual_seed(0)
    model = _OwnLoss()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    ys = [torch.tensor([0, 1, 2, 2] * 4), torch.tensor([2] * 15 + [0])]
    with NeuralDbg(model, path=run_path()) as dbg:
        for y in ys:
            opt.zero_grad()
            model(torch.randn(BATCH, 4), labels=y)["loss"].backward()
            opt.step()
    assert [v for _, v in dbg.run.series.get("target_entropy")] == pytest.approx(
        _pooled(ys), rel=1e-5)


@pytest.mark.parametrize("recorded", ["out.loss", "out.loss / 2", "own loss on the logits"])
def test_recording_the_model_s_own_loss_keeps_its_labels(run_path, recorded):
    """The README's loop on a Hugging Face-style model: `record_loss(out["loss"])` is the
    model's loss, so the labels the model was given stay the step's labels; a loss the loop
    computes itself from the logits finds its labels where it takes them."""
    torch.manual_seed(0)
    model = _OwnLoss()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    ys = [torch.tensor([0, 1, 2, 2] * 4), torch.tensor([2] * 15 + [0]), torch.tensor([1] * 16)]
    with NeuralDbg(model, path=run_path()) as dbg:
        for y in ys:
            opt.zero_grad()
            out = model(torch.randn(BATCH, 4), labels=y)
            if recorded == "out.loss":
                loss = out["loss"]
            elif recorded == "out.loss / 2":
                loss = out["loss"] / 2
            else:
                loss = F.cross_entropy(out["logits"], y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    assert [v for _, v in dbg.run.series.get("target_entropy")] == pytest.approx(
        _pooled(ys), rel=1e-5)


def test_a_loss_that_is_not_the_model_s_drops_the_model_s_labels(run_path):
    """The loop records a loss of its own that takes no labels: the model's labels are not that
    loss's targets."""
    torch.manual_seed(0)
    model = _OwnLoss()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(3):
            opt.zero_grad()
            out = model(torch.randn(BATCH, 4), labels=torch.tensor([0, 1] * 8))
            loss = out["logits"].pow(2).mean()
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    assert dbg.run.series.get("target_entropy") == []


def test_the_smallest_value_of_inputs_and_targets_is_recorded(run_path):
    run, targets = _train(run_path, LOSSES["mse"][0], LOSSES["mse"][1], steps=4)
    assert [v for _, v in run.series.get("target_min")] == pytest.approx(
        [float(t.min()) for t in targets], rel=1e-5)
    assert len(run.series.get("input_min")) == 4
