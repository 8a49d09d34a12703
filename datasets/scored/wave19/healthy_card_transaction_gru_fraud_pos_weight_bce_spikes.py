"""Healthy: GRU over a card's recent transactions, BCE with pos_weight ~ 1/fraud-rate.

What looks alarming: fraud is ~2-4% of the sequences, so BCEWithLogitsLoss uses
pos_weight = n_neg / n_pos (25-45). Each fraudulent sequence in a batch therefore weighs as
much as dozens of legitimate ones: the batch loss is ~0.7 when a batch happens to contain no
fraud and jumps to 2-5 when it contains several, and late in training a batch with one
missed fraud still spikes several times above its neighbours. Gradients on those steps are
correspondingly large.

Why it is healthy: the spikes are the re-weighting of a rare class, not instability: the
model learns the card-testing pattern (bursts of tiny card-not-present payments at new
merchants followed by a large one) and both the legitimate-only and the fraud-bearing
batch losses go down; the mean loss ends far below its start.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Sequence-based card-fraud detection (e.g. Jurgovsky et al. 2018 'Sequence "
          "classification for credit-card fraud detection', LSTM/GRU over transaction "
          "histories) with BCEWithLogitsLoss(pos_weight=n_neg/n_pos) for class imbalance")


class TxnGRU(nn.Module):
    def __init__(self, n_mcc, emb, d_num, hidden, layers):
        super().__init__()
        self.mcc = nn.Embedding(n_mcc, emb)
        self.gru = nn.GRU(emb + d_num, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, mcc, num):
        h, _ = self.gru(torch.cat([self.mcc(mcc), num], dim=-1))
        return self.head(h[:, -1]).squeeze(-1)


def _sequences(g, n, T, n_mcc, fraud_rate):
    y = (torch.rand(n, generator=g) < fraud_rate).float()
    home = torch.randint(0, n_mcc, (n, 3), generator=g)
    pick = torch.randint(0, 3, (n, T), generator=g)
    mcc = home.gather(1, pick)
    log_amt = 3.5 + 0.8 * torch.randn(n, T, generator=g)
    dt = torch.rand(n, T, generator=g) * 2.0          # days since previous transaction
    cnp = (torch.rand(n, T, generator=g) < 0.2).float()  # card-not-present
    foreign = (torch.rand(n, T, generator=g) < 0.05).float()
    k = int(torch.randint(3, 6, (1,), generator=g))
    fr = y.bool()
    if fr.any():
        nf = int(fr.sum())
        # card testing: k tiny CNP payments at unseen merchants minutes apart, then a big one
        mcc[fr, -k - 1:] = torch.randint(0, n_mcc, (nf, k + 1), generator=g)
        log_amt[fr, -k - 1:-1] = 0.3 + 0.3 * torch.rand(nf, k, generator=g)
        log_amt[fr, -1] = 6.5 + 0.5 * torch.randn(nf, generator=g)
        dt[fr, -k - 1:] = 0.01 * torch.rand(nf, k + 1, generator=g)
        cnp[fr, -k - 1:] = 1.0
        foreign[fr, -1] = (torch.rand(nf, generator=g) < 0.5).float()
        # a quarter of the frauds are account takeovers without the testing burst
        ato = fr & (torch.rand(n, generator=g) < 0.25)
        if ato.any():
            na = int(ato.sum())
            log_amt[ato, -k - 1:-1] = 3.5 + 0.8 * torch.randn(na, k, generator=g)
            dt[ato, -k - 1:] = torch.rand(na, k + 1, generator=g) * 2.0
            cnp[ato, -k - 1:-1] = 0.0
            foreign[ato, -1] = (torch.rand(na, generator=g) < 0.8).float()
    # legitimate big-ticket purchases, sometimes abroad and online
    big = (~fr) & (torch.rand(n, generator=g) < 0.08)
    if big.any():
        nb = int(big.sum())
        log_amt[big, -1] = 6.3 + 0.6 * torch.randn(nb, generator=g)
        cnp[big, -1] = (torch.rand(nb, generator=g) < 0.5).float()
        foreign[big, -1] = (torch.rand(nb, generator=g) < 0.3).float()
    num = torch.stack([(log_amt - 3.5) / 1.2, (dt - 1.0) / 0.6, cnp, foreign], dim=-1)
    return (mcc, num), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11000 + seed)
    cfg = [
        dict(T=20, emb=8, hidden=48, layers=1, bs=64, lr=3e-3, steps=120, rate=0.03),
        dict(T=30, emb=12, hidden=32, layers=2, bs=96, lr=3e-3, steps=120, rate=0.02),
        dict(T=16, emb=8, hidden=64, layers=1, bs=48, lr=5e-3, steps=140, rate=0.04),
    ][seed % 3]
    n_mcc = 60
    model = TxnGRU(n_mcc, cfg["emb"], 4, cfg["hidden"], cfg["layers"])
    batches = [_sequences(g, cfg["bs"], cfg["T"], n_mcc, cfg["rate"])
               for _ in range(cfg["steps"])]
    pos_weight = torch.tensor((1 - cfg["rate"]) / cfg["rate"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer,
                loss_fn=nn.BCEWithLogitsLoss(pos_weight=pos_weight),
                batches=batches, steps=cfg["steps"])
