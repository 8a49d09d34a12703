"""Temporal-neighbourhood contrastive pre-training (TNC / "same recording" InfoNCE) for
wearable sensor streams: an LSTM encodes a window, and two windows cut from the same
recording must match each other against the other recordings in the batch (cross-entropy
over cosine similarities / 0.1), Adam.

Mechanism: the channels are fed in raw physical units - barometric pressure in Pa
(~1.0e5), GPS altitude in m (~100-900) and vertical acceleration in m/s^2 (~9.8) - with no
per-channel standardisation.  The LSTM's gate and cell pre-activations W x are then
dominated by the huge, nearly common pressure offset (+-1e3..1e4 after the first
matmul): every gate is saturated at 0/1 and every tanh at +-1 with the *same* sign
pattern for every window, so the encoder outputs (almost) the same vector for every input.
All similarities are equal, the loss sits at log(batch) from step 0, and the saturated
gates pass no gradient back - the small per-recording differences that identify a
recording are invisible at this scale.

ORIGIN: ``encoder`` - the LSTM is the first module that receives the raw-unit inputs
(the inputs are the root; this is where they enter the model).

Fix: standardise each channel (subtract the dataset mean, divide by the dataset std)
before the encoder.  Same model, optimiser, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "encoder"
SOURCE = ("Temporal Neighborhood Coding (Tonekaboni et al. 2021) / same-recording InfoNCE on "
          "wearables; 'LSTM outputs identical for all inputs, loss stuck at log(N)' reports "
          "with raw barometer/altitude channels")


class WindowEncoder(nn.Module):
    def __init__(self, c_in, hid, n_layers, emb):
        super().__init__()
        self.encoder = nn.LSTM(c_in, hid, num_layers=n_layers, batch_first=True)
        self.proj = nn.Linear(hid, emb)

    def forward(self, wa, wb):
        _, (h, _) = self.encoder(torch.cat([wa, wb]))
        z = F.normalize(self.proj(h[-1]), dim=1)
        n = wa.shape[0]
        return z[:n] @ z[n:].T / 0.1


def sym_ce(logits, target):
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


MEAN = torch.tensor([101325.0, 480.0, 9.81])
STD = torch.tensor([420.0, 260.0, 1.1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hid = [32, 48, 64][seed % 3]
    n_layers = [1, 2, 1][seed % 3]
    emb = [32, 32, 48][seed % 3]
    bs = [32, 40, 48][seed % 3]
    lr = [2e-3, 1.5e-3, 1e-3][seed % 3]
    steps = 120
    win, rec_len = 24, 200
    t = torch.arange(rec_len).float().view(1, rec_len)
    batches = []
    for _ in range(steps):
        alt = 100 + 800 * torch.rand(bs, 1, generator=g)                 # site altitude, m
        weather = 300 * torch.randn(bs, 1, generator=g)                   # Pa
        climb = 0.3 * torch.randn(bs, 1, generator=g) * t                 # m along the recording
        altitude = alt + climb + 2.0 * torch.randn(bs, rec_len, generator=g)
        pressure = 101325 + weather - 12.0 * (altitude - 480) + 5.0 * torch.randn(bs, rec_len, generator=g)
        cadence = 0.5 + 1.5 * torch.rand(bs, 1, generator=g)
        acc = 9.81 + (0.3 + torch.rand(bs, 1, generator=g)) * torch.sin(cadence * t) \
            + 0.2 * torch.randn(bs, rec_len, generator=g)
        rec = torch.stack([pressure, altitude, acc], -1)                  # bs, T, 3 raw units
        if fixed:
            rec = (rec - MEAN) / STD
        sa = torch.randint(0, rec_len - win, (bs,), generator=g)
        sb = torch.randint(0, rec_len - win, (bs,), generator=g)
        wa = torch.stack([rec[i, sa[i]:sa[i] + win] for i in range(bs)])
        wb = torch.stack([rec[i, sb[i]:sb[i] + win] for i in range(bs)])
        batches.append(((wa, wb), torch.arange(bs)))
    model = WindowEncoder(3, hid, n_layers, emb)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=sym_ce, batches=batches, steps=steps)
