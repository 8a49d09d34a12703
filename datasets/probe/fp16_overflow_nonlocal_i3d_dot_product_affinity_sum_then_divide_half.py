"""Small 3-D ResNet video classifier (C2D/I3D style: (3,3,3) stem, BN, residual 3-D
bottlenecks) with a Non-local block (Wang et al. 2018) on the high-resolution stage,
trained with fp16 autocast and a GradScaler -- the usual AMP recipe.

The Non-local block is the 'dot-product' instance: f = theta(x)^T phi(x) over all
N = T*H*W positions, y = (f / N) g(x). Since there is no softmax, the re-implementation
re-associates it to avoid the N x N affinity (the "linear attention" trick):

    y = torch.matmul(theta_x, torch.matmul(phi_x, g_x)) / N

i.e. phi^T g is summed over all N (here 1024-2048) positions and only divided by N at
the very end. Under autocast the matmuls run in float16: every entry of the
un-normalised d x d product is a sum of thousands of positively correlated terms
(theta / phi / g all see the same post-ReLU, BN-normalised features), theta then sums d
of those, and as training sharpens the features the result passes 65504 and becomes inf; the division by N comes too late, inf/N is still inf, the logits and the
loss become inf/NaN. GradScaler cannot help: the overflow is in the forward pass, not
in the gradients.

ORIGIN: nonlocal_block, the Non-local module whose fp16 affinity product overflows first.

Fix: the run uses bfloat16 autocast (same exponent range as fp32, max ~3e38) instead of
float16; model, data, optimiser, scaler and lr are unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "nonlocal_block"
SOURCE = ("Wang et al. 2018 'Non-local Neural Networks' (dot-product instance, y = f/N g); "
          "AlexHex7/Non-local_pytorch-style re-implementations; fp16 AMP overflow of "
          "un-normalised matmul sums ('normalise before you sum' in half precision).")


class NonLocalDot(nn.Module):
    def __init__(self, c, inner):
        super().__init__()
        self.theta = nn.Conv3d(c, inner, 1)
        self.phi = nn.Conv3d(c, inner, 1)
        self.g = nn.Conv3d(c, inner, 1)
        self.out = nn.Sequential(nn.Conv3d(inner, c, 1, bias=False), nn.BatchNorm3d(c))

    def forward(self, x):
        B, C, T, H, W = x.shape
        N = T * H * W
        th = self.theta(x).flatten(2).transpose(1, 2)   # B, N, d
        ph = self.phi(x).flatten(2)                      # B, d, N
        g = self.g(x).flatten(2).transpose(1, 2)         # B, N, d
        # O(N d^2) re-association of (theta phi) g -- never builds the N x N affinity --
        # and the 1/N of the dot-product instance applied at the end
        y = torch.matmul(th, torch.matmul(ph, g)) / N
        y = y.transpose(1, 2).reshape(B, -1, T, H, W)
        return x + self.out(y)


class Bottleneck3d(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        mid = cout // 2
        self.body = nn.Sequential(
            nn.Conv3d(cin, mid, (3, 1, 1), padding=(1, 0, 0), bias=False), nn.BatchNorm3d(mid), nn.ReLU(inplace=True),
            nn.Conv3d(mid, mid, (1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1), bias=False),
            nn.BatchNorm3d(mid), nn.ReLU(inplace=True),
            nn.Conv3d(mid, cout, 1, bias=False), nn.BatchNorm3d(cout))
        self.short = nn.Sequential(nn.Conv3d(cin, cout, 1, stride=(1, stride, stride), bias=False),
                                   nn.BatchNorm3d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.short(x))


class NLResNet3d(nn.Module):
    def __init__(self, w, num_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(3, w, 3, padding=1, bias=False), nn.BatchNorm3d(w), nn.ReLU(inplace=True))
        self.res2 = Bottleneck3d(w, 2 * w, 1)
        self.nonlocal_block = NonLocalDot(2 * w, w)
        self.res3 = Bottleneck3d(2 * w, 4 * w, 2)
        self.fc = nn.Linear(4 * w, num_classes)

    def forward(self, x):
        x = self.res3(self.nonlocal_block(self.res2(self.stem(x))))
        return self.fc(x.mean(dim=(2, 3, 4)))


def make_clips(g, steps, bs, T, S, K):
    dirs = torch.tensor([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0], [0.7, 0.7], [-0.7, -0.7]])[:K]
    tint = 0.5 + torch.rand(K, 3, generator=g)
    ys_, xs_ = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    out = []
    for _ in range(steps):
        y = torch.randint(0, K, (bs,), generator=g)
        start = torch.rand(bs, 2, generator=g) * S * 0.4 + S * 0.3
        frames = []
        for t in range(T):
            c = start + dirs[y] * (t - T / 2) * 1.5
            d2 = (ys_[None] - c[:, 0, None, None]) ** 2 + (xs_[None] - c[:, 1, None, None]) ** 2
            frames.append(torch.exp(-d2 / 10.0))
        clip = torch.stack(frames, 1)[:, None] * tint[y][:, :, None, None, None]
        clip = clip + 0.15 * torch.randn(clip.shape, generator=g)
        out.append(((clip - 0.1) / 0.3, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w = [8, 8, 12][seed % 3]
    T = [4, 8, 4][seed % 3]
    S = [16, 16, 16][seed % 3]
    bs = [4, 4, 4][seed % 3]
    lr = [0.05, 0.04, 0.03][seed % 3]
    steps = 110
    model = NLResNet3d(w, num_classes=6)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(),
                batches=make_clips(g, steps, bs, T, S, 6), steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16,
                scaler=torch.amp.GradScaler("cpu"))
