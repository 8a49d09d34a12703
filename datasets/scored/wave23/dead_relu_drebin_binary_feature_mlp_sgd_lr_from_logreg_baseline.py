"""Android malware detector on Drebin-style binary features (requested
permissions, suspicious API calls, intent filters: sparse 0/1 vectors) - a
funnel ReLU MLP (256 -> width -> width/4 -> 4..8 -> 2) trained with
SGD+momentum at the learning rate that had been tuned for the
logistic-regression baseline in the same notebook.

Mechanism: the linear baseline on the same features was fitted with
lr = 0.5-1.0 (fine for a convex model on sparse binary inputs) and that lr
was reused for the MLP.  The first large updates (the loss briefly spikes)
push biases and the weights of the near-universal features (INTERNET,
ACCESS_NETWORK_STATE, ...) of many hidden units far negative; since every
input is non-negative, such a unit is negative for every app, outputs 0 and
never gets a gradient again.  The narrow last hidden layer (4-8 units) dies
completely within the first tens of steps, the logits become
input-independent and the loss sits at log(2) for the rest of the run - a
plateau without any non-finite value.

ORIGIN: ``mlp.5`` - the ReLU of the narrow last hidden layer, the layer whose
units all die and cut every gradient path to the rest of the network.

Fix: a learning rate suited to the MLP (lr = 0.05); same optimiser, model,
init and data.
"""
import random

import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "mlp.5"
SOURCE = ("Drebin (Arp et al. NDSS 2014) binary feature space with MLP detectors (Grosse et al. 2017); "
          "dying ReLU with too-large SGD learning rates (CS231n notes 'a large gradient ... can cause "
          "the neuron to never activate again', up to 40% dead units)")

N_FEAT = 256


def _apps(g, n, base_p, mal_p):
    y = torch.randint(0, 2, (n,), generator=g)
    p = torch.where(y[:, None] == 1, mal_p[None, :], base_p[None, :])
    x = (torch.rand(n, N_FEAT, generator=g) < p).float()
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    r = random.Random(seed)
    width = r.choice([64, 128, 192])
    narrow = r.choice([4, 6, 8])
    lr_logreg = r.choice([0.5, 0.8, 1.0])
    bs = r.choice([32, 64, 128])
    steps = r.choice([100, 150, 200])

    g = torch.Generator().manual_seed(6000 + seed)
    # a few near-universal features (INTERNET, ACCESS_NETWORK_STATE, ...), long sparse tail
    base_p = torch.cat([torch.full((12,), 0.9), torch.rand(N_FEAT - 12, generator=g) * 0.08])
    mal_p = base_p.clone()
    idx = torch.randperm(N_FEAT - 12, generator=g)[:40] + 12
    mal_p[idx] = (mal_p[idx] + 0.25).clamp(max=0.9)    # SEND_SMS, getDeviceId, su binaries ...
    batches = [_apps(g, bs, base_p, mal_p) for _ in range(steps)]

    torch.manual_seed(seed)
    # funnel: N_FEAT -> width -> width/4 -> narrow -> 2
    layers, d = [], N_FEAT
    for w in (width, width // 4, narrow):
        layers += [nn.Linear(d, w), nn.ReLU()]
        d = w
    layers.append(nn.Linear(d, 2))
    model = _Detector(nn.Sequential(*layers))
    lr = 0.05 if fixed else lr_logreg
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)


class _Detector(nn.Module):
    def __init__(self, mlp):
        super().__init__()
        self.mlp = mlp

    def forward(self, x):
        return self.mlp(x)
