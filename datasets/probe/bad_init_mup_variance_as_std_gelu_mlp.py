"""Hand-rolled muP (maximal update parameterisation) MLP classifier whose hidden-layer init confuses variance with std.

muP prescribes hidden weights with Var = 1/fan_in (std = fan_in**-0.5), a zero-initialised readout
with a 1/width output multiplier and Adam lr scaled by base_width/width for hidden layers. The init
helper here writes std = 1/fan_in, so every hidden GELU layer shrinks activations by ~sqrt(fan_in)*2:
after 10 layers of width 256 the features are ~1e-15 from step 0, all gradients sit far below Adam's
eps, and the loss stays at log(10). fixed=True uses std = fan_in**-0.5 (the muP/LeCun init).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "hidden.0"
SOURCE = ("Yang et al. 2021 'Tensor Programs V' (muP, Table 3) and microsoft/mup; common hand-port bug of "
          "writing the 1/fan_in variance rule as nn.init.normal_(std=1/fan_in), cf. variance/std mix-ups "
          "discussed in muP reproduction issues")

IN, WIDTH, DEPTH, N_CLASSES, BASE_WIDTH = 32, 256, 10, 10, 64


class MuMLP(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.inp = nn.Linear(IN, WIDTH)
        self.hidden = nn.ModuleList([nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)])
        self.readout = nn.Linear(WIDTH, N_CLASSES)
        self.output_mult = BASE_WIDTH / WIDTH
        self._mup_init(fixed)

    @torch.no_grad()
    def _mup_init(self, fixed):
        nn.init.normal_(self.inp.weight, std=IN ** -0.5)
        nn.init.zeros_(self.inp.bias)
        for lin in self.hidden:
            fan_in = lin.in_features
            std = fan_in ** -0.5 if fixed else 1.0 / fan_in   # muP: Var[W] = 1/fan_in
            nn.init.normal_(lin.weight, std=std)
            nn.init.zeros_(lin.bias)
        nn.init.zeros_(self.readout.weight)                   # muP zero readout
        nn.init.zeros_(self.readout.bias)

    def forward(self, x):
        h = F.gelu(self.inp(x))
        for lin in self.hidden:
            h = F.gelu(lin(h))
        return self.readout(h) * self.output_mult


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MuMLP(fixed)
    # data: 10 gaussian-mixture classes through a random nonlinear teacher
    centers = torch.randn(N_CLASSES, IN, generator=g) * 1.2
    steps, bs = 150, 64
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (bs,), generator=g)
        x = centers[y] + torch.randn(bs, IN, generator=g)
        batches.append((x, y))
    lr = 3e-3
    width_mult = WIDTH / BASE_WIDTH
    groups = [
        {"params": list(model.inp.parameters()), "lr": lr},
        {"params": [p for lin in model.hidden for p in lin.parameters()], "lr": lr / width_mult},
        {"params": list(model.readout.parameters()), "lr": lr},
    ]
    opt = torch.optim.Adam(groups, lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
