"""Gated Multimodal Unit (GMU, Arevalo et al. 2017) trailer-genre classifier.

A visual descriptor (from per-frame CNN features) and an audio descriptor (from per-second
VGGish-style embeddings) are fused by a GMU:
    h_v = tanh(W_v x_v),  h_a = tanh(W_a x_a),  z = sigmoid(W_z [x_v; x_a]),
    h   = z * h_v + (1 - z) * h_a
followed by a linear classifier over genres (cross-entropy).

Mechanism: both descriptors are the *sum* over the clip of post-ReLU features (frames / audio
seconds); the reference implementation batch-normalises the two descriptors before the GMU, but
the port dropped those BatchNorm1d layers.
Both inputs are non-negative with a large common mean, so W_v x_v, W_t x_t and the gate
pre-activations are dominated by a per-unit offset of tens (sum of weights times the mean
feature), while the genre-dependent part is a few units: almost every tanh unit sits at exactly
+-1 (float32 tanh rounds to 1 beyond |x| ~ 9) and every gate at 0 or 1, whatever the movie.  The
GMU output is practically the same vector for every input, the gradient through
tanh'(x) = 1 - tanh(x)^2 is zero, and the classifier only sees a constant: the loss stays at
the genre-prior entropy.

ORIGIN: ``gmu.tanh_v`` -- the visual tanh of the GMU is the first activation that saturates
(the gate and the audio tanh saturate the same way right after it).

Fix: restore the BatchNorm1d on the two descriptors, giving O(1) pre-activations; nothing else
changes.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "gmu.tanh_v"
SOURCE = ("Gated Multimodal Units for Information Fusion (Arevalo et al., ICLR-W 2017), MM-IMDb; "
          "ports without the input batch-norm of sum-pooled frame / bag-of-words descriptors "
          "saturating the GMU tanh/sigmoid units")


class GMU(nn.Module):
    def __init__(self, dv, da, h):
        super().__init__()
        self.proj_v = nn.Linear(dv, h, bias=False)
        self.proj_a = nn.Linear(da, h, bias=False)
        self.gate = nn.Linear(dv + da, h, bias=False)
        self.tanh_v, self.tanh_a, self.sigm = nn.Tanh(), nn.Tanh(), nn.Sigmoid()

    def forward(self, xv, xa):
        hv = self.tanh_v(self.proj_v(xv))
        ha = self.tanh_a(self.proj_a(xa))
        z = self.sigm(self.gate(torch.cat([xv, xa], 1)))
        return z * hv + (1 - z) * ha


class GMUClassifier(nn.Module):
    def __init__(self, dv, da, h, n_cls, input_bn):
        super().__init__()
        self.input_bn = input_bn
        if input_bn:
            self.bn_v, self.bn_a = nn.BatchNorm1d(dv), nn.BatchNorm1d(da)
        self.gmu = GMU(dv, da, h)
        self.cls = nn.Linear(h, n_cls)

    def forward(self, frames, audio):
        xv, xa = frames.sum(1), audio.sum(1)            # clip-level sum pooling
        if self.input_bn:
            xv, xa = self.bn_v(xv), self.bn_a(xa)
        return self.cls(self.gmu(xv, xa))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=64, T=32, lr=0.05, bs=32, steps=100),
           dict(h=96, T=48, lr=0.03, bs=24, steps=110),
           dict(h=48, T=24, lr=0.08, bs=40, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8100 + seed)
    n_cls, dv, da = 5, 48, 32
    frame_proto = torch.randn(n_cls, dv, generator=g)
    audio_proto = torch.randn(n_cls, da, generator=g)

    model = GMUClassifier(dv, da, cfg["h"], n_cls, input_bn=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    batches = []
    bs, T = cfg["bs"], cfg["T"]
    for _ in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        frames = torch.relu(0.8 + 0.15 * frame_proto[y][:, None] + torch.randn(bs, T, dv, generator=g))
        audio = torch.relu(0.5 + 0.15 * audio_proto[y][:, None] + torch.randn(bs, T // 2, da, generator=g))
        batches.append(((frames, audio), y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
