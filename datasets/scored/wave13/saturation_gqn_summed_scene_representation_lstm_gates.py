"""Generative Query Network (Eslami et al. 2018), MLP version: a representation network encodes
each context (view image, viewpoint) pair, the per-view codes are aggregated into one scene
representation r, and an LSTM generator unrolled for a few steps, conditioned on r and the
query viewpoint, writes a canvas that predicts the query view (MSE on standardised pixels).
Adam.

Mechanism: GQN aggregates by *summing* the per-view representations, which is harmless with
the paper's handful of context views; here each scene comes with 64-128 context views and
the representation tower ends in a ReLU, so every code has a positive mean
and the sum r grows like K * mean -- tens to hundreds.  r goes straight into the generator's
LSTMCell: its input/forget/output gates (sigmoid) and cell candidate (tanh) sit at +-1 for
every scene, the pattern of saturated signs is the same for all scenes (dominated by the
common positive mean of r), the hidden state carries no scene information and the gate
derivatives are ~0, so neither the generator nor the representation tower receives a useful
gradient.  The prediction stays at the pixel mean (the zero-initialised canvas writer learns
nothing) and the loss stays at the pixel variance.

ORIGIN: ``generator_cell`` -- the LSTMCell whose sigmoid/tanh gates saturate on the summed r.

Fix: aggregate with the mean over context views instead of the sum (r of order 1); nothing
else changes.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "generator_cell"
SOURCE = ("Generative Query Network (Eslami et al. 2018, 'Neural scene representation and "
          "rendering'): representation r = sum_k f(x_k, v_k); reports of GQN-style models not "
          "learning when the number of context views is large (sum aggregation saturating the "
          "LSTM generator)")


class GQN(nn.Module):
    def __init__(self, d_img, d_view, r_dim, hid, L, aggregate):
        super().__init__()
        self.L, self.aggregate = L, aggregate
        self.representation = nn.Sequential(
            nn.Linear(d_img + d_view, 128), nn.ReLU(),
            nn.Linear(128, r_dim), nn.ReLU())
        self.generator_cell = nn.LSTMCell(r_dim + d_view, hid)
        self.writer = nn.Linear(hid, d_img)
        nn.init.zeros_(self.writer.weight)
        nn.init.zeros_(self.writer.bias)

    def forward(self, ctx_img, ctx_view, q_view):
        B, K, _ = ctx_img.shape
        codes = self.representation(torch.cat([ctx_img, ctx_view], -1))   # B x K x r
        r = codes.sum(1) if self.aggregate == "sum" else codes.mean(1)
        inp = torch.cat([r, q_view], -1)
        h = torch.zeros(B, self.generator_cell.hidden_size)
        c = torch.zeros_like(h)
        canvas = torch.zeros(B, ctx_img.shape[-1])
        for _ in range(self.L):
            h, c = self.generator_cell(inp, (h, c))
            canvas = canvas + self.writer(h)
        return canvas


def _render(scene, view, basis):
    # toy renderer: pixel intensities are a smooth function of scene params and view angle
    ang = view[..., :1]
    feat = torch.cat([scene * torch.cos(ang), scene * torch.sin(ang), view], -1)
    return torch.tanh(feat @ basis)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(K=96, r=64, hid=64, L=4, bs=32, lr=1e-3, steps=120, scene=4),
           dict(K=128, r=48, hid=96, L=3, bs=24, lr=2e-3, steps=100, scene=3),
           dict(K=64, r=96, hid=64, L=5, bs=48, lr=1e-3, steps=140, scene=5)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(515 + seed)
    d_img, d_view = 36, 3
    basis = torch.randn(2 * cfg["scene"] + d_view, d_img, generator=g) * 0.7
    model = GQN(d_img, d_view, cfg["r"], cfg["hid"], cfg["L"], "mean" if fixed else "sum")

    def views(n):
        a = torch.rand(n, generator=g) * 2 * math.pi
        e = torch.rand(n, generator=g) - 0.5
        return torch.stack([a, torch.cos(a), e], -1)

    # pixel statistics for standardisation
    probe_s = torch.randn(2000, cfg["scene"], generator=g)
    probe = _render(probe_s, views(2000), basis)
    mu, sd = probe.mean(0), probe.std(0)
    batches = []
    for _ in range(cfg["steps"]):
        B, K = cfg["bs"], cfg["K"]
        scene = torch.randn(B, cfg["scene"], generator=g)
        cv = views(B * K).view(B, K, d_view)
        ci = (_render(scene[:, None, :].expand(B, K, -1), cv, basis) - mu) / sd
        qv = views(B)
        qi = (_render(scene, qv, basis) - mu) / sd
        batches.append(((ci, cv, qv), qi))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
