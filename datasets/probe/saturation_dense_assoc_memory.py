"""Dense Associative Memory (Krotov & Hopfield 2016) classifier on 28x28 binary glyphs: K learned memories
over visible + label units, rectified-polynomial interaction F(x) = relu(x)^3, and the one-step label
update c_a = tanh(beta * sum_mu [F(on_mu,a) - F(off_mu,a)]).  The paper uses beta = 1/T^n; here the
temperature was dropped (beta = 1), so the energy gaps (hundreds to tens of thousands) drive the output
tanh deep into saturation from step 0: ~98-100% of c are exactly +-1, d tanh = 0 and training stalls.
fixed=True: beta = 1/T^n with T = 15 (smaller pre-activations); memories, data and optimiser unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "act"
SOURCE = ("Krotov & Hopfield, 'Dense Associative Memory for Pattern Recognition' (NeurIPS 2016): the "
          "label-unit update uses tanh(beta * energy gap) with beta = 1/T^n so the argument stays out of "
          "the saturated regime; McAlister et al., 'Improved Robustness and Hyperparameter Selection in the "
          "Dense Associative Memory' (arXiv 2407.08742) on the huge energy values of unscaled DAM updates")

D, N_CLASSES, K, POWER = 784, 10, 50, 3


class DAMClassifier(nn.Module):
    def __init__(self, gen, beta):
        super().__init__()
        # memories drawn around -0.3 with std 0.3 (as in the reference DAM/MNIST code)
        self.mem = nn.Parameter(-0.3 + 0.3 * torch.randn(K, D + N_CLASSES, generator=gen))
        self.beta = beta
        self.act = nn.Tanh()

    def forward(self, v):
        xi_v, xi_c = self.mem[:, :D], self.mem[:, D:]             # (K, D), (K, C)
        base = v @ xi_v.t() - xi_c.sum(1)                          # label units all at -1: (B, K)
        rest = base.unsqueeze(2) + xi_c.unsqueeze(0)               # drop unit a's own -1 term: (B, K, C)
        on = rest + xi_c.unsqueeze(0)                              # unit a clamped to +1
        off = rest - xi_c.unsqueeze(0)                             # unit a clamped to -1
        energy_gap = (torch.relu(on) ** POWER - torch.relu(off) ** POWER).sum(1)   # (B, C)
        return self.act(self.beta * energy_gap)


def make_batches(gen, steps, bs):
    protos = torch.sign(torch.randn(N_CLASSES, D, generator=gen))  # binary glyph prototypes in {-1, +1}
    batches = []
    for _ in range(steps):
        y = torch.randint(0, N_CLASSES, (bs,), generator=gen)
        flip = torch.rand(bs, D, generator=gen) < 0.2               # 20% pixel noise
        v = torch.where(flip, -protos[y], protos[y])
        t = -torch.ones(bs, N_CLASSES)
        t[torch.arange(bs), y] = 1.0                                 # +-1 targets as in the paper
        batches.append((v, t))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps = 200
    batches = make_batches(torch.Generator().manual_seed(100 + seed), steps, 64)
    T = 15.0
    beta = 1.0 / T ** POWER if fixed else 1.0
    model = DAMClassifier(gen, beta)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loss_fn = lambda c, t: ((c - t) ** 2).mean()
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
