"""Encrypted-traffic classification: a small post-LN Transformer encoder reads the first
32 packets of a flow as tokens (packet size, direction, log inter-arrival time, TCP/UDP
flag, all standardised) and classifies the application type (video streaming, VoIP, web
browsing, bulk transfer, chat, online gaming); mean pooling, cross-entropy, SGD with
momentum.

Mechanism: the Transformer replaced a 1-D CNN flow classifier and inherited its optimiser
settings unchanged: SGD, momentum 0.9, lr 0.15..0.25, no warmup. Those are fine for the
BN-equipped CNN but far above what the attention/feed-forward weights of a post-LN
Transformer tolerate: median update/weight ratios of the weight matrices are ~2e-2..3e-2
(up to ~0.3) per step, against ~1e-3..3e-3 at the corrected lr. The first steps
still make fast progress (the classes are easy to separate), then the oversized,
momentum-amplified updates blow up the attention logits and the feed-forward weights: the
loss climbs back towards ln 6 = 1.79 (0.9..1.8 at the end) and keeps bouncing there for
the rest of the run, ending 1.2..3.8 times higher than its best early value; nothing becomes non-finite at
these values (at lr >= 0.5 it overflows to NaN instead). The same model at lr 0.01 trains
to near-zero loss.

ORIGIN = None: the step size is too large for every parameter at once; no module is where
it starts.

Fix: lr 0.008..0.012 with the same SGD momentum; same model, data, batches and steps.
"""
import math

import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = (
    "Transformer-based encrypted traffic classification (e.g. ET-BERT, FlowTransformer) "
    "on packet-size/IAT sequences replacing Deep Packet style 1-D CNNs; Xiong et al., "
    "'On Layer Normalization in the Transformer Architecture' (ICML 2020) and Liu et al. "
    "2020 ('Understanding the difficulty of training Transformers'): post-LN "
    "Transformers are unstable at large step sizes without warmup."
)

N_PKT = 32
APPS = 6


def _flow(g, app):
    """(size_bytes, direction, iat_ms, is_udp) for N_PKT packets of one flow."""
    r = lambda *s: torch.rand(*s, generator=g)
    n = N_PKT
    if app == 0:      # video streaming: big downstream bursts, small acks
        down = (r(n) < 0.85).float()
        size = down * (1200 + 300 * r(n)) + (1 - down) * (60 + 20 * r(n))
        iat = torch.where(r(n) < 0.1, 200 + 400 * r(n), 0.5 + 2 * r(n))
        udp = torch.zeros(n)
    elif app == 1:    # VoIP: constant small packets both ways every 20 ms
        down = (torch.arange(n) % 2).float()
        size = 160 + 40 * r(n)
        iat = 20 + 2 * torch.randn(n, generator=g)
        udp = torch.ones(n)
    elif app == 2:    # web: request / response exchange, mixed sizes
        down = (r(n) < 0.6).float()
        size = down * (200 + 1200 * r(n)) + (1 - down) * (300 + 400 * r(n))
        iat = 1 + 80 * r(n) ** 3
        udp = torch.zeros(n)
    elif app == 3:    # bulk transfer: full-size upstream segments, tiny gaps
        down = (r(n) < 0.1).float()
        size = (1 - down) * (1400 + 60 * r(n)) + down * 60
        iat = 0.1 + 0.5 * r(n)
        udp = torch.zeros(n)
    elif app == 4:    # chat: sparse small messages, long idle gaps
        down = (r(n) < 0.5).float()
        size = 80 + 300 * r(n) ** 2
        iat = 100 + 3000 * r(n) ** 2
        udp = torch.zeros(n)
    else:             # online gaming: small UDP, ~30 Hz ticks, both ways
        down = (r(n) < 0.55).float()
        size = 60 + 120 * r(n)
        iat = 33 + 8 * torch.randn(n, generator=g)
        udp = torch.ones(n)
    iat = iat.clamp_min(0.05)
    return torch.stack([(size - 600) / 500, down * 2 - 1, (torch.log(iat) - 2) / 2, udp * 2 - 1], -1)


def _batch(g, n):
    y = torch.randint(0, APPS, (n,), generator=g)
    x = torch.stack([_flow(g, int(a)) for a in y])
    return x.float(), y


class FlowTransformer(nn.Module):
    def __init__(self, d_model, layers, ff):
        super().__init__()
        self.embed = nn.Linear(4, d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(N_PKT, d_model))
        layer = nn.TransformerEncoderLayer(d_model, 4, ff, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, APPS)

    def forward(self, x):
        h = self.encoder(self.embed(x) + self.pos)
        return self.head(h.mean(1))


def build(seed: int, fixed: bool = False) -> dict:
    d_model = [32, 48, 64][seed % 3]
    layers = [2, 3, 2][seed % 3]
    ff = [64, 96, 128][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = ([0.01, 0.008, 0.012] if fixed else [0.2, 0.15, 0.25])[seed % 3]
    steps = 120

    g = torch.Generator().manual_seed(443 + seed)
    batches = [_batch(g, batch) for _ in range(steps)]

    torch.manual_seed(seed)
    model = FlowTransformer(d_model, layers, ff)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps)
