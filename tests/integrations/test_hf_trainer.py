"""A Hugging Face `Trainer` run under the monitor, with no loop of the user's own:
`with NeuralDbg(model): trainer.train()`. The model computes its loss from `labels` and the
Trainer passes `num_items_in_batch` (a 0-d float token count) to every forward; the run must
record the Trainer's own loss, take no input scale from that count, and train bit-identically."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
from transformers.utils import logging as hf_logging

from neuraldbg import NeuralDbg, diagnose, load_run


class _Tokens(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 32

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        ids = torch.randint(0, 64, (16,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "labels": ids}


def _train(model, out_dir, lr, **extra):
    args = TrainingArguments(
        output_dir=str(out_dir), per_device_train_batch_size=4, gradient_accumulation_steps=2,
        max_steps=8, learning_rate=lr, logging_steps=1, report_to=[], save_strategy="no",
        use_cpu=True, disable_tqdm=True, dataloader_num_workers=0, seed=0, **extra)
    trainer = Trainer(model=model, args=args, train_dataset=_Tokens())
    trainer.train()
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]


@pytest.fixture
def gpt2():
    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=64, n_positions=32,
                     bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg)


def test_a_trainer_run_is_recorded_with_the_trainers_loss(gpt2, run_path, tmp_path):
    plain = copy.deepcopy(gpt2)
    plain_losses = _train(plain, tmp_path / "plain", 1e-3)
    path = run_path()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the library's own deprecations
        with NeuralDbg(gpt2, path=path):
            losses = _train(gpt2, tmp_path / "monitored", 1e-3)
    assert losses == plain_losses
    for p, q in zip(plain.parameters(), gpt2.parameters(), strict=True):
        assert torch.equal(p, q)
    assert not gpt2._forward_hooks and not gpt2._forward_pre_hooks
    run = load_run(path)
    assert run.meta.get("internal_error") is None
    recorded = [v for _, v in run.series.get("loss")]
    assert recorded == pytest.approx(losses, rel=1e-5)  # 8 steps of 2 micro-batches each
    # token ids have no scale, and the token count the Trainer passes is not a batch
    assert run.series.get("input_max_abs") == []
    diagnosis = diagnose(run)
    assert diagnosis.healthy, diagnosis.format()


def test_a_trainer_run_at_a_far_too_high_lr_reads_as_such(gpt2, run_path, tmp_path):
    path = run_path()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with NeuralDbg(gpt2, path=path):
            _train(gpt2, tmp_path / "monitored", 30.0)
    hyps = diagnose(load_run(path))
    assert hyps and hyps[0].cause == "lr_too_high", hyps.format()


def test_the_trainers_mixed_precision_is_the_runs_precision(gpt2, run_path, tmp_path):
    """Accelerate enters autocast inside the model's forward (it wraps it), where the
    monitor's pre-hook cannot see it: learnt on the first full-statistics step, it holds for
    every step (the fp16 checks depend on it)."""
    path = run_path()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with NeuralDbg(gpt2, path=path):
            _train(gpt2, tmp_path / "monitored", 1e-3, bf16=True)
    run = load_run(path)
    assert [(c.step, c.value) for c in run.settings if c.key == "amp_dtype"] == [
        (0, "bfloat16")]


def _train_with_callback(model, out_dir, lr, callback):
    args = TrainingArguments(
        output_dir=str(out_dir), per_device_train_batch_size=4, max_steps=8, learning_rate=lr,
        logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, disable_tqdm=True,
        dataloader_num_workers=0, seed=0)
    trainer = Trainer(model=model, args=args, train_dataset=_Tokens(), callbacks=[callback])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        trainer.train()
    return trainer


def test_the_trainer_callback_records_diagnoses_and_logs(gpt2, run_path, tmp_path, caplog):
    from neuraldbg.integrations.transformers import NeuralDbgCallback

    callback = NeuralDbgCallback(path=run_path())
    with caplog.at_level("INFO", logger="neuraldbg"):
        trainer = _train_with_callback(gpt2, tmp_path / "out", 30.0, callback)
    run = callback.run
    assert len(run.series) == 8 and run.meta["status"] == "finished"
    assert not gpt2._forward_hooks and not gpt2._forward_pre_hooks  # detached at the end
    entry = trainer.state.log_history[-1]
    assert entry["neuraldbg/cause"] == "lr_too_high" and entry["neuraldbg/healthy"] is False
    assert entry["neuraldbg/report"].endswith(".html")
    assert "neuraldbg diagnosis of" in caplog.text and "Learning rate too high" in caplog.text
    assert callback.report_path == entry["neuraldbg/report"]


def test_the_trainer_stops_before_a_non_finite_update(gpt2, run_path, tmp_path):
    from neuraldbg import NonFiniteError
    from neuraldbg.integrations.transformers import NeuralDbgCallback

    callback = NeuralDbgCallback(path=run_path(), on_nonfinite="raise")
    with pytest.raises(NonFiniteError) as info:
        _train_with_callback(gpt2, tmp_path / "out", 1e9, callback)
    assert info.value.origin is not None and info.value.step == info.value.origin.step
    for p in gpt2.parameters():  # the non-finite update was not applied
        assert torch.isfinite(p).all()
    callback.dbg.close(error=info.value)  # Trainer callbacks are not told of the exception
    assert load_run(callback.dbg.path).meta["status"] == "failed"
