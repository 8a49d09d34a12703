"""What the monitor reads off the model's own call: which argument is the input batch, and a
loss the model returns itself (Hugging Face style), with or without the user's record_loss."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuraldbg import NeuralDbg, load_run
from neuraldbg.capture.model_io import ArgNames, batch_input, model_loss, model_targets

IDS = torch.randint(0, 10, (4, 6))
X = torch.randn(4, 6)


class _Masked(nn.Module):
    def forward(self, input_ids, attention_mask=None, labels=None, num_items_in_batch=None):
        return input_ids


class _Scaled(nn.Module):
    def forward(self, t, x):
        return x


def test_the_input_batch_is_the_first_float_tensor_with_a_batch_dimension():
    assert batch_input((X,), {}, ArgNames(("x",))) is X
    # a 0-d tensor is a setting (a token count, a timestep), not the batch
    assert batch_input((torch.tensor(0.5), X), {}, ArgNames.of(_Scaled())) is X
    assert batch_input((), {"input_ids": IDS, "num_items_in_batch": torch.tensor(24.0),
                            "inputs_embeds": X}, ArgNames()) is X
    # token ids are categories: no input batch to measure
    assert batch_input((IDS,), {"num_items_in_batch": torch.tensor(24.0)}, ArgNames()) is None
    # nested: a dict batch's keys name its parts
    assert batch_input(({"mask": torch.ones(4, 6), "image": X},), {}, ArgNames(("batch",))) is X
    assert batch_input(([IDS, X],), {}, ArgNames()) is X
    assert batch_input((torch.empty(0, 3), X), {}, ArgNames()) is X


def test_masks_and_labels_are_not_the_input_batch():
    additive = torch.zeros(4, 6).masked_fill(torch.rand(4, 6) > 0.5, float("-inf"))
    names = ArgNames.of(_Masked())
    assert names.names == ("input_ids", "attention_mask", "labels", "num_items_in_batch")
    assert batch_input((IDS, additive), {}, names) is None
    assert batch_input((IDS,), {"attention_mask": additive, "labels": X}, names) is None
    assert batch_input((additive, X), {}, ArgNames(("src_mask", "src"))) is X
    assert batch_input((X,), {}, ArgNames(("key_padding_mask",))) is None
    assert batch_input((X,), {}, ArgNames(("masked_images",))) is X  # an input, not a mask


def test_a_loss_the_model_returns_is_found_in_a_mapping_output():
    w = torch.ones(3, requires_grad=True)
    loss = (w * 2).sum()
    assert model_loss({"loss": loss, "logits": w}) is loss
    assert model_loss(loss) is None  # a plain tensor output is the model's output, not a loss
    assert model_loss({"logits": w}) is None
    assert model_loss({"loss": loss.detach()}) is None  # no gradient: not what trains it
    assert model_loss({"loss": torch.ones(2, requires_grad=True) * 2}) is None
    assert model_loss((loss, w)) is None


class _SelfLoss(nn.Module):
    """A model that computes its own loss from `labels`, as Hugging Face models do."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, x, labels=None, num_items_in_batch=None):
        logits = self.net(x)
        out = {"logits": logits}
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels, reduction="sum")
            n = num_items_in_batch if num_items_in_batch is not None else labels.numel()
            out["loss"] = loss / n
        return out


def _train(run_path, *, user_scale=None, accumulate=1, steps=6):
    torch.manual_seed(0)
    model = _SelfLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(8, 6, generator=g), torch.randint(0, 2, (8,), generator=g))
               for _ in range(steps * accumulate)]
    seen = []
    path = run_path()
    with NeuralDbg(model, path=path) as dbg:
        for s in range(steps):
            opt.zero_grad()
            total = 0.0
            for x, y in batches[s * accumulate:(s + 1) * accumulate]:
                kw = {"num_items_in_batch": torch.tensor(8.0 * accumulate)} if accumulate > 1 \
                    else {}
                out = model(x, labels=y, **kw)
                out["loss"].backward()
                total += out["loss"].item()
                if user_scale is not None:
                    dbg.record_loss(out["loss"] * user_scale)
            seen.append(total)
            opt.step()
    return load_run(path), seen


def test_a_loss_the_model_returns_is_the_step_loss_until_the_user_records_one(run_path):
    run, seen = _train(run_path)
    assert [v for _, v in run.series.get("loss")] == pytest.approx(seen, rel=1e-6)
    # the model's input batch is measured; its labels are not taken for it
    assert [v for _, v in run.series.get("input_max_abs")]
    # the user's record_loss wins, from its first call on (the same step included)
    run, seen = _train(run_path, user_scale=3.0)
    assert [v for _, v in run.series.get("loss")] == pytest.approx([3 * s for s in seen],
                                                                   rel=1e-6)


def test_micro_batch_shares_of_a_trainer_loss_add_up_to_the_step_loss(run_path):
    """Hugging Face's Trainer divides each micro-batch's summed loss by the step's item count
    (num_items_in_batch): the step's loss is their sum, as the Trainer logs it."""
    run, seen = _train(run_path, accumulate=3)
    assert [v for _, v in run.series.get("loss")] == pytest.approx(seen, rel=1e-6)


class _SelfRegressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x, labels=None):
        out = {"logits": self.net(x)}
        if labels is not None:
            out["loss"] = nn.functional.mse_loss(out["logits"].squeeze(-1), labels)
        return out


def test_float_labels_of_a_model_that_computes_its_loss_are_its_targets(run_path):
    def train(user: bool) -> object:
        torch.manual_seed(0)
        model = _SelfRegressor()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        path = run_path()
        with NeuralDbg(model, path=path) as dbg:
            for _ in range(4):
                opt.zero_grad()
                x = torch.randn(8, 6)
                out = model(x, labels=500.0 + x[:, 0])
                out["loss"].backward()
                if user:
                    dbg.record_loss(out["loss"])
                opt.step()
        return load_run(path)

    targets = [v for _, v in train(user=False).series.get("target_max_abs")]
    assert len(targets) == 4 and all(400 < v < 510 for v in targets)
    # the loss the user records is the model's own: its labels stay the step's targets
    assert [v for _, v in train(user=True).series.get("target_max_abs")] == targets
    assert model_targets({"labels": IDS}) is None  # class labels: categories, no scale
