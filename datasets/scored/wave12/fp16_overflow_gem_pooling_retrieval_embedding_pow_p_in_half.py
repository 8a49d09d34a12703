"""Image-retrieval embedding net (small conv backbone -> GeM pooling with a fixed p=3 -> linear
-> L2-normalised embedding, trained with a normalised-softmax proxy loss) run under fp16
autocast. GeM computes mean(clamp(x, eps)^p)^(1/p) on the fp16 feature map. Post-ReLU channels
that are zero or merely weak (all activations below ~4e-3) for an image appear within a few
steps; their x^3 is below the smallest fp16 subnormal, the pooled mean flushes to exactly 0, and
the outer ^(1/p) is then differentiated at 0: the half-precision backward of the pooling
produces inf (past 65504), Adam turns it into NaN weights and the next loss is NaN.
In fp32 the same pooled value is tiny but representable and the gradient stays finite,
which is why retrieval code commonly casts the GeM input to float under AMP. The fix computes
only the GeM op in fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "pool"
SOURCE = ("GeM pooling (Radenovic et al., cnnimageretrieval-pytorch) with a fixed p under AMP; the "
          "common practice of computing GeM in fp32: x.float().clamp(eps).pow(p)")


class GeM(nn.Module):
    def __init__(self, p=3.0, eps=1e-6, fp32=False):
        super().__init__()
        self.p = p                      # fixed GeM exponent (freeze_p), a python float
        self.eps = eps
        self.fp32 = fp32

    def _gem(self, x):
        return F.avg_pool2d(x.clamp(min=self.eps).pow(self.p), x.shape[-2:]).pow(1.0 / self.p).flatten(1)

    def forward(self, x):
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                return self._gem(x.float())
        return self._gem(x)


class RetrievalNet(nn.Module):
    def __init__(self, n_proxies=10, fp32_pool=False):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 48, 3, padding=1), nn.ReLU(),
        )
        self.pool = GeM(fp32=fp32_pool)
        self.whiten = nn.Linear(48, 32)
        self.proxies = nn.Parameter(torch.randn(n_proxies, 32))

    def forward(self, x):
        e = F.normalize(self.whiten(self.pool(self.backbone(x)).float()).float(), dim=-1)
        return 16.0 * e @ F.normalize(self.proxies, dim=-1).t()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RetrievalNet(fp32_pool=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = 60
    landmarks = torch.rand(10, 3, 16, 16, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, 10, (16,), generator=g)
        x = landmarks[y] + 0.3 * torch.randn(16, 3, 16, 16, generator=g)
        batches.append((x, y))

    def loss_fn(logits, y):
        return F.cross_entropy(logits.float(), y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
