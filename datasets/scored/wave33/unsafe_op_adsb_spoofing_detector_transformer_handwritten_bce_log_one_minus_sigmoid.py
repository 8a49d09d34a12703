"""ADS-B spoofing / ghost-aircraft detector: small transformer over a track's messages,
hand-written binary cross-entropy.

Mechanism: a ground-station network flags spoofed tracks from per-message consistency
features (multilateration TDOA residual, RSSI vs. reported range, reported-vs-derived speed,
NIC/NACp, inter-message interval jitter, ...). The loss is written by hand as
``-(y * log(p) + (1 - y) * log(1 - p))`` with ``p = sigmoid(logit)``. Training is calm; the pre-LN
encoder keeps the magnitude of the inconsistency in its residual stream, so while the subtle
injectors keep the gradients alive, the crude replays (inconsistencies many times larger) get
ever larger logits. Once a spoofed track gets a logit above ~16.6, ``sigmoid`` returns exactly 1.0 in float32, ``log(1 - p)`` is ``-inf`` and
``(1 - y) * log(1 - p)`` is ``0 * -inf = NaN``: the loss (and every gradient) turns NaN in
the middle of an otherwise healthy run, even though that sample is classified correctly.

ORIGIN: ``head`` - the logit layer whose output is fed to the unsafe sigmoid/log pair; the
unsafe op itself is in the loss, right after this module.

Fix: compute the same loss with the fused, numerically stable
``F.binary_cross_entropy_with_logits`` (log-sigmoid form); model, data and optimiser unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = ("Known pattern: hand-written BCE on sigmoid outputs gives NaN once sigmoid saturates to "
          "exactly 1.0/0.0 in float32 (PyTorch docs for BCEWithLogitsLoss: 'more numerically "
          "stable'; many forum reports of 'loss becomes nan after some epochs'); ADS-B spoofing "
          "detection with sequence models on OpenSky data.")


class SpoofDetector(nn.Module):
    def __init__(self, d_feat, d_model, n_layers):
        super().__init__()
        self.embed = nn.Linear(d_feat, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 1)

    def forward(self, x):
        h = self.encoder(self.embed(x))
        return self.head(h.mean(1)).squeeze(-1)


def _tracks(g, n, T=24, d=6):
    y = (torch.rand(n, generator=g) < 0.4).float()
    x = torch.randn(n, T, d, generator=g)
    # spoofed tracks: TDOA residual and RSSI-range mismatch are biased, interval jitter is low;
    # the size of the inconsistency is heavy-tailed (subtle injectors vs. crude replays from a
    # transmitter hundreds of km away)
    shift = torch.tensor([1.0, 0.8, 0.5, 0.0, -0.4, 0.0])
    blatancy = 0.3 + torch.rand(n, generator=g) ** 3 * 6
    x = x + (y * blatancy)[:, None, None] * shift
    return x, y


def _bce_by_hand(logit, y):
    p = torch.sigmoid(logit)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


def _bce_fused(logit, y):
    return F.binary_cross_entropy_with_logits(logit, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6060 + seed)
    d_model = [32, 48, 64][seed % 3]
    n_layers = [2, 1, 2][seed % 3]
    lr = [5e-3, 4e-3, 2.5e-3][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 200
    model = SpoofDetector(6, d_model, n_layers)
    batches = [_tracks(g, bs) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=_bce_fused if fixed else _bce_by_hand,
                batches=batches, steps=steps)
