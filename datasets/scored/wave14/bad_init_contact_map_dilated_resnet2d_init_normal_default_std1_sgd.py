"""Protein contact-map predictor (trRosetta / RaptorX-style 2-D dilated ResNet, norm-free)
whose Conv2d weights are initialised with ``nn.init.normal_(m.weight)``.

Mechanism
---------
The user wanted a "Gaussian init" for the 2-D trunk and wrote ``nn.init.normal_(m.weight)``
inside the usual ``for m in self.modules()`` loop, forgetting that the default std is 1.0
(the intended value was the fan-in scaled std).  The trunk has no InstanceNorm (removed to
save memory), so every 3x3 conv multiplies the activation scale by roughly
sqrt(9 * C) ~ 12 (x sqrt(2C) for the 1x1 pair projection).  At step 0 the contact logits
are already in the hundreds to 1e5 (BCE loss 5e2-1e5 instead of ~0.69); the BCE gradient is
bounded, but back-propagated through the same huge weights it yields enormous weight
gradients; with plain SGD+momentum the first update is far larger than the weights
themselves, the loss jumps to 1e9-1e33 and the next forward overflows float32 -> NaN.

ORIGIN
------
``pair_in`` is the first Conv2d, i.e. the first module whose weights come from the broken
init loop; the activation scale explodes from there geometrically through the blocks (the
1-D sequence embedding is an nn.Conv1d and keeps PyTorch's default init).

Fix
---
``nn.init.kaiming_normal_(m.weight, nonlinearity="relu")`` (fan-in scaled) in the same loop;
the 0.1 down-scaling of each residual branch's last conv is kept identical in both runs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "pair_in"
SOURCE = ("trRosetta / RaptorX-Contact style dilated 2-D ResNet for contact prediction; "
          "common forum bug: nn.init.normal_(w) with default std=1 in an init loop, "
          "norm-free trunk -> loss is nan after the first step")


class ResBlock2d(nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=dilation, dilation=dilation)
        self.conv2 = nn.Conv2d(c, c, 3, padding=dilation, dilation=dilation)

    def forward(self, z):
        h = F.elu(self.conv1(z))
        h = self.conv2(h)
        return F.elu(z + h)


class ContactNet(nn.Module):
    def __init__(self, c1d, c2d, dilations, fixed):
        super().__init__()
        self.embed = nn.Conv1d(21, c1d, 5, padding=2)
        self.pair_in = nn.Conv2d(2 * c1d, c2d, 1)
        self.blocks = nn.ModuleList([ResBlock2d(c2d, d) for d in dilations])
        self.head = nn.Conv2d(c2d, 1, 3, padding=1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight)  # BUG: default std=1.0
                nn.init.zeros_(m.bias)
        with torch.no_grad():
            for b in self.blocks:
                b.conv2.weight.mul_(0.1)

    def forward(self, seq):
        h = F.elu(self.embed(seq))                      # (B, c1d, L)
        L = h.shape[-1]
        pair = torch.cat([h.unsqueeze(3).expand(-1, -1, -1, L),
                          h.unsqueeze(2).expand(-1, -1, L, -1)], dim=1)
        z = self.pair_in(pair)
        for blk in self.blocks:
            z = blk(z)
        logits = self.head(z).squeeze(1)
        return 0.5 * (logits + logits.transpose(1, 2))


def _make_batch(g, B, L):
    aa = torch.randint(0, 20, (B, L), generator=g)
    onehot = F.one_hot(aa, 21).float().transpose(1, 2)
    idx = torch.arange(L)
    sep = (idx[:, None] - idx[None, :]).abs()
    # "fold" rule: local backbone contacts + hydrophobic core contacts (aa 0..5)
    hyd = (aa < 6)
    core = hyd.unsqueeze(2) & hyd.unsqueeze(1) & (sep >= 3).unsqueeze(0) & (sep <= 12).unsqueeze(0)
    contacts = ((sep <= 1).unsqueeze(0) | core).float()
    return onehot, contacts


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(L=24, c1d=12, c2d=16, dil=(1, 2, 4), B=8, lr=0.01, steps=60),
           dict(L=28, c1d=16, c2d=12, dil=(1, 2, 4, 8), B=6, lr=0.005, steps=50),
           dict(L=20, c1d=8, c2d=20, dil=(1, 2, 4, 1, 2), B=10, lr=0.02, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = ContactNet(cfg["c1d"], cfg["c2d"], cfg["dil"], fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = [_make_batch(g, cfg["B"], cfg["L"]) for _ in range(cfg["steps"])]
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
