"""Churn model over a customer's event sequence pulled from a feature store: 24 weekly event
vectors go through an nn.LSTM and the last hidden state feeds a churn logit. Whether a customer
churns is decided by their engagement accumulated over all weeks (a running sum of the
engagement channel), so the LSTM has to integrate across the whole sequence; the last week
alone says almost nothing. The team's init helper is meant to apply
the usual "forget-gate bias = +1" trick (Jozefowicz et al. 2015), but writes the forget slice of
BOTH bias vectors with the wrong sign (-2.5 each, -5 in total). The forget gate starts at
sigmoid(-5) ~ 0.007, so the cell state is wiped every step, the gradient to the onboarding weeks is
multiplied by ~0.007 per step (the model effectively sees only the last week), and even the forget-bias gradient that would undo the mistake is
vanishingly small. The loss sits at the class-prior entropy without any NaN. Fixed: the intended
init (forget-gate bias +1 on b_ih, 0 on b_hh).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "encoder"
SOURCE = ("Jozefowicz et al. 2015 forget-gate bias=1 init (Keras unit_forget_bias); common PyTorch forum "
          "snippets that fill bias[H:2H] of both b_ih and b_hh; sign typo gives a forgetful LSTM")

T, D, H = 24, 6, 32


class ChurnLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(D, H, batch_first=True)
        self.head = nn.Linear(H, 1)

    def forward(self, events):
        out, (h, c) = self.encoder(events)
        return self.head(h[-1]).squeeze(-1)


def init_forget_bias(lstm, value_ih, value_hh):
    for name, p in lstm.named_parameters():
        if name.startswith("bias_ih"):
            p.data[H:2 * H].fill_(value_ih)
        elif name.startswith("bias_hh"):
            p.data[H:2 * H].fill_(value_hh)


def loss_fn(out, y):
    return F.binary_cross_entropy_with_logits(out, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ChurnLSTM()
    if fixed:
        init_forget_bias(model.encoder, 1.0, 0.0)
    else:
        init_forget_bias(model.encoder, -2.5, -2.5)   # sign typo: meant +
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, T, D, generator=g)
        engagement = x[:, :, 0].sum(1) + 0.5 * x[:, :, 1].sum(1)
        y = (engagement > 0).float()
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
