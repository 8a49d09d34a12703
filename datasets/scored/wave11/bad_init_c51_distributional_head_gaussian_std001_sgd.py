"""C51-style distributional value network (offline, precomputed projected targets): a 3-layer ReLU
MLP trunk maps an 8-d state to 3 actions x 51 return atoms, fitted by cross-entropy to the
categorical target of the action taken, with SGD + momentum. The custom ``init_weights`` uses the
Caffe-era "gaussian, std 0.01" filler on every Linear regardless of fan-in. A ReLU layer with fan-in
128 multiplies the activation scale by ~0.01 * sqrt(128 / 2) = 0.08, so the signal reaching the
logits is ~1e-5 of the input's: every state gets the same (uniform) return distribution, and the
gradients reaching the trunk shrink by the same factors on the way back. Only the head bias learns,
and because the returns are spread over the whole support the bias-only (marginal) prediction is
barely better than uniform: the loss sits near log(51) for the whole run, with no NaN. PyTorch's
default (Kaiming-uniform) init of the same layers trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "trunk.0"
SOURCE = ("Caffe 'gaussian std=0.01' weight filler ported to PyTorch via nn.init.normal_(w, std=0.01) "
          "(vanishing activations in deeper nets, Glorot & Bengio 2010); C51 (Bellemare et al. 2017) head")

NS, NA, NATOM, VMIN, VMAX = 8, 3, 51, -10.0, 10.0


class C51Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(NS, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                                   nn.Linear(128, 64), nn.ReLU())
        self.head = nn.Linear(64, NA * NATOM)

    def forward(self, s):
        return self.head(self.trunk(s)).view(-1, NA, NATOM)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, std=0.01)   # Caffe 'gaussian std 0.01' filler, ignores fan-in
        nn.init.zeros_(m.bias)


def project(mu, sigma, support):
    w = torch.exp(-0.5 * ((support[None, :] - mu[:, None]) / sigma[:, None]) ** 2)
    return w / w.sum(-1, keepdim=True)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(51 + seed)
    support = torch.linspace(VMIN, VMAX, NATOM)
    Wm = torch.randn(NS, NA, generator=g)
    Ws = torch.randn(NS, NA, generator=g) * 0.3
    steps, B = 200, 64
    batches = []
    for _ in range(steps):
        s = torch.randn(B, NS, generator=g)
        a = torch.randint(0, NA, (B,), generator=g)
        u = (s @ Wm / Wm.norm(dim=0)).gather(1, a[:, None]).squeeze(1)
        mu = 9.0 * torch.erf(u / 2 ** 0.5)          # expected return spread evenly over [-9, 9]
        sigma = (0.3 + 0.5 * F.softplus(s @ Ws)).gather(1, a[:, None]).squeeze(1)
        batches.append((s, (a, project(mu, sigma, support))))
    model = C51Net()
    if not fixed:
        model.apply(init_weights)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def loss_fn(logits, y):
        a, m = y
        logp = F.log_softmax(logits[torch.arange(len(a)), a], dim=-1)
        return -(m * logp).sum(-1).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
