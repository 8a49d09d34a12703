"""Mobile image-quality regressor (MobileNetV3-flavoured: conv-ReLU trunk, global pooling, linear
head, Hardsigmoid output so the predicted quality score lies in [0, 1], MSE against normalised MOS).
The global pooling was written as a sum over the H*W positions instead of a mean. The pooled
features are therefore ~H*W times too large and the head's pre-activations are tens of units away
from the [-3, 3] linear zone of Hardsigmoid for every image: the output is stuck at exactly 0 or 1,
Hardsigmoid's derivative there is exactly zero, no gradient reaches any weight and the loss does not
move at all (silent stall, all finite). Average pooling (pre-activations of order 1) trains."""
import torch, torch.nn as nn
CAUSE = "saturation"
ORIGIN = "score_act"
SOURCE = "MobileNetV3 hard-sigmoid heads; 'loss constant, gradients exactly zero with hardsigmoid output' forum threads"

class QualityNet(nn.Module):
    def __init__(self, ch, mean_pool):
        super().__init__(); self.mean_pool = mean_pool
        self.trunk = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(ch, 1); self.score_act = nn.Hardsigmoid()
    def forward(self, x):
        f = self.trunk(x)
        p = f.mean((2, 3)) if self.mean_pool else f.sum((2, 3))
        return self.score_act(self.head(p)).squeeze(1)

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    ch = [16, 12, 20][seed % 3]; S = [16, 20, 24][seed % 3]
    steps = [100, 150, 120][seed % 3]; bs = [16, 24, 16][seed % 3]
    model = QualityNet(ch, mean_pool=fixed)
    def make():
        q = torch.rand(bs, generator=g)                     # normalised MOS in [0, 1]
        clean = 0.5 + 0.3 * torch.randn(bs, 3, S, S, generator=g).cumsum(-1) / S ** 0.5
        noisy = clean + (1 - q).view(bs, 1, 1, 1) * 0.8 * torch.randn(bs, 3, S, S, generator=g)
        return noisy, q
    batches = [make() for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
