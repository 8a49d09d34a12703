"""Healthy: teacher-forced GRU mel decoder on length-bucketed batches with a per-utterance summed loss.

What looks wrong but is not: a Tacotron-style autoregressive decoder (GRU over [previous mel
frame, upsampled phoneme encoding] -> Linear to 40 mel bins, teacher forcing, AdamW) is trained
with a Huber (SmoothL1) loss *summed* over frames and mel bins and averaged over utterances, as
several TTS code bases do.  Batches come from a length-bucketed sampler (24, 48 or 96 frames,
shuffled bucket order), so the loss value jumps by 2-4x whenever a long-bucket batch follows a
short one and drops again after it: a sawtooth with "spikes" that a naive monitor reads as
instability, and loss values in the hundreds-to-thousands at the start.  Per frame the error
falls steadily; there is nothing to fix.

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Shen et al. 2018, Tacotron 2 (teacher-forced autoregressive mel decoder); length-"
          "bucketed batch samplers in TTS/ASR toolkits (e.g. ESPnet/NeMo); losses summed over "
          "frames making batch loss proportional to utterance length")


class MelDecoder(nn.Module):
    def __init__(self, n_mels, n_phones, hid):
        super().__init__()
        self.phone_emb = nn.Embedding(n_phones, 32)
        self.gru = nn.GRU(n_mels + 32, hid, batch_first=True)
        self.out = nn.Linear(hid, n_mels)

    def forward(self, prev_mel, phones):              # (B, T, n_mels), (B, T)
        h, _ = self.gru(torch.cat([prev_mel, self.phone_emb(phones)], -1))
        return self.out(h)


def summed_huber(pred, target):
    return nn.functional.smooth_l1_loss(pred, target, reduction="sum") / pred.shape[0]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(18000 + seed)
    hid = [128, 96, 160][seed % 3]
    bs = [8, 12, 6][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    n_mels, n_phones, steps = 40, 30, 150

    tmpl = 2.0 * torch.randn(n_phones, n_mels, generator=g)
    tmpl = nn.functional.avg_pool1d(tmpl.unsqueeze(1), 5, 1, 2).squeeze(1)
    buckets = torch.tensor([24, 48, 96])
    batches = []
    for _ in range(steps):
        T = int(buckets[torch.randint(0, 3, (1,), generator=g)])
        n_ph = T // 4
        ph = torch.randint(0, n_phones, (bs, n_ph), generator=g).repeat_interleave(4, dim=1)
        mel = tmpl[ph]
        for _ in range(2):                            # smooth phone transitions
            mel = 0.5 * mel + 0.25 * (mel.roll(1, 1) + mel.roll(-1, 1))
        mel = mel + 0.1 * torch.randn(mel.shape, generator=g)
        prev = torch.cat([torch.zeros(bs, 1, n_mels), mel[:, :-1]], 1)
        batches.append(((prev, ph), mel))

    torch.manual_seed(seed)
    model = MelDecoder(n_mels, n_phones, hid)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=summed_huber, batches=batches, steps=steps)
