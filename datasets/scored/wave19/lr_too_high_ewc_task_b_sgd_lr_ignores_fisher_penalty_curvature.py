"""Elastic Weight Consolidation (Kirkpatrick et al. 2017), task B of a two-task sequence
(domain-incremental: the same 6 gestures from a re-mounted sensor array, i.e. permuted and
re-scaled channels).  Task B is trained with SGD at the learning rate that worked for task A,
but the EWC penalty makes the loss far stiffer.

Mechanism: build() trains the MLP on task A, stores theta_A and the diagonal Fisher F
(mean over task-A samples of the squared per-sample gradient of log p(y_hat | x)).  The scenario is
task B: loss = CE_B + (lambda / 2) * sum_i F_i (theta_i - theta_A,i)^2, the penalty being
computed by the model's `ewc` module.  The penalty's curvature along weight i is
lambda * F_i, ~100-170 for the most important weights, while plain CE has curvature ~1.  The
user kept SGD(lr=0.1, momentum=0.9) from task A: lr * lambda * F_max = 10-17 is far above the
momentum-SGD stability limit 2 (1 + beta) = 3.8, so every step overshoots the EWC quadratic
along the high-Fisher weights with a growing amplitude; the penalty and then the loss grow
geometrically (1e4, 1e13, 1e23 ...) and overflow within ~15 steps.

ORIGIN: None -- the step size is too large for the loss curvature; no module is at fault.

Fix: lr 0.02 for task B (lr * lambda * F_max ~ 2-3.4, under the stability limit); same
lambda, same Fisher, same optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Kirkpatrick et al. 2017 'Overcoming catastrophic forgetting in neural networks' "
          "(EWC, diagonal Fisher, lambda in the hundreds-thousands); continual-learning repo "
          "issues 'EWC loss explodes to NaN on the second task' resolved by lowering the lr")


class EWCPenalty(nn.Module):
    def __init__(self, net, fisher, lam):
        super().__init__()
        self.net_ref = [net]                                  # avoid registering net twice
        self.lam = lam
        for i, (n, p) in enumerate(net.named_parameters()):
            self.register_buffer(f"anchor_{i}", p.detach().clone())
            self.register_buffer(f"fisher_{i}", fisher[n])

    def forward(self):
        pen = 0.0
        for i, p in enumerate(self.net_ref[0].parameters()):
            pen = pen + (getattr(self, f"fisher_{i}") * (p - getattr(self, f"anchor_{i}")) ** 2).sum()
        return 0.5 * self.lam * pen


class EWCModel(nn.Module):
    def __init__(self, d_in, hidden, n_cls):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_cls))
        self.ewc = None

    def forward(self, x):
        return self.net(x), self.ewc()


def ewc_loss(out, y):
    logits, penalty = out
    return F.cross_entropy(logits, y) + penalty


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d_in=32, hidden=128, bs=64, steps=120, lam=5000.0),
           dict(d_in=24, hidden=96, bs=96, steps=100, lam=1500.0),
           dict(d_in=40, hidden=64, bs=48, steps=140, lam=3000.0)][seed % 3]
    g = torch.Generator().manual_seed(1717 + seed)
    d_in, n_cls = cfg["d_in"], 6
    centers = torch.randn(n_cls, d_in, generator=g) * 0.6
    perm = torch.randperm(d_in, generator=g)
    gain = 0.6 + 0.8 * torch.rand(d_in, generator=g)

    def task(n, b):
        y = torch.randint(0, n_cls, (n,), generator=g)
        x = centers[y] + torch.randn(n, d_in, generator=g)
        return (x[:, perm] * gain, y) if b else (x, y)

    torch.manual_seed(seed)
    model = EWCModel(d_in, cfg["hidden"], n_cls)
    opt_a = torch.optim.SGD(model.net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(150):                                       # task A
        x, y = task(64, False)
        opt_a.zero_grad()
        F.cross_entropy(model.net(x), y).backward()
        opt_a.step()
    fisher = {n: torch.zeros_like(p) for n, p in model.net.named_parameters()}
    xf, _ = task(200, False)
    for i in range(200):                                       # per-sample diagonal Fisher
        model.net.zero_grad()
        out = model.net(xf[i:i + 1])
        F.nll_loss(F.log_softmax(out, 1), out.argmax(1)).backward()
        for n, p in model.net.named_parameters():
            fisher[n] += p.grad.detach() ** 2 / 200
    model.net.zero_grad()
    model.ewc = EWCPenalty(model.net, fisher, cfg["lam"])

    batches = [task(cfg["bs"], True) for _ in range(cfg["steps"])]
    lr = 0.02 if fixed else 0.1             # BUG: task-A lr reused under the stiff EWC penalty
    opt = torch.optim.SGD(model.net.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=ewc_loss, batches=batches, steps=cfg["steps"])
