"""BinaryNet-style CNN (Courbariaux/Hubara et al.): weights are binarised to +-1 in the forward pass
with a straight-through estimator and activations are Hardtanh, whose gradient is exactly zero
outside [-1, 1]. The recipe relies on a BatchNorm before every Hardtanh; here it was dropped
("BN is just for speed"). With +-1 weights a conv pre-activation is a sum of fan-in (27..144)
terms, magnitude ~5-40, and since the inputs and the previous Hardtanh outputs carry a large
common offset, nearly every unit sits far outside [-1, 1] with the same sign for every image:
Hardtanh saturates, the features are constant and the gradient to all binary conv layers is
exactly zero. Only the final real-valued classifier's bias moves and the cross-entropy stalls
near log(K) without any NaN. Fixed: BatchNorm2d in front of each Hardtanh (normalisation)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "features.1"
SOURCE = "BinaryNet / BNN training recipe (Hubara et al. 2016): BatchNorm before every sign/hardtanh is required; issues in BNN re-implementations report accuracy stuck at chance without it"


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        ctx.save_for_backward(w)
        return torch.where(w >= 0, torch.ones_like(w), -torch.ones_like(w))

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return g * (w.abs() <= 1).to(g.dtype)


class BinaryConv2d(nn.Conv2d):
    def forward(self, x):
        return F.conv2d(x, SignSTE.apply(self.weight), self.bias, self.stride, self.padding)


def make_model(width, depth, use_bn):
    layers, cin = [], 3
    for i in range(depth):
        layers.append(BinaryConv2d(cin, width, 3, padding=1))
        if use_bn:  # fixed model: BN in front of the Hardtanh, as in the BNN recipe
            layers.append(nn.BatchNorm2d(width))
        layers.append(nn.Hardtanh())
        if i % 2 == 1:
            layers.append(nn.MaxPool2d(2))
        cin = width
    return Net(nn.Sequential(*layers), width)


class Net(nn.Module):
    def __init__(self, features, width):
        super().__init__()
        self.features = features
        self.classifier = nn.Linear(width, 4)

    def forward(self, x):
        h = self.features(x)
        return self.classifier(h.mean((2, 3)))


def _data(g, n):
    # 4 classes: coloured bar orientation (horizontal, vertical, diag, anti-diag) on a bright background
    y = torch.randint(0, 4, (n,), generator=g)
    x = 0.45 + 0.25 * torch.rand(n, 3, 12, 12, generator=g)
    ii, jj = torch.meshgrid(torch.arange(12), torch.arange(12), indexing="ij")
    masks = torch.stack([(ii % 4 == 0), (jj % 4 == 0), ((ii + jj) % 4 == 0), ((ii - jj) % 4 == 0)]).float()
    x = x + 0.3 * masks[y].unsqueeze(1)
    return x.clamp(0, 1), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    width = [16, 24, 20][seed % 3]
    depth = [2, 3, 4][seed % 3]
    bs = [32, 24, 40][seed % 3]
    lr = [5e-3, 3e-3, 4e-3][seed % 3]
    steps = 80
    model = make_model(width, depth, use_bn=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    pool = [_data(g, bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
