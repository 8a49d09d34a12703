"""GRU voice-activity detector whose in-model dB front-end feeds -100..0 dB straight into the GRU.

Mechanism: a streaming VAD takes mel *power* frames (the data loader is fine: values in
[1e-10, 1]) and does the log compression inside the model, ``10*log10(x + 1e-10)`` as in
``torchaudio.transforms.AmplitudeToDB``, so the exported model can run on raw mel power.  The
normalisation layer that should follow the dB conversion was left out.  Every dB feature is
~-60 +/- 20, so each GRU gate pre-activation is dominated by a common offset of tens of units:
the update/reset gates are pinned at 0 or 1 and the candidate tanh at +/-1 for every frame of
every clip.  The hidden state barely differs between speech and non-speech, and the gate derivatives
sigma'(z), tanh'(z) (down to ~1e-10) block the gradient to the GRU weights, so SGD+momentum
cannot move them; the frame classifier can only learn the speech prior and the BCE loss stalls
-- no non-finite value.

ORIGIN: ``gru`` -- the saturated gates and candidate of the GRU are where the information and the
gradient are lost; the dB front-end has no parameters and is numerically sound.

Fix: normalise after the dB conversion (a BatchNorm1d over mel bins, as torchaudio/SpeechBrain
front-ends do), so the GRU pre-activations are O(1).  Same data, GRU, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "gru"
SOURCE = ("torchaudio AmplitudeToDB inside a model without input normalisation (common in "
          "exported streaming VADs); saturated GRU gates with large-magnitude inputs (Pascanu et "
          "al. 2013; Cho et al. 2014 GRU gating)")


class ToDB(nn.Module):
    def forward(self, power):
        return 10.0 * torch.log10(power + 1e-10)


class GRUVAD(nn.Module):
    def __init__(self, n_mels, hid, with_norm):
        super().__init__()
        self.to_db = ToDB()
        self.norm = nn.BatchNorm1d(n_mels) if with_norm else nn.Identity()
        self.gru = nn.GRU(n_mels, hid, batch_first=True)
        self.head = nn.Linear(hid, 1)

    def forward(self, power):                         # (B, T, n_mels) mel power
        x = self.to_db(power)
        x = self.norm(x.transpose(1, 2)).transpose(1, 2)
        h, _ = self.gru(x)
        return self.head(h).squeeze(-1)               # frame logits


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(12000 + seed)
    hid = [64, 96, 48][seed % 3]
    bs = [16, 24, 12][seed % 3]
    lr = [0.1, 0.05, 0.15][seed % 3]
    n_mels, T, steps = 40, 60, 150

    formant = torch.softmax(torch.randn(6, n_mels, generator=g) * 2.0, -1)   # speech spectra
    batches = []
    for _ in range(steps):
        vad = torch.zeros(bs, T)
        for b in range(bs):
            for _ in range(2):
                t0 = int(torch.randint(0, T - 8, (1,), generator=g))
                vad[b, t0:t0 + int(torch.randint(6, 20, (1,), generator=g))] = 1.0
        noise_lvl = 10 ** (-6 + 2 * torch.rand(bs, 1, 1, generator=g))
        noise = noise_lvl * torch.rand(bs, T, n_mels, generator=g)
        ph = torch.randint(0, 6, (bs, T), generator=g)
        speech = 10 ** (-3 + 2 * torch.rand(bs, T, 1, generator=g)) * formant[ph]
        power = noise + vad.unsqueeze(-1) * speech
        batches.append((power, vad))

    torch.manual_seed(seed)
    model = GRUVAD(n_mels, hid, with_norm=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
