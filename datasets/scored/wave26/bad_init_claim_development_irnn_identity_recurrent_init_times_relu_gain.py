"""Individual-claim reserving with an IRNN (ReLU Elman RNN, identity recurrent init).

Mechanism: the actuary follows Le et al. (2015) "IRNN" and initialises the recurrent
matrix to the identity, then "corrects" it for ReLU by multiplying it with
``nn.init.calculate_gain('relu')`` (= sqrt 2), as done for feed-forward He init.
A recurrent layer is a deep network in time: the hidden state is multiplied by
sqrt(2) at every development month, so with 48-64 monthly development periods its
scale grows by 2**(T/2) (~1e7..1e9) from step 0. The prediction of outstanding
liability is astronomically large, the MSE and its gradient overflow the first SGD
steps and the loss becomes non-finite within a couple of steps.

ORIGIN: ``rnn`` - the recurrent layer whose weight_hh is mis-initialised; the
activations blow up inside it (in time) before they reach the linear head.

Fix: plain identity initialisation (gain 1, the actual IRNN recipe); everything
else (data, optimiser, the small IRNN-style learning rate, steps) is unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "rnn"
SOURCE = ("Le, Jaitly & Hinton 2015 'A simple way to initialize recurrent networks of ReLUs' "
          "(identity recurrent init); common mistake of applying calculate_gain('relu') on top, "
          "cf. PyTorch forum threads on IRNN exploding hidden states; individual claim reserving "
          "RNNs (Kuo 2019 DeepTriangle; Delong & Wuthrich 2020 individual claims RNN).")


class ClaimDevRNN(nn.Module):
    def __init__(self, n_feat, hidden):
        super().__init__()
        self.rnn = nn.RNN(n_feat, hidden, nonlinearity="relu", batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.head(h[:, -1]).squeeze(-1)


def _claims(g, n, T):
    # severity (log-normal), settlement speed, reporting delay
    sev = torch.exp(torch.randn(n, generator=g) * 0.6)
    speed = 0.02 + 0.06 * torch.rand(n, generator=g)
    delay = torch.randint(0, 6, (n,), generator=g)
    t = torch.arange(T + 24, dtype=torch.float32)
    shape = torch.clamp(t[None, :] - delay[:, None].float(), min=0)
    pay_pattern = speed[:, None] * torch.exp(-speed[:, None] * shape) * (shape > 0)
    noise = 1 + 0.2 * torch.randn(n, T + 24, generator=g)
    incr = sev[:, None] * pay_pattern * noise.clamp(min=0)
    paid = incr[:, :T]
    cum = paid.cumsum(1)
    reported = (t[None, :T] >= delay[:, None].float()).float()
    case_res = (sev[:, None] - cum).clamp(min=0) * reported
    dev = (t[:T] / T).expand(n, T)
    x = torch.stack([paid * 4, cum, case_res, reported, dev], -1)
    y = incr[:, T:].sum(1)  # future payments = outstanding liability
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    T = [48, 56, 64][seed % 3]
    hidden = [32, 48, 64][seed % 3]
    bs = [48, 32, 64][seed % 3]
    lr = [1e-4, 5e-5, 4e-5][seed % 3]
    steps = 120
    model = ClaimDevRNN(5, hidden)
    with torch.no_grad():
        nn.init.eye_(model.rnn.weight_hh_l0)
        if not fixed:
            model.rnn.weight_hh_l0.mul_(nn.init.calculate_gain("relu"))
        nn.init.normal_(model.rnn.weight_ih_l0, std=0.02)
        model.rnn.bias_hh_l0.zero_()
        model.rnn.bias_ih_l0.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    # target standardised with statistics of a reference portfolio
    _, y_ref = _claims(torch.Generator().manual_seed(7), 4096, T)
    mu, sd = y_ref.mean(), y_ref.std()
    batches = []
    for _ in range(steps):
        x, y = _claims(g, bs, T)
        batches.append((x, (y - mu) / sd))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
