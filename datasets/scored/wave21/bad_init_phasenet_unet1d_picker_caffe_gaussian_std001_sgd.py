"""PhaseNet-style 1D U-Net seismic phase picker (Zhu & Beroza 2019) without BatchNorm, initialised with N(0, 0.01).

Mechanism: the user ports an old Caffe/TF1 recipe and initialises every Conv1d with
nn.init.normal_(std=0.01), biases zero, and removes BatchNorm "for speed". For a kernel-7 conv
with 16-32 channels the He std would be ~0.1-0.2, so each layer shrinks the signal by ~10-20x:
after 6-8 convs the 3-channel waveform has vanished (~1e-8), the softmax over {noise, P, S} is
uniform, and the gradient reaching the early layers is equally tiny. SGD makes no progress:
the cross-entropy stays at its initial value (stall).

ORIGIN: `enc1` (first conv block: the geometric shrink starts at the very first badly initialised layer).
Fix: kaiming_normal_ (fan_in, relu) init for the convs; same SGD and lr.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "enc1"
SOURCE = "PhaseNet (Zhu & Beroza 2019, GJI); Caffe-era gaussian std=0.01 init reports of vanishing signal in deep plain conv nets (He et al. 2015)"


def cb(cin, cout, k=7):
    return nn.Sequential(nn.Conv1d(cin, cout, k, padding=k // 2), nn.ReLU())


class PhaseNet1D(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.enc1 = cb(3, w)
        self.enc2 = cb(w, w)
        self.down1 = nn.Sequential(nn.Conv1d(w, 2 * w, 4, stride=2, padding=1), nn.ReLU())
        self.enc3 = cb(2 * w, 2 * w)
        self.down2 = nn.Sequential(nn.Conv1d(2 * w, 4 * w, 4, stride=2, padding=1), nn.ReLU())
        self.bott = cb(4 * w, 4 * w)
        self.up2 = nn.Sequential(nn.ConvTranspose1d(4 * w, 2 * w, 4, stride=2, padding=1), nn.ReLU())
        self.dec2 = cb(4 * w, 2 * w)
        self.up1 = nn.Sequential(nn.ConvTranspose1d(2 * w, w, 4, stride=2, padding=1), nn.ReLU())
        self.dec1 = cb(2 * w, w)
        self.out = nn.Conv1d(w, 3, 1)

    def forward(self, x):
        e1 = self.enc2(self.enc1(x))
        e2 = self.enc3(self.down1(e1))
        b = self.bott(self.down2(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)  # logits (B, 3, T): noise, P, S


def _init(model, fixed):
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)


def _waveforms(g, b, T):
    t = torch.arange(T).float()
    p = torch.randint(T // 8, T // 2, (b, 1), generator=g).float()
    s = p + torch.randint(T // 8, T // 3, (b, 1), generator=g).float()
    x = 0.3 * torch.randn(b, 3, T, generator=g)
    env_p = (t >= p) * torch.exp(-(t - p).clamp(min=0) / 15)
    env_s = (t >= s) * torch.exp(-(t - s).clamp(min=0) / 25)
    carrier = torch.sin(t / 1.5)[None, :]
    x[:, 0] += 3 * env_p * carrier
    x[:, 1:] += (4 * env_s * carrier)[:, None]
    lab = torch.zeros(b, T, dtype=torch.long)
    lab[(t - p).abs() <= 3] = 1
    lab[(t - s).abs() <= 3] = 2
    x = x / x.std(dim=2, keepdim=True)
    return x, lab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [16, 24, 12][seed % 3]
    T = [128, 96, 160][seed % 3]
    bs = [16, 12, 16][seed % 3]
    steps = [80, 70, 90][seed % 3]
    lr = [0.05, 0.08, 0.04][seed % 3]
    model = PhaseNet1D(w)
    _init(model, fixed)
    batches = [_waveforms(g, bs, T) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    weights = torch.tensor([1.0, 10.0, 10.0])
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(weight=weights), batches=batches, steps=steps)
