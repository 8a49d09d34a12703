"""MC-dropout deep MLP regressor (Gal & Ghahramani style: Dropout after every hidden ReLU,
kept active for predictive sampling) initialised with a Caffe-era `nn.init.normal_(w, 0, 0.01)`
loop over every Linear, trained with SGD + momentum.

Mechanism: with std 0.01 on width-64/96 layers, each Linear multiplies the activation scale by
about 0.01*sqrt(fan_in/2) ~ 0.06-0.07, so after 6-8 layers the signal reaching the head is ~1e-8 of
the input; the backward signal shrinks the same way.  The network outputs only its last bias,
the MSE sits at Var(y) and SGD never escapes (loss stalls from step 0).
ORIGIN: net.0, the first of the badly initialised Linears; the shrinkage starts there and
compounds through the stack.
Fix: kaiming (He) normal init for the ReLU layers (the only change)."""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = "Caffe-style gaussian std=0.01 init copied into a deep MC-dropout regressor; vanishing signal stalls SGD (He et al. 2015 discussion, common forum report)"


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [64, 96, 64][seed % 3]
    lr = [0.01, 0.004, 0.008][seed % 3]
    bs = [32, 64, 48][seed % 3]
    steps = 120
    d_in = 10
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU(), nn.Dropout(0.1)]
        d = width
    layers.append(nn.Linear(d, 1))
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    w_true = torch.randn(d_in, 1, generator=g) / d_in ** 0.5
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d_in, generator=g)
        y = torch.tanh(x @ w_true) * 2 + 0.5 * torch.sin(2 * x[:, :1]) + 0.1 * torch.randn(bs, 1, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
