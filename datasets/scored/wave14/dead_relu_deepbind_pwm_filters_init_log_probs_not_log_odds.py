"""DeepBind-style TF-binding classifier (one-hot DNA -> Conv1d motif scanners -> ReLU ->
global max-pool -> FC -> logit) whose convolution filters are initialised from a
JASPAR-like motif database -- with log-probabilities instead of log-odds.

Mechanism
---------
Initialising the first layer with known PWMs is a common trick (e.g. Basset / DeepSEA
fine-tuning, "motif-initialised CNNs").  The correct weights are the log-odds
log(p / 0.25), which are positive for the consensus base.  Here the user wrote
``torch.log(pwm)``: every weight is <= log(p_max) < 0, the biases are zeroed, and the input is
one-hot, so every filter response is a sum of k negative numbers -- negative at every
position of every sequence.  The ReLU after the conv (``relu``) is therefore dead for all
filters and all inputs from step 0; its gradient is exactly zero, the max-pool outputs 0,
the FC layer sees a constant and only the output bias can learn.  The BCE loss sits at
ln 2 (balanced classes) for the whole run: a plateau without any NaN.

ORIGIN
------
``relu``: the activation that is dead from the first forward pass; the conv weights feed it
but the failure (zero activations, zero gradient) is the ReLU's.

Fix
---
Initialise the filters with log-odds ``torch.log(pwm / 0.25)`` (same motifs, same biases);
everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "relu"
SOURCE = ("DeepBind (Alipanahi et al. 2015) / motif-initialised CNNs for TF binding; "
          "PWM filter init with log-probabilities instead of log-odds -> all-dead ReLU")


def _motif_db(g, n_motifs, k):
    """Peaked PWMs (4 x k) with a strong consensus base per column."""
    cons = torch.randint(0, 4, (n_motifs, k), generator=g)
    strength = 0.75 + 0.22 * torch.rand(n_motifs, k, generator=g)
    pwm = ((1.0 - strength) / 3.0).unsqueeze(1).expand(-1, 4, -1).clone()
    pwm.scatter_(1, cons.unsqueeze(1), strength.unsqueeze(1))
    return pwm                                               # (n_motifs, 4, k)


def _sample_batch(g, pwm, bound_motifs, B, L):
    seq = torch.randint(0, 4, (B, L), generator=g)
    y = (torch.rand(B, generator=g) < 0.5).float()
    k = pwm.shape[-1]
    for i in range(B):
        if y[i] > 0:
            m = bound_motifs[int(torch.randint(0, len(bound_motifs), (1,), generator=g))]
            probs = pwm[m].t()                               # (k, 4)
            site = torch.multinomial(probs, 1, generator=g).squeeze(1)
            pos = int(torch.randint(0, L - k, (1,), generator=g))
            seq[i, pos:pos + k] = site
    x = F.one_hot(seq, 4).float().transpose(1, 2)            # (B, 4, L)
    return x, y


class DeepBind(nn.Module):
    def __init__(self, n_filters, k, hidden):
        super().__init__()
        self.conv = nn.Conv1d(4, n_filters, k)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveMaxPool1d(1)
        self.fc = nn.Linear(n_filters, hidden)
        self.fc_act = nn.ReLU()
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.pool(self.relu(self.conv(x))).squeeze(-1)
        return self.out(self.fc_act(self.fc(h))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(F=16, k=10, L=100, hidden=32, B=32, lr=1e-2, steps=120),
           dict(F=8, k=12, L=80, hidden=16, B=48, lr=1e-2, steps=90),
           dict(F=24, k=8, L=120, hidden=32, B=24, lr=5e-3, steps=140)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    pwm = _motif_db(g, cfg["F"], cfg["k"])
    model = DeepBind(cfg["F"], cfg["k"], cfg["hidden"])
    with torch.no_grad():                                    # motif-initialised scanners
        if fixed:
            model.conv.weight.copy_(torch.log(pwm / 0.25))   # log-odds vs uniform background
        else:
            model.conv.weight.copy_(torch.log(pwm))          # BUG: log-probabilities (all < 0)
        model.conv.bias.zero_()
    bound = [0, 3] if cfg["F"] > 3 else [0]
    batches = [_sample_batch(g, pwm, bound, cfg["B"], cfg["L"]) for _ in range(cfg["steps"])]
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=cfg["steps"])
