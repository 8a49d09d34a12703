"""A beginner implements focal loss by hand for a small MLP on an imbalanced synthetic dataset,
FL = -(1 - p_t) ** gamma * log(p_t), and picks a fractional gamma (0.5) from a blog's grid. The
run is calm until the classifier becomes certain on an easy example: p_t rounds to exactly 1.0 in
float32, so (1 - p_t) = 0 and the derivative of x**0.5 at 0 is inf; multiplied by the zero
upstream factor log(p_t) = 0 it gives 0*inf = NaN in the gradient, every weight turns NaN and the
loss is NaN from then on. Fixed: (1 - p_t).clamp_min(eps) before the fractional power."""
import torch, torch.nn as nn
CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = "Known pattern: hand-written focal loss with gamma < 1 giving NaN gradients at p_t == 1 (pow backward at 0); torchvision sigmoid_focal_loss discussions"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = [8, 12, 10][seed % 3]; h = [64, 32, 48][seed % 3]; k = [3, 4, 5][seed % 3]
    model = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, k))
    centers = 6 * torch.randn(k, d, generator=g)
    prior = torch.tensor([0.7] + [0.3 / (k - 1)] * (k - 1))
    steps = [150, 200, 180][seed % 3]; bs = [32, 64, 48][seed % 3]
    batches = []
    for _ in range(steps):
        y = torch.multinomial(prior, bs, replacement=True, generator=g)
        batches.append((centers[y] + torch.randn(bs, d, generator=g), y))
    gamma = 0.5
    def loss_fn(logits, y):
        p = torch.softmax(logits, 1).gather(1, y[:, None]).squeeze(1)
        q = 1 - p
        if fixed: q = q.clamp_min(1e-6)
        return (-(q ** gamma) * torch.log(p.clamp_min(1e-12))).mean()
    opt = torch.optim.Adam(model.parameters(), lr=[1e-2, 1.5e-2, 1.2e-2][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
