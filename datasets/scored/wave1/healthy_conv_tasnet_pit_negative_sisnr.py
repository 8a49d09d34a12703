"""Healthy run: a small Conv-TasNet (learned Conv1d encoder + ReLU, a temporal convolutional
separator of dilated depthwise-separable 1-D conv blocks with PReLU and global layer norm, sigmoid
masks for 2 speakers, transposed-conv decoder) separating 2-source mixtures, trained with the
utterance-level permutation-invariant negative SI-SNR loss and Adam. Things that look alarming but
are normal: the loss is NEGATIVE for most of the run (it is -SI-SNR in dB, so it starts around
+5..+20 dB -- far worse than the mixture -- and falls through zero to about -1..-3 dB within this
short run), it is computed with a max over the two speaker permutations (a non-smooth min/max in
the graph), and individual batches jump by several dB because some mixtures are much harder than
others. Nothing is wrong; fixed=True returns the same run.
"""
import itertools
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Luo & Mesgarani 2019 Conv-TasNet; Le Roux et al. 2019 'SDR - half-baked or well done?' "
          "(SI-SNR); Kolbaek et al. 2017 uPIT; asteroid's PITLossWrapper with negative SI-SDR")

N, L, S, T = 32, 16, 2, 1600


class GlobalLayerNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(1, c, 1))
        self.beta = nn.Parameter(torch.zeros(1, c, 1))

    def forward(self, x):
        m = x.mean(dim=(1, 2), keepdim=True)
        v = ((x - m) ** 2).mean(dim=(1, 2), keepdim=True)
        return self.gamma * (x - m) / torch.sqrt(v + 1e-8) + self.beta


class TCNBlock(nn.Module):
    def __init__(self, c, h, dil):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(c, h, 1), nn.PReLU(), GlobalLayerNorm(h),
                                 nn.Conv1d(h, h, 3, padding=dil, dilation=dil, groups=h), nn.PReLU(),
                                 GlobalLayerNorm(h), nn.Conv1d(h, c, 1))

    def forward(self, x):
        return x + self.net(x)


class ConvTasNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv1d(1, N, L, stride=L // 2, bias=False)
        self.norm = GlobalLayerNorm(N)
        self.bottleneck = nn.Conv1d(N, 32, 1)
        self.tcn = nn.Sequential(*[TCNBlock(32, 48, 2 ** i) for i in range(4)])
        self.mask = nn.Conv1d(32, S * N, 1)
        self.decoder = nn.ConvTranspose1d(N, 1, L, stride=L // 2, bias=False)

    def forward(self, mix):                                   # mix: (B, T)
        w = torch.relu(self.encoder(mix[:, None]))
        m = torch.sigmoid(self.mask(self.tcn(self.bottleneck(self.norm(w)))))
        m = m.view(mix.shape[0], S, N, -1)
        est = self.decoder((m * w[:, None]).flatten(0, 1)).view(mix.shape[0], S, -1)
        return est[..., :mix.shape[-1]]


def neg_sisnr_pit(est, ref, eps=1e-8):
    est = est - est.mean(-1, keepdim=True)
    ref = ref - ref.mean(-1, keepdim=True)

    def sisnr(e, r):
        proj = (e * r).sum(-1, keepdim=True) * r / ((r * r).sum(-1, keepdim=True) + eps)
        noise = e - proj
        return 10 * torch.log10((proj * proj).sum(-1) / ((noise * noise).sum(-1) + eps) + eps)

    perms = list(itertools.permutations(range(S)))
    scores = torch.stack([torch.stack([sisnr(est[:, i], ref[:, p[i]]) for i in range(S)], 1).mean(1)
                          for p in perms], 1)
    return -scores.max(1).values.mean()


def _source(g):
    t = torch.arange(T).float() / 8000.0
    f0 = 120 + 250 * float(torch.rand(1, generator=g))
    env = 0.6 + 0.4 * torch.sin(2 * math.pi * (2 + 6 * float(torch.rand(1, generator=g))) * t)
    sig = sum(torch.sin(2 * math.pi * k * f0 * t + float(torch.rand(1, generator=g)) * 6.28) / k for k in range(1, 5))
    return env * sig * (0.5 + float(torch.rand(1, generator=g)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(10):
        refs = torch.stack([torch.stack([_source(g) for _ in range(S)]) for _ in range(6)])
        batches.append((refs.sum(1), refs))
    model = ConvTasNet()
    opt = torch.optim.Adam(model.parameters(), lr=4e-3)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=neg_sisnr_pit, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
