"""Audio-visual event (AVE) classifier with late fusion.

An audio branch (BN-free 1-D conv stack over log-mel frames, PANNs-style but small) and a visual
branch (MLP over pre-extracted frame features) each produce class logits; the fused prediction is
their sum, trained with cross-entropy over the event categories.

Mechanism: the audio branch was written with a custom ``init_layer`` helper that calls
``nn.init.normal_(layer.weight)`` -- the default std of 1.0 instead of a fan-in scaled std.  With
fan-in 3*C (C = 32..64 channels) and ReLU, each conv multiplies the activation scale by
~sqrt(3*C/2) ~ 10, so after 4-6 convs the audio logits are 1e4..1e6 at step 0 (the cross-entropy
is in the tens of thousands).  The gradient w.r.t. the last audio layer is proportional to those
huge activations; the first SGD steps multiply the weights by large factors, the logits overflow
and the loss goes to inf/NaN within a few steps.

ORIGIN: ``audio.0`` -- the first conv of the audio branch, where the std-1 weights start the
geometric growth (the visual branch and the rest use PyTorch defaults).

Fix: ``nn.init.kaiming_normal_(w, nonlinearity="relu")`` inside ``init_layer``.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "audio.0"
SOURCE = ("Audio-Visual Event localisation (Tian et al. 2018) late-fusion baselines; custom "
          "init_layer helpers calling nn.init.normal_ without std (default 1.0) on a BN-free "
          "conv stack")


def init_layer(layer, fixed):
    if fixed:
        nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
    else:
        nn.init.normal_(layer.weight)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)


class AVELateFusion(nn.Module):
    def __init__(self, n_mels, vis_dim, width, depth, n_cls, fixed):
        super().__init__()
        layers, c = [], n_mels
        for i in range(depth):
            conv = nn.Conv1d(c, width, 3, padding=1)
            init_layer(conv, fixed)
            layers += [conv, nn.ReLU()]
            c = width
        layers += [nn.AdaptiveAvgPool1d(1), nn.Flatten()]
        head = nn.Linear(width, n_cls)
        init_layer(head, fixed)
        self.audio = nn.Sequential(*layers, head)
        self.visual = nn.Sequential(nn.Linear(vis_dim, 64), nn.ReLU(), nn.Linear(64, n_cls))

    def forward(self, logmel, vis):
        return self.audio(logmel) + self.visual(vis)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=48, depth=5, lr=0.01, bs=32, steps=80),
           dict(width=64, depth=4, lr=0.005, bs=24, steps=90),
           dict(width=32, depth=6, lr=0.02, bs=40, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3100 + seed)
    n_cls, n_mels, T, vis_dim = 10, 32, 40, 64
    mel_tpl = torch.randn(n_cls, n_mels, 1, generator=g)
    vis_tpl = torch.randn(n_cls, vis_dim, generator=g)

    model = AVELateFusion(n_mels, vis_dim, cfg["width"], cfg["depth"], n_cls, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        env = torch.rand(bs, 1, T, generator=g)
        logmel = mel_tpl[y] * env + 0.5 * torch.randn(bs, n_mels, T, generator=g)
        vis = vis_tpl[y] + 2.0 * torch.randn(bs, vis_dim, generator=g)
        batches.append(((logmel, vis), y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
