"""Rationale extraction (Lei, Barzilay & Jaakkola 2016 style, with a continuous relaxation):
a generator (embedding -> BiGRU -> linear) scores every token, a sigmoid with temperature tau
turns the scores into a soft token mask, and an encoder (embedding -> GRU) predicts the document's
aspect score from the masked embeddings; MSE + a small sparsity penalty; Adam.  The generator's
output bias starts at -1 (the usual "start sparse" prior: ~27% of tokens selected).

Mechanism: the config's `temperature: 0.01` was meant for a Gumbel-softmax sampler but is used
as mask = sigmoid(logit / tau), so the pre-activations are 100x too large.  With the -1 bias every
mask value is sigmoid(-100 +- ...) = 0 exactly: the encoder sees all-zero input, the sigmoid's
derivative is 0 so the generator receives no gradient, and the loss stays at the variance of the
target (the predictor can only learn the mean).
ORIGIN: generator_gate, the nn.Sigmoid that saturates.
Fix: temperature 1.0 (pre-activations at their natural scale); nothing else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "generator_gate"
SOURCE = ("Lei, Barzilay & Jaakkola 2016 'Rationalizing Neural Predictions' (beer-review aspect "
          "ratings); relaxed-mask re-implementations with a sharpening temperature")


class Rationalizer(nn.Module):
    def __init__(self, V, e, h, tau):
        super().__init__()
        self.gen_emb = nn.Embedding(V, e)
        self.gen_rnn = nn.GRU(e, h, batch_first=True, bidirectional=True)
        self.gen_out = nn.Linear(2 * h, 1)
        self.generator_gate = nn.Sigmoid()
        self.enc_emb = nn.Embedding(V, e)
        self.enc_rnn = nn.GRU(e, h, batch_first=True)
        self.enc_out = nn.Linear(h, 1)
        self.tau = tau
        nn.init.constant_(self.gen_out.bias, -1.0)

    def forward(self, x):
        g, _ = self.gen_rnn(self.gen_emb(x))
        mask = self.generator_gate(self.gen_out(g) / self.tau)          # (B, T, 1)
        _, hN = self.enc_rnn(self.enc_emb(x) * mask)
        return self.enc_out(hN[-1]).squeeze(-1), mask.squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    e, h, bs, lr = [(16, 16, 32, 1e-2), (24, 16, 24, 8e-3), (16, 24, 40, 1e-2)][seed % 3]
    V, T = 30, 12
    tau = 1.0 if fixed else 0.01
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    model = Rationalizer(V, e, h, tau)
    sentiment = torch.zeros(V)
    sentiment[:5] = 1.0            # "aroma" words that decide the aspect score
    sentiment[5:10] = -1.0
    steps = 90
    batches = []
    for _ in range(steps):
        x = torch.randint(0, V, (bs, T), generator=g)
        y = sentiment[x].sum(1) / 2.0
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, y):
        pred, mask = out
        return F.mse_loss(pred, y) + 0.01 * mask.mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
