"""Deep fully-connected regressor of SpCas9 on-target efficiency (DeepSpCas9 / DeepCRISPR
style feature MLP) from a one-hot 30-mer (4 nt context + 20 nt protospacer + PAM + 3 nt)
plus GC content and position-specific dinucleotide flags; targets are z-scored indel
frequencies; Huber loss (delta 1), SGD with momentum.

Mechanism (bad_init): the model was ported from a Keras recipe that passed
`kernel_initializer=RandomUniform()` (Keras' default range is [-0.05, 0.05]) to every Dense
layer; the port reproduces it with `nn.init.uniform_(w, -0.05, 0.05)`. For widths of
~100-250 that is std 0.029, i.e. a per-layer gain of 0.029*sqrt(fan_in/2) ~ 0.2-0.3 through
ReLU, so the signal shrinks geometrically with depth: by the last hidden layer the
activations (and the back-propagated gradients to the early layers) are ~1e-5 of their
input scale. Because the targets are z-scored the output bias alone cannot lower the loss,
and it sits at its starting level (the Huber loss of a constant prediction) for the
whole run.

ORIGIN: `net.0`, the first Linear; the shrinkage starts there and compounds at every later
layer (all of them share the same too-small init).

Fix: kaiming-uniform (fan_in, relu) init of the hidden layers (xavier for the output), zero
biases.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("DeepSpCas9 (Kim et al., Sci. Adv. 2019) / DeepCRISPR feature MLPs; Keras "
          "RandomUniform default minval=-0.05, maxval=0.05 carried into a PyTorch port; "
          "'deep net does not learn, outputs constant' reports caused by too-small init "
          "(Glorot & Bengio 2010)")

NUC = 4
LEN = 30


def _features(idx):
    oh = F.one_hot(idx, NUC).float().flatten(1)                    # 120
    gc = ((idx[:, 4:24] == 1) | (idx[:, 4:24] == 2)).float().mean(1, keepdim=True)
    tt = ((idx[:, 4:23] == 3) & (idx[:, 5:24] == 3)).float()       # 19 TT flags (pol-III stop)
    return torch.cat([oh, gc, tt], 1)                              # 140


def _efficiency(idx):
    gc = ((idx[:, 4:24] == 1) | (idx[:, 4:24] == 2)).float().mean(1)
    g20 = (idx[:, 23] == 2).float()                 # G at position 20 helps
    c_pam = (idx[:, 24] == 1).float()               # C next to PAM hurts
    tt = ((idx[:, 4:23] == 3) & (idx[:, 5:24] == 3)).float().sum(1)
    seed_a = (idx[:, 16:24] == 0).float().sum(1)
    y = -6.0 * (gc - 0.55) ** 2 + 0.8 * g20 - 0.6 * c_pam - 0.3 * tt - 0.15 * seed_a
    return y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    depth = [6, 7, 8][seed % 3]
    width = [128, 192, 160][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 200

    # all 30-mers carry NGG PAM at positions 24-26 (0-based 25,26 = G,G)
    n = bs * steps
    idx = torch.randint(0, NUC, (n, LEN), generator=g)
    idx[:, 25] = 2
    idx[:, 26] = 2
    y = _efficiency(idx)
    y = y + 0.15 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()                    # z-scored efficiency
    x = _features(idx)

    layers = []
    d_in = x.shape[1]
    for _ in range(depth):
        layers += [nn.Linear(d_in, width), nn.ReLU()]
        d_in = width
    layers += [nn.Linear(d_in, 1)]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))

    lin = [m for m in model.modules() if isinstance(m, nn.Linear)]
    for i, m in enumerate(lin):
        if fixed:
            if i < len(lin) - 1:
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            else:
                nn.init.xavier_uniform_(m.weight)
        else:
            nn.init.uniform_(m.weight, -0.05, 0.05)    # keras RandomUniform() default
        nn.init.zeros_(m.bias)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(out, t):
        return F.huber_loss(out.squeeze(-1), t, delta=1.0)

    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
