"""Healthy: FastSpeech-style non-autoregressive acoustic model (phoneme embedding ->
conv encoder -> length regulator expanding each phoneme by its duration -> conv
decoder -> 20-bin log-mel frames, L1 loss), trained under float16 autocast on CPU
with a GradScaler whose init_scale is set high (2**24, as some TTS recipes do to
avoid gradient underflow on small mel losses).

Why it looks alarming: with the scale at 2**24 the scaled half-precision gradients of
the first steps overflow, so the scaler finds inf gradients and skips those
optimizer steps while halving the scale: the loss is flat for the first few steps,
inf values appear in the gradients, and the activations run in float16. That is the
GradScaler doing its job - it backs off until the scaled gradients fit, then every
step is applied and the L1 falls steadily. No cause: nothing to fix (ORIGIN None).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("FastSpeech / FastSpeech2 AMP training (NVIDIA NeMo / ESPnet recipes with "
          "torch.cuda.amp.GradScaler); 'Gradient overflow. Skipping step, reducing loss "
          "scale' messages at the start of training are expected")

N_PHON = 24
N_MEL = 20


class FastSpeechLite(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.emb = nn.Embedding(N_PHON, d)
        self.encoder = nn.Sequential(nn.Conv1d(d, d, k, padding=k // 2), nn.ReLU(),
                                     nn.Conv1d(d, d, k, padding=k // 2), nn.ReLU())
        self.decoder = nn.Sequential(nn.Conv1d(d, d, k, padding=k // 2), nn.ReLU(),
                                     nn.Conv1d(d, d, k, padding=k // 2), nn.ReLU(),
                                     nn.Conv1d(d, N_MEL, 1))

    def forward(self, phon, dur):
        h = self.encoder(self.emb(phon).transpose(1, 2)).transpose(1, 2)   # (B, P, d)
        # length regulator: repeat every phoneme state by its duration (fixed per batch)
        frames = torch.stack([torch.repeat_interleave(h[b], dur[b], dim=0)
                              for b in range(h.shape[0])])
        return self.decoder(frames.transpose(1, 2)).transpose(1, 2)       # (B, T, mel)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(18000 + seed)
    d = [48, 32, 64][seed % 3]
    k = [5, 3, 5][seed % 3]
    bs = [6, 8, 4][seed % 3]
    lr = [1e-3, 1.5e-3, 8e-4][seed % 3]
    P = 10
    steps = 120
    model = FastSpeechLite(d, k)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=50)
    # each phoneme: a spectral envelope (formant-like bumps) in log-mel, with a
    # coarticulation ramp from the previous phoneme
    bins = torch.arange(N_MEL).float()
    cent = torch.rand(N_PHON, 2, generator=g) * N_MEL
    env = (torch.exp(-(bins - cent[:, :1]) ** 2 / 6) + 0.7 * torch.exp(-(bins - cent[:, 1:]) ** 2 / 3))
    templates = 2.0 * env - 4.0                                              # log-mel
    batches = []
    for _ in range(steps):
        phon = torch.randint(0, N_PHON, (bs, P), generator=g)
        base = torch.randint(2, 6, (P,), generator=g)
        dur = base.unsqueeze(0).expand(bs, P).contiguous()   # shared total length per batch
        mels = []
        for b in range(bs):
            cur = torch.repeat_interleave(templates[phon[b]], dur[b], dim=0)
            prev = torch.repeat_interleave(templates[torch.roll(phon[b], 1)], dur[b], dim=0)
            pos = torch.cat([torch.linspace(0, 1, int(n)) for n in dur[b]]).unsqueeze(1)
            w = torch.clamp(pos * 2, max=1.0)
            mels.append(w * cur + (1 - w) * prev + 0.1 * torch.randn(cur.shape, generator=g))
        batches.append(((phon, dur), torch.stack(mels)))

    def loss_fn(pred, target):
        return F.l1_loss(pred.float(), target)

    return {"model": model, "optimizer": opt, "loss_fn": loss_fn, "batches": batches,
            "steps": steps, "amp_dtype": torch.float16, "scaler": scaler}
