"""GRU trained on a delayed match-to-sample working-memory task with a variable choice set
(as in monkey multi-target DMS variants): a sample stimulus (one of 6) is shown, a delay follows,
then 2-4 choice targets appear on the screen and the network must pick the target matching the
sample. The readout produces logits for all 6 targets; targets that are not on the screen in a
trial are masked with -inf before the cross-entropy. Loss only on the response epoch.

Why it is healthy although a naive monitor would flag it: the logits tensor contains -inf on
every trial (masked unavailable choices) and softmax gives exact zeros there; all fixation and
delay time steps contribute exactly zero loss and zero gradient to the readout; the hidden
state gradient is sparse in time. But the correct target is always available, so -inf never
reaches the selected log-probability, log_softmax handles the -inf entries exactly (their
gradient is 0), and the network learns to hold the sample through the delay.

ORIGIN = None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Delayed match-to-sample working-memory RNN models (e.g. Masse et al. 2019; Yang et al. "
          "2019 multitask RNNs with response-epoch loss masks); action masking with -inf logits "
          "as in RL/choice models")


class DMSGRU(nn.Module):
    def __init__(self, n_in, hid, n_choice):
        super().__init__()
        self.gru = nn.GRU(n_in, hid, batch_first=True)
        self.readout = nn.Linear(hid, n_choice)

    def forward(self, x, avail):
        h, _ = self.gru(x)
        logits = self.readout(h[:, -3:].mean(1))  # response epoch
        return logits.masked_fill(~avail, float("-inf"))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(20000 + seed)
    hid = [64, 80, 48][seed % 3]
    delay = [10, 12, 8][seed % 3]
    bs = [64, 48, 80][seed % 3]
    lr = [5e-3, 6e-3, 6e-3][seed % 3]
    K, steps = 6, 250
    batches = []
    for _ in range(steps):
        sample = torch.randint(0, K, (bs,), generator=g)
        n_show = torch.randint(2, 5, (bs,), generator=g)
        scores = torch.rand(bs, K, generator=g)
        scores[torch.arange(bs), sample] = 2.0  # the matching target is always shown
        order = scores.argsort(1, descending=True)
        avail = torch.zeros(bs, K, dtype=torch.bool)
        for k in range(4):
            sel = k < n_show
            avail[torch.arange(bs)[sel], order[sel, k]] = True
        T = 4 + delay + 4
        x = torch.zeros(bs, T, 2 * K + 1)
        x[:, :T - 4, -1] = 1.0  # fixation
        for t in range(4):
            x[torch.arange(bs), t, sample] = 1.0
        x[:, T - 4:, K:2 * K] = avail[:, None, :].float()  # choice targets on screen
        x = x + 0.1 * torch.randn(x.shape, generator=g)
        batches.append(((x, avail), sample))
    torch.manual_seed(seed)
    model = DMSGRU(2 * K + 1, hid, K)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
