"""Online handwriting generation (Graves 2013, 'Generating sequences with RNNs', section 4): an LSTM
reads pen offsets (dx, dy, pen-up) and a mixture-density head outputs, for the next point, M
bivariate Gaussians (weights, means, log-std, correlation via tanh) plus a Bernoulli end-of-stroke
probability. The loss is the hand-written mixture negative log-likelihood (logsumexp over the
components, BCE for the pen bit), RMSprop.

Mechanism: the paper trains with RMSprop at lr 1e-4; the config was written as 1e-2 (the exponent
slipped when the value was copied from a table). With per-parameter RMSprop steps of ~lr, the MDN
head's log-sigma and correlation outputs are moved much further per step than the likelihood
surface allows: components collapse onto a few training points (sigma -> 0, |rho| -> 1), the
per-point log-density of the other points falls off a cliff, the gradients through
1/(sigma^2 (1-rho^2)) explode and within about ten steps the loss goes to inf/NaN.

ORIGIN: None (lr_too_high is a global optimiser setting; every parameter is over-stepped).

Fix: RMSprop lr 1e-3 (still 10x the paper's value, which is the usual speed-up people use on
small data); same model, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Graves 2013 arXiv:1308.0850 handwriting synthesis (RMSprop lr 1e-4, clipping); many "
          "re-implementations report NaN MDN losses when the learning rate is raised (e.g. "
          "hardmaru write-rnn-tensorflow / sjvasquez handwriting-synthesis issues)")


class HandwritingMDN(nn.Module):
    def __init__(self, hidden, n_mix, layers):
        super().__init__()
        self.n_mix = n_mix
        self.lstm = nn.LSTM(3, hidden, num_layers=layers, batch_first=True)
        self.mdn = nn.Linear(hidden, 6 * n_mix + 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        p = self.mdn(h)
        m = self.n_mix
        return (p[..., :m], p[..., m:2 * m], p[..., 2 * m:3 * m], p[..., 3 * m:4 * m],
                p[..., 4 * m:5 * m], p[..., 5 * m:6 * m], p[..., 6 * m])


def mdn_nll(out, target):
    logit_pi, mu1, mu2, log_s1, log_s2, rho_raw, e_logit = out
    x1, x2, eos = target[..., 0:1], target[..., 1:2], target[..., 2]
    s1, s2, rho = torch.exp(log_s1), torch.exp(log_s2), torch.tanh(rho_raw)
    z1, z2 = (x1 - mu1) / s1, (x2 - mu2) / s2
    one_m_r2 = 1 - rho ** 2
    log_n = (-(z1 ** 2 + z2 ** 2 - 2 * rho * z1 * z2) / (2 * one_m_r2)
             - math.log(2 * math.pi) - log_s1 - log_s2 - 0.5 * torch.log(one_m_r2))
    log_mix = torch.logsumexp(torch.log_softmax(logit_pi, -1) + log_n, -1)
    bce = nn.functional.binary_cross_entropy_with_logits(e_logit, eos, reduction="none")
    return (-log_mix + bce).mean()


def _strokes(g, n, t_len):
    t = torch.arange(t_len).float().view(1, -1)
    freq = 0.35 + 0.15 * torch.rand(n, 1, generator=g)
    ph = 2 * math.pi * torch.rand(n, 1, generator=g)
    amp = 0.8 + 0.4 * torch.rand(n, 1, generator=g)
    slant = 0.3 * torch.randn(n, 1, generator=g)
    dx = 0.35 + amp * 0.5 * torch.cos(freq * t + ph) + 0.08 * torch.randn(n, t_len, generator=g)
    dy = amp * torch.sin(freq * t + ph) + slant * dx + 0.08 * torch.randn(n, t_len, generator=g)
    pen = (torch.rand(n, t_len, generator=g) < 0.06).float()   # end of stroke
    dx = dx + pen * 1.5  # jump to the next letter after a pen lift
    seq = torch.stack([dx, dy, pen], -1)
    seq[..., :2] = (seq[..., :2] - seq[..., :2].mean((0, 1))) / seq[..., :2].std((0, 1))
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    hidden = [64, 96, 128][seed % 3]
    n_mix = [5, 8, 6][seed % 3]
    layers = [1, 2, 1][seed % 3]
    bs = [16, 24, 20][seed % 3]
    t_len = 40
    steps = 120
    lr = 1e-3 if fixed else [3e-2, 2e-2, 1.5e-2][seed % 3]
    seq = _strokes(g, steps * bs, t_len + 1)
    torch.manual_seed(seed)
    model = HandwritingMDN(hidden, n_mix, layers)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.95, eps=1e-4, momentum=0.9)
    batches = [(seq[i * bs:(i + 1) * bs, :-1], seq[i * bs:(i + 1) * bs, 1:]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": mdn_nll, "batches": batches, "steps": steps}
