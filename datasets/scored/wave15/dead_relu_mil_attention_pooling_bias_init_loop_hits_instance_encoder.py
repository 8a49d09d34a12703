"""Attention-based multiple-instance learning (Ilse et al. 2018): a bag of instances
goes through a ReLU instance encoder, a tanh attention head pools the instance
embeddings, and a linear classifier scores the bag.

Mechanism: an init helper meant for the attention MLP ("start with negative biases so
attention is near-uniform") does `for m in model.modules(): if isinstance(m, nn.Linear):
nn.init.constant_(m.bias, -6.0)` and so also hits the instance encoder. With
standardised inputs the first encoder layer's pre-activations have std ~0.6, so a
bias of -6 puts every ReLU unit below zero for every instance from step 0. Dead
units receive no gradient and never revive, the bag embedding is constant and the
loss stays at the class prior.

ORIGIN: `encoder.1`, the first ReLU of the instance encoder, whose units die.

Fix: apply the -6 bias init to the attention MLP only (encoder keeps the default bias init).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "encoder.1"
SOURCE = ("Ilse et al., 'Attention-based Deep Multiple Instance Learning' (2018) reference "
          "model; bias-init loops over model.modules() hitting unintended layers (forum reports of 'all outputs constant').")


class AttentionMIL(nn.Module):
    def __init__(self, d_in, h, a):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.attn = nn.Sequential(nn.Linear(h, a), nn.Tanh(), nn.Linear(a, 1))
        self.cls = nn.Linear(h, 1)

    def forward(self, bags):                       # (B, N, d_in)
        hid = self.encoder(bags)
        w = torch.softmax(self.attn(hid), dim=1)    # (B, N, 1)
        return self.cls((w * hid).sum(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=32, a=16, bs=16, n=8, steps=100),
           dict(h=48, a=24, bs=12, n=16, steps=90),
           dict(h=24, a=16, bs=24, n=10, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    d_in = 12
    model = AttentionMIL(d_in, cfg["h"], cfg["a"])
    proto = torch.randn(d_in, generator=g) * 1.5
    batches = []
    for _ in range(cfg["steps"]):
        x = torch.randn(cfg["bs"], cfg["n"], d_in, generator=g)
        y = (torch.rand(cfg["bs"], generator=g) < 0.5).float()
        k = torch.randint(1, 4, (cfg["bs"],), generator=g)
        for b in range(cfg["bs"]):
            if y[b] > 0:
                x[b, : k[b]] += proto                # positive bags hold a few key instances
        batches.append((x, y))
    targets = model.attn.modules() if fixed else model.modules()
    for m in targets:
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.bias, -6.0)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=cfg["steps"])
