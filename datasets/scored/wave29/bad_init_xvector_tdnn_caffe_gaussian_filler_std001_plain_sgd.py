"""x-vector speaker-ID TDNN initialised with a Caffe-style Gaussian filler (std 0.01).

Mechanism: a Kaldi-style x-vector network (dilated Conv1d frame layers, statistics pooling,
two segment-level Linear layers, softmax over training speakers) is ported to PyTorch and an
``init_weights`` helper copied from an old Caffe prototxt sets every Conv1d/Linear weight to
N(0, 0.01^2) with zero bias.  With fan-ins of 120-384 each ReLU layer multiplies the activation
scale by 0.01*sqrt(fan_in/2) ~ 0.08-0.14, so after 5-7 frame layers the pooled statistics are
~1e-6 and the logits are ~0 for every utterance.  Gradients shrink by the same factor on the way
back, plain SGD cannot move the early layers, and the cross-entropy sits at log(n_speakers):
a stall from step 0, no non-finite value.

ORIGIN: ``frame.0`` -- the first TDNN layer is where the geometric shrinkage starts (it already
cuts the input scale ~10x and every later layer compounds it); no later layer is the cause.

Fix: Kaiming (He) normal init for the ReLU layers (fan_in), as the x-vector recipes do.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "frame.0"
SOURCE = ("Caffe 'gaussian' weight filler std=0.01 reused in deep nets without BN (He et al. 2015, "
          "'Delving deep into rectifiers', sec. 2.2 on 22-layer nets that do not converge with "
          "std 0.01); Kaldi x-vector TDNN (Snyder et al. 2018) topology")


class XVector(nn.Module):
    def __init__(self, n_mels, width, n_frame, n_spk, emb=64):
        super().__init__()
        layers = []
        specs = [(5, 1), (3, 2), (3, 3), (3, 1), (1, 1), (1, 1), (1, 1)][:n_frame]
        c_in = n_mels
        for k, d in specs:
            layers += [nn.Conv1d(c_in, width, k, dilation=d), nn.ReLU()]
            c_in = width
        self.frame = nn.Sequential(*layers)
        self.seg1 = nn.Linear(2 * width, emb)
        self.seg2 = nn.Linear(emb, emb)
        self.out = nn.Linear(emb, n_spk)

    def forward(self, x):
        h = self.frame(x)
        mu = h.mean(-1)
        sd = torch.sqrt(h.var(-1, unbiased=False).clamp_min(1e-5))  # Kaldi-style variance floor
        e = F.relu(self.seg1(torch.cat([mu, sd], -1)))
        e = F.relu(self.seg2(e))
        return self.out(e)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    n_frame = [5, 6, 7][seed % 3]
    width = [128, 96, 112][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    n_spk, n_mels, T, steps = 10, 24, 48, 150

    # speaker templates: smooth spectral envelopes + a speaker-specific modulation rate
    base = torch.randn(n_spk, n_mels, 1, generator=g)
    base = F.avg_pool1d(base.transpose(1, 2), 3, 1, 1).transpose(1, 2) * 1.5
    rate = 0.2 + 0.6 * torch.rand(n_spk, generator=g)
    t = torch.arange(T).float()
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_spk, (bs,), generator=g)
        phase = 6.28 * torch.rand(bs, 1, 1, generator=g)
        mod = torch.sin(rate[y].view(bs, 1, 1) * t.view(1, 1, T) + phase)
        x = base[y] * (1 + 0.5 * mod) + 0.8 * torch.randn(bs, n_mels, T, generator=g)
        batches.append((x, y))

    torch.manual_seed(seed)
    model = XVector(n_mels, width, n_frame, n_spk)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    if fixed:  # keep the classifier layer at a moderate scale, as recipes do
        nn.init.xavier_uniform_(model.out.weight)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
