"""TMVA-style deep sigmoid MLP separating VBF Higgs signal from ttbar/Z+jets background:
gradients vanish through the stacked sigmoids and the classifier never leaves 50/50.

Mechanism: the analysis ported its TMVA MethodMLP configuration
("NeuronType=sigmoid:HiddenLayers=N+5,N,N,...") to PyTorch and made it deeper, keeping logistic
sigmoid hidden units, Glorot-uniform weights, SGD and BCE.  The sigmoid's derivative is at
most 0.25, and its outputs are all positive (mean ~0.5), so every layer both shrinks the
back-propagated error by >= 4x and adds a common-mode offset to the next layer's inputs that
pushes its units off the linear region.  Through 7-9 sigmoid layers the gradient reaching the
first layers is 1e-4-1e-6 of the output error, and the top layers only see nearly constant
~0.5 activations: the logit stays at the class prior and the loss sits at ln 2 (no inf/NaN).

ORIGIN: "net.1", the first Sigmoid: the vanishing starts at the first saturating
non-linearity (its derivative <= 0.25 and its all-positive outputs feed every later layer);
each further sigmoid repeats it.

Fix: ReLU hidden units (Kaiming-uniform init) in the same architecture; optimiser, data and
steps unchanged.  Seeds change the depth, the width, the learning rate and the batch size.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("TMVA Users Guide, MethodMLP (NeuronType=sigmoid/tanh default) as used in LHC "
          "VBF H->tautau/WW analyses; Glorot & Bengio 2010 on deep sigmoid nets saturating; "
          "Baldi, Sadowski, Whiteson 2014 (deep nets on HIGGS/SUSY data).")

NF = 14


def _events(n, g):
    y = (torch.rand(n, generator=g) < 0.5).float()
    s = y.unsqueeze(1)
    z = torch.randn(n, NF, generator=g)
    # VBF topology: large m_jj, large |delta eta_jj|, central Higgs decay products
    mjj = torch.where(y > 0, 6.2 + 0.6 * z[:, 0], 5.4 + 0.7 * z[:, 0])        # log(m_jj/GeV)
    deta = torch.where(y > 0, 4.2 + 1.0 * z[:, 1].abs(), 2.0 + 1.2 * z[:, 1].abs())
    cent = torch.where(y > 0, 0.8 * z[:, 2].abs(), 1.0 + 0.8 * z[:, 2].abs())
    x = torch.cat([torch.stack([mjj, deta, cent], 1),
                   z[:, 3:] * (1 + 0.2 * s) + 0.3 * s * torch.tanh(z[:, 3:4] * z[:, 4:5])], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    depth = [8, 9, 7][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [0.1, 0.2, 0.15][seed % 3]
    bs = [128, 96, 64][seed % 3]
    steps = 150
    g = torch.Generator().manual_seed(11000 + seed)
    ref, _ = _events(4000, g)
    mu, sd = ref.mean(0), ref.std(0)
    batches = [((x - mu) / sd, y) for x, y in (_events(bs, g) for _ in range(steps))]
    torch.manual_seed(seed)
    act = nn.ReLU if fixed else nn.Sigmoid
    layers, d = [], NF
    for _ in range(depth):
        lin = nn.Linear(d, width)
        if fixed:
            nn.init.kaiming_uniform_(lin.weight, nonlinearity="relu")
        else:
            nn.init.xavier_uniform_(lin.weight)
        nn.init.zeros_(lin.bias)
        layers += [lin, act()]
        d = width
    layers += [nn.Linear(d, 1), nn.Flatten(0)]
    model = nn.Sequential()
    model.add_module("net", nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
