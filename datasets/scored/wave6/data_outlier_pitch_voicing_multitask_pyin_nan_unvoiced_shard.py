"""A frame-level pitch tracker (1-D conv stack over log-spectrogram frames) has two heads returned as
a dict, {log_f0, voiced_logit}, trained against a dict target {f0_hz, voiced}: BCE for voicing plus
an MSE on log f0 that is masked to voiced frames by multiplying with the voicing label. The in-house
f0 extractor fills unvoiced frames with an interpolated f0, so log(f0) is always finite and the
multiplicative mask is harmless. One shard of the corpus was re-extracted with librosa.pyin, which
returns NaN for unvoiced frames; the batch drawn from that shard (step 70) has NaN f0 targets on its
unvoiced frames. NaN * 0 is NaN, so the masked MSE is NaN at that step, Adagrad's accumulators and
then all weights become NaN and the run never recovers. The fix cleans that shard's batch (NaN f0
on unvoiced frames replaced by the interpolated f0, as in the rest of the data); the model, loss and
optimiser are unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("librosa.pyin documents f0 = NaN for unvoiced frames (fill_na=np.nan default); common "
          "bug reports of NaN losses when mixing pyin-extracted f0 with interpolated f0 and masking "
          "by multiplication (NaN * 0 = NaN).")

F = 40
T = 50
BAD_STEP = 70


class PitchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(F, 48, 5, padding=2), nn.ReLU(),
                                  nn.Conv1d(48, 48, 5, padding=2), nn.ReLU())
        self.f0_head = nn.Conv1d(48, 1, 1)
        self.voice_head = nn.Conv1d(48, 1, 1)

    def forward(self, spec):                       # spec: (B, F, T)
        h = self.conv(spec)
        return {"log_f0": self.f0_head(h).squeeze(1), "voiced_logit": self.voice_head(h).squeeze(1)}


LOG_F0_MEAN, LOG_F0_STD = math.log(160.0), 0.4


def _batch(g, B, pyin_style):
    tt = torch.arange(T).float()
    base = 160 * torch.exp(0.4 * torch.randn(B, 1, generator=g))
    f0 = base * (1 + 0.1 * torch.sin(2 * math.pi * tt / (20 + 20 * torch.rand(B, 1, generator=g))))
    # voiced segments: one unvoiced gap per utterance
    a = torch.randint(5, 25, (B, 1), generator=g)
    b = a + torch.randint(5, 20, (B, 1), generator=g)
    voiced = ((tt < a) | (tt >= b)).float()
    # log-frequency spectrogram: harmonic peak at log f0 for voiced frames, noise otherwise
    bins = torch.linspace(math.log(60), math.log(600), F).view(1, F, 1)
    peak = torch.exp(-((bins - torch.log(f0).unsqueeze(1)) ** 2) / 0.01)
    spec = voiced.unsqueeze(1) * peak + 0.1 * torch.rand(B, F, T, generator=g)
    spec = torch.log(spec + 1e-2)
    f0_target = f0.clone()
    if pyin_style:
        f0_target = torch.where(voiced > 0, f0_target, torch.full_like(f0_target, float("nan")))
    return spec, {"f0_hz": f0_target, "voiced": voiced}


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1200 + seed)
    steps = 160
    batches = [_batch(g, 16, pyin_style=(s == BAD_STEP and not fixed)) for s in range(steps)]
    model = PitchNet()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.02)
    bce = nn.BCEWithLogitsLoss()

    def loss_fn(out, tgt):
        v = tgt["voiced"]
        z = (torch.log(tgt["f0_hz"]) - LOG_F0_MEAN) / LOG_F0_STD
        f0_loss = (((out["log_f0"] - z) ** 2) * v).sum() / v.sum().clamp_min(1.0)
        return f0_loss + bce(out["voiced_logit"], v)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
