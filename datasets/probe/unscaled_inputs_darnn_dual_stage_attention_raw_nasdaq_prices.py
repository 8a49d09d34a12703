"""DA-RNN (Qin et al. 2017), the dual-stage attention RNN for NASDAQ-100 style
forecasting: an input-attention encoder LSTM re-weights the n driving series (the
constituent stock prices) at every step, a temporal-attention decoder LSTM attends over
the encoder states and also consumes the target history y_1..y_{T-1} (the index level);
the output is the next index value y_T.  MSE loss, Adam lr 1e-3 (the paper's setting).

Bug: the raw price table is fed as-is -- driving series are share prices in dollars
(~20 - 900) and the target is the index level (~3000 - 5000).  The input-attention
scores v^T tanh(W[h;s] + U x^k) see inputs of hundreds, so the tanh units are pinned at
+-1 from the first step; the encoder LSTM gets inputs of hundreds, and the loss starts at
~1e7-1e8 because the network output is O(1) while the target is in the thousands.  With
Adam's ~1e-3 steps the output layer would need thousands of steps to climb to the index
level, and the saturated tanh/LSTM units pass almost no gradient: the loss stays at
1e7-1e8 for the whole run.

ORIGIN: `encoder.attn_x` -- the first layer that receives the unscaled price series
(the input-attention projection U x^k); the encoder LSTM input is the same raw data.

Fix: standardise each driving series and the target with training-set mean/std (and
de-standardise predictions for reporting).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "encoder.attn_x"
SOURCE = ("Qin, Song, Chen, Cheng, Jiang, Cottrell, 'A dual-stage attention-based recurrent "
          "neural network for time series prediction' (IJCAI 2017), NASDAQ-100 dataset; "
          "PyTorch re-implementations trained on the raw CSV prices")


class InputAttnEncoder(nn.Module):
    def __init__(self, n_series, T, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.LSTMCell(n_series, hidden)
        self.attn_hs = nn.Linear(2 * hidden, T)
        self.attn_x = nn.Linear(T, T)
        self.attn_v = nn.Linear(T, 1, bias=False)

    def forward(self, X):                        # X: (B, T, n)
        B, T, n = X.shape
        h = X.new_zeros(B, self.hidden)
        c = X.new_zeros(B, self.hidden)
        series = X.transpose(1, 2)               # (B, n, T): x^k over the window
        ux = self.attn_x(series)                 # (B, n, T)
        states = []
        for t in range(T):
            e = self.attn_v(torch.tanh(self.attn_hs(torch.cat([h, c], 1))[:, None, :] + ux))[..., 0]
            alpha = torch.softmax(e, dim=1)      # (B, n)
            h, c = self.cell(alpha * X[:, t], (h, c))
            states.append(h)
        return torch.stack(states, 1)            # (B, T, H)


class TemporalAttnDecoder(nn.Module):
    def __init__(self, enc_hidden, dec_hidden):
        super().__init__()
        self.dec_hidden = dec_hidden
        self.attn_ds = nn.Linear(2 * dec_hidden, enc_hidden)
        self.attn_h = nn.Linear(enc_hidden, enc_hidden)
        self.attn_v = nn.Linear(enc_hidden, 1, bias=False)
        self.y_tilde = nn.Linear(enc_hidden + 1, 1)
        self.cell = nn.LSTMCell(1, dec_hidden)
        self.out = nn.Sequential(nn.Linear(dec_hidden + enc_hidden, dec_hidden), nn.Linear(dec_hidden, 1))

    def forward(self, H, y_hist):                # H: (B, T, He), y_hist: (B, T-1)
        B, T, _ = H.shape
        d = H.new_zeros(B, self.dec_hidden)
        s = H.new_zeros(B, self.dec_hidden)
        uh = self.attn_h(H)
        ctx = H.new_zeros(B, H.shape[-1])
        for t in range(T - 1):
            l = self.attn_v(torch.tanh(self.attn_ds(torch.cat([d, s], 1))[:, None, :] + uh))[..., 0]
            beta = torch.softmax(l, dim=1)
            ctx = (beta[..., None] * H).sum(1)
            yt = self.y_tilde(torch.cat([ctx, y_hist[:, t:t + 1]], 1))
            d, s = self.cell(yt, (d, s))
        return self.out(torch.cat([d, ctx], 1))


class DARNN(nn.Module):
    def __init__(self, n_series, T, enc_hidden, dec_hidden):
        super().__init__()
        self.encoder = InputAttnEncoder(n_series, T, enc_hidden)
        self.decoder = TemporalAttnDecoder(enc_hidden, dec_hidden)

    def forward(self, X, y_hist):
        return self.decoder(self.encoder(X), y_hist)


def _market(g, n_series, length):
    base = 20 + 880 * torch.rand(n_series, generator=g)
    vol = 0.005 + 0.015 * torch.rand(n_series, generator=g)
    factor = 0.008 * torch.randn(length, generator=g).cumsum(0)      # common market factor
    beta = 0.5 + torch.rand(n_series, generator=g)
    idio = (vol[None] * torch.randn(length, n_series, generator=g)).cumsum(0)
    prices = base[None] * torch.exp(beta[None] * factor[:, None] + idio)
    w = torch.rand(n_series, generator=g)
    w = w / (w * base).sum() * 4000.0
    index = (prices * w[None]).sum(1) + 2.0 * torch.randn(length, generator=g)
    return prices, index


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=16, T=10, enc=32, dec=32, bs=64, steps=80),
           dict(n=24, T=8, enc=48, dec=32, bs=32, steps=90),
           dict(n=12, T=12, enc=32, dec=48, bs=48, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1717 + seed)
    prices, index = _market(g, cfg["n"], 3000)
    if fixed:  # z-score with training-set statistics
        prices = (prices - prices.mean(0)) / prices.std(0)
        index = (index - index.mean()) / index.std()
    model = DARNN(cfg["n"], cfg["T"], cfg["enc"], cfg["dec"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    T = cfg["T"]
    batches = []
    for _ in range(cfg["steps"]):
        start = torch.randint(0, prices.shape[0] - T, (cfg["bs"],), generator=g)
        X = torch.stack([prices[s:s + T] for s in start.tolist()])
        yw = torch.stack([index[s:s + T] for s in start.tolist()])
        batches.append(((X, yw[:, :T - 1]), yw[:, T - 1:]))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=cfg["steps"])
