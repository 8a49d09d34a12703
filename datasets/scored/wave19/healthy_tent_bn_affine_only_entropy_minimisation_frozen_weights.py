"""HEALTHY: Tent fully test-time adaptation (Wang et al. 2021) of a source-trained BN CNN on a
shifted test stream (contrast drop, brightness offset, sensor noise).

Why it looks alarming but is fine:
- there are no labels: the objective is the mean prediction entropy of each test batch, a
  small number (~0.1-0.3 nats) that only creeps down, so the curve looks nearly flat;
- every conv/linear weight is frozen (requires_grad=False) and only the BatchNorm affine
  parameters (a few hundred numbers) are optimised, so almost all parameters never get a
  gradient and the update/weight ratios of the trainable ones are tiny;
- BN runs in train mode on the test batches with running statistics disabled (Tent's
  configuration), so activations are re-normalised with each batch's own statistics;
- the test stream is unlabeled and changes every step, so the loss is noisy.
The entropy is computed safely from log_softmax (Tent's softmax_entropy), confidence rises
steadily and the adaptation converges.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Wang et al. 2021 'Tent: Fully Test-Time Adaptation by Entropy Minimization' "
          "(DequanWang/tent: configure_model / collect_params / softmax_entropy)")


class SmallCNN(nn.Module):
    def __init__(self, w, n_cls):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(2 * w, 64), nn.BatchNorm1d(64), nn.ReLU())
        self.fc = nn.Linear(64, n_cls)

    def forward(self, x):
        return self.fc(self.body(x))


def softmax_entropy(logits, _unlabeled):
    return -(logits.softmax(1) * logits.log_softmax(1)).sum(1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=8, bs=64, steps=150, lr=5e-3),
           dict(w=12, bs=48, steps=120, lr=8e-3),
           dict(w=6, bs=96, steps=160, lr=5e-3)][seed % 3]
    g = torch.Generator().manual_seed(808 + seed)
    n_cls, S = 5, 12
    protos = F.avg_pool2d(torch.randn(n_cls, 1, S, S, generator=g), 3, 1, 1) * 3

    def sample(n, shift):
        y = torch.randint(0, n_cls, (n,), generator=g)
        x = protos[y] + 0.5 * torch.randn(n, 1, S, S, generator=g)
        if shift:   # test-time corruption: contrast drop + brightness + gaussian noise
            x = 0.5 * x + 0.8 + 0.6 * torch.randn(n, 1, S, S, generator=g)
        return x, y

    torch.manual_seed(seed)
    model = SmallCNN(cfg["w"], n_cls)
    src_opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(200):                                   # source training
        x, y = sample(64, False)
        src_opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        src_opt.step()

    # Tent configure_model / collect_params
    model.train()
    params = []
    for m in model.modules():
        for p in m.parameters(recurse=False):
            p.requires_grad_(False)
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.track_running_stats = False
            m.running_mean, m.running_var = None, None
            m.weight.requires_grad_(True)
            m.bias.requires_grad_(True)
            params += [m.weight, m.bias]
    opt = torch.optim.Adam(params, lr=cfg["lr"], betas=(0.9, 0.999))
    batches = [(sample(cfg["bs"], True)[0], torch.zeros(cfg["bs"], dtype=torch.long))
               for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=softmax_entropy, batches=batches,
                steps=cfg["steps"])
