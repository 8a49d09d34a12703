"""Student pass/fail early-warning MLP (deep ReLU tower) initialised with the Keras-1
`init='uniform'` recipe, U(-0.05, 0.05), on every Dense layer.

Mechanism: old Keras 1.x tutorials (the "Pima diabetes" style `Dense(12, init='uniform')`)
were ported to PyTorch by re-initialising every nn.Linear with uniform_(-0.05, 0.05) and zero
bias. For a width-W ReLU layer that weight std (0.029) gives a per-layer activation gain of
sqrt(W * 0.05**2 / 3 / 2) ~= 0.2-0.26, so the signal shrinks geometrically with depth from the
very first forward pass (5-7 hidden layers -> ~1e-4 of the input scale). The logit is then a
constant, backward gradients shrink by the same factor, and plain SGD leaves the loss sitting
at the class-prior BCE for the whole run.

ORIGIN: "net.0", the first Linear of the tower. The shrinkage starts there and compounds
through every later Linear; the first layer is where the undersized weights first scale the
signal down, so it is named rather than the (equally small) deeper layers.

Fix: Kaiming-uniform (fan_in, relu) weights for the hidden Linears and Xavier for the head
(PyTorch's defaults for this case); everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Keras 1 `init='uniform'` (U(-0.05,0.05)) tutorials for tabular classifiers ported to "
          "deeper towers; vanishing-activation failure described in Glorot & Bengio 2010 and "
          "He et al. 2015 (student-performance / OULAD early-warning MLPs)")


def _data(g, n, d, w_true):
    # standardised tabular features: prior GPA, attendance, VLE clicks, quiz means, ...
    x = torch.randn(n, d, generator=g)
    logit = x @ w_true + 0.8 * torch.tanh(x[:, 0] * x[:, 1])
    y = (torch.rand(n, generator=g) < torch.sigmoid(1.5 * logit)).float()
    return x, y.unsqueeze(1)


class EarlyWarningMLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 5 + seed % 3                 # 5, 6, 7 hidden layers
    width = [96, 128, 160][seed % 3]
    lr = [0.05, 0.08, 0.06][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 150
    d = 24
    torch.manual_seed(seed)
    layers, fan = [], d
    for _ in range(depth):
        layers += [nn.Linear(fan, width), nn.ReLU()]
        fan = width
    layers.append(nn.Linear(fan, 1))
    model = EarlyWarningMLP(layers)
    for m in model.net:
        if isinstance(m, nn.Linear):
            if fixed:
                if m.out_features == 1:
                    nn.init.xavier_uniform_(m.weight)
                else:
                    nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            else:
                nn.init.uniform_(m.weight, -0.05, 0.05)   # Keras-1 init='uniform'
            nn.init.zeros_(m.bias)
    w_true = torch.randn(d, generator=g) / d ** 0.5 * 2.0
    batches = [_data(g, bs, d, w_true) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
