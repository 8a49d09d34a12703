"""Dueling DQN (value + advantage streams on a shared ReLU trunk) trained offline by regressing
Q(s, a) for the logged action onto fixed n-step return targets (fitted-Q style). The model code
re-initialises every Linear with `nn.init.normal_(w, 0, 1)` / zero bias (a literal port of a
'weights ~ N(0, 1)' tutorial). With fan-in 32-64 each ReLU layer multiplies the activation scale by
~sqrt(fan_in / 2) = 4-6, so the Q-values at step 0 are 1e3-1e5 times the O(1) returns; the MSE
loss is enormous, the gradients are huge, and SGD-with-momentum updates overshoot until the
weights and the loss become inf/NaN within a few steps. Fixed: kaiming-uniform (PyTorch default
style) initialisation of the same layers, nothing else changed."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "trunk.0"
SOURCE = "DQN tutorials that init weights with normal(0, 1); 'Q values explode at start of training' reports (r/reinforcementlearning, PyTorch forums)"

class DuelingQ(nn.Module):
    def __init__(self, obs, nact, hid, depth, std1):
        super().__init__()
        layers, d = [], obs
        for _ in range(depth):
            layers += [nn.Linear(d, hid), nn.ReLU()]
            d = hid
        self.trunk = nn.Sequential(*layers)
        self.value = nn.Linear(hid, 1)
        self.adv = nn.Linear(hid, nact)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                if std1:
                    nn.init.normal_(m.weight, 0.0, 1.0)
                else:
                    nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
    def forward(self, obs, act):
        h = self.trunk(obs)
        a = self.adv(h)
        q = self.value(h) + a - a.mean(-1, keepdim=True)
        return q.gather(1, act.unsqueeze(1)).squeeze(1)

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    hid, depth, lr, bs, steps = [(48, 4, 1e-3, 64, 80), (32, 5, 5e-4, 128, 60), (64, 4, 1e-3, 32, 100)][seed]
    obs_dim, nact = 8, 4
    model = DuelingQ(obs_dim, nact, hid, depth, std1=not fixed)
    Wq = torch.randn(obs_dim, nact, generator=g) * 0.5
    def make():
        s = torch.randn(bs, obs_dim, generator=g)
        a = torch.randint(0, nact, (bs,), generator=g)
        ret = (torch.tanh(s @ Wq) + 0.2 * s[:, :1].pow(2)).gather(1, a.unsqueeze(1)).squeeze(1)
        return (s, a), ret + 0.05 * torch.randn(bs, generator=g)
    data = [make() for _ in range(12)]
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
