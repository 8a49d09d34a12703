"""Deep sigmoid MLP (4 x 256 sigmoid hidden layers, PyTorch's default
U(-1/sqrt(fan_in), 1/sqrt(fan_in)) init = Glorot & Bengio's 'standard initialisation') for an
ordinal 8-class problem, trained with Nesterov SGD whose lr follows an inverse-time decay
computed inside the optimizer. As in Glorot & Bengio 2010 (Fig. 2), the quickest way for the
softmax to shed its initially useless input is to switch the top hidden layer off: its
sigmoids are pushed to 0 within ~50 steps, sigmoid'(z) ~ 0 blocks the gradient to all layers
below, and the loss stays at log(8). fixed=True: a BatchNorm1d before every sigmoid (Ioffe &
Szegedy 2015) keeps the pre-activations centred and out of saturation; all else identical."""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.11"
SOURCE = ("Glorot & Bengio 2010, 'Understanding the difficulty of training deep feedforward neural "
          "networks': top hidden sigmoid layer saturating at 0 early in training; Ioffe & Szegedy 2015 "
          "(BatchNorm lets saturating nonlinearities train).")


class InvTimeNesterov(torch.optim.SGD):
    def __init__(self, params, lr0, gamma, **kw):
        super().__init__(params, lr=lr0, **kw)
        self.lr0, self.gamma, self.t = lr0, gamma, 0

    @torch.no_grad()
    def step(self, closure=None):
        for g in self.param_groups:
            g["lr"] = self.lr0 / (1.0 + self.gamma * self.t)
        self.t += 1
        return super().step(closure)


def make_mlp(d_in, width, depth, n_cls, norm):
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.BatchNorm1d(width) if norm else nn.Identity(), nn.Sigmoid()]
        d = width
    layers.append(nn.Linear(d, n_cls))
    return nn.Sequential(*layers)


class Net(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.net = make_mlp(32, 256, 4, 8, norm)

    def forward(self, x):
        return self.net(x)


def _data(g, steps, bs=64, d=32, n_cls=8):
    # ordinal target: a smooth random teacher score cut into n_cls equal-frequency bins
    teacher = nn.Sequential(nn.Linear(d, 64), nn.Tanh(), nn.Linear(64, 1))
    with torch.no_grad():
        for p in teacher.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (1.0 / p.shape[-1] ** 0.5 if p.dim() > 1 else 0.1))
        ref = teacher(torch.randn(20000, d, generator=g)).squeeze(1)
        cuts = torch.quantile(ref, torch.linspace(0, 1, n_cls + 1)[1:-1])
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g)
        with torch.no_grad():
            y = torch.bucketize(teacher(x).squeeze(1), cuts)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Net(norm=fixed)
    steps = 300
    lr0 = 0.3 * (1.0 + 0.2 * (torch.rand(1, generator=g).item() - 0.5))
    opt = InvTimeNesterov(model.parameters(), lr0=lr0, gamma=1e-3, momentum=0.9, nesterov=True)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=_data(g, steps),
                steps=steps, amp_dtype=None, scaler=None)
