"""Dense one-stage detector classification head (RetinaNet-style: small conv trunk, per-anchor
sigmoid logits for 3 classes over a feature grid, prior-probability bias init b = -log((1-pi)/pi)
with pi = 0.01) trained with sigmoid focal loss (gamma 2, alpha 0.25) normalised by the number of
positive anchors. Because of the prior init and the (1-p)^gamma modulation, the ~1e3 negative
anchors per image each contribute ~1e-6 (almost every per-anchor loss and logit gradient is
vanishingly small, and the logits sit at -4.6 like a dead/saturated head), while a handful of
positive anchors carry the whole loss: it looks like a vanishing-gradient stall, but this is the
intended design and the normalised loss falls steadily (~1.1 -> ~0.15)."""
import torch, torch.nn as nn, math
import torch.nn.functional as F
CAUSE = "healthy"
ORIGIN = None
SOURCE = "Lin et al. 2017 Focal Loss (RetinaNet) prior bias init; 'focal loss values very small, is it training?' threads"

class Head(nn.Module):
    def __init__(self, ch, A, C):
        super().__init__(); self.A, self.C = A, C
        self.trunk = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.cls_logits = nn.Conv2d(ch, A * C, 3, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - 0.01) / 0.01))
    def forward(self, x):
        o = self.cls_logits(self.trunk(x)); B, _, H, W = o.shape
        return o.view(B, self.A, self.C, H, W)

def focal(logits, t):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, t, reduction="none")
    pt = p * t + (1 - p) * (1 - t)
    a = 0.25 * t + 0.75 * (1 - t)
    return (a * (1 - pt) ** 2 * ce).sum() / t.sum().clamp_min(1.0)

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    ch = [16, 12, 16][seed % 3]; A = [2, 3, 2][seed % 3]; C = 3; S = [16, 12, 20][seed % 3]
    steps = [100, 120, 80][seed % 3]; bs = [8, 8, 6][seed % 3]
    model = Head(ch, A, C)
    def make():
        x = 0.1 * torch.randn(bs, 1, S, S, generator=g); t = torch.zeros(bs, A, C, S, S)
        for b in range(bs):
            for _ in range(2):
                c = int(torch.randint(0, C, (1,), generator=g)); r, q = torch.randint(1, S - 1, (2,), generator=g).tolist()
                x[b, 0, r - 1:r + 2, q - 1:q + 2] += (c + 1) * 0.7
                t[b, :, c, r, q] = 1.0
        return x, t
    batches = [make() for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=focal, batches=batches, steps=steps, amp_dtype=None, scaler=None)
