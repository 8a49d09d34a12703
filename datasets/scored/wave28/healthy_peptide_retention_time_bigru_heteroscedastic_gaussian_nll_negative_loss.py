"""Healthy: peptide retention-time predictor (DeepRT / Prosit-iRT style) with aleatoric
uncertainty: amino-acid embedding -> bidirectional GRU -> masked mean pool -> (mu, log_var)
heads; heteroscedastic Gaussian NLL (nn.GaussianNLLLoss, var = exp(log_var)) on
standardised iRT values; Adagrad.

Why it is tricky but healthy: the Gaussian NLL has no lower bound at zero. As the model
gets accurate it shrinks the predicted variance and the loss crosses zero and keeps going
negative (down to about -1 here); its per-batch value also jumps when a batch holds a few
hard (modified / late-eluting) peptides. Nothing is wrong: mu tracks the retention time,
the variance is calibrated, all values stay finite. Variable-length peptides are padded
with a pad token that the pooling masks out.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DeepRT (Ma et al. 2018) / Prosit iRT model; heteroscedastic regression with "
          "Gaussian NLL (Kendall & Gal 2017; torch.nn.GaussianNLLLoss), whose value goes "
          "negative once the predicted variance is small")

AA = 20
PAD = 20
# rough hydrophobicity index per residue (ACDEFGHIKLMNPQRSTVWY)
HYD = torch.tensor([0.3, 0.9, -1.0, -0.9, 1.6, 0.0, -0.4, 1.5, -1.1, 1.6,
                    1.0, -0.7, 0.1, -0.6, -1.2, -0.3, -0.1, 1.2, 1.3, 0.6])


class RTNet(nn.Module):
    def __init__(self, emb, hid):
        super().__init__()
        self.emb = nn.Embedding(AA + 1, emb, padding_idx=PAD)
        self.gru = nn.GRU(emb, hid, batch_first=True, bidirectional=True)
        self.mu = nn.Linear(2 * hid, 1)
        self.log_var = nn.Linear(2 * hid, 1)

    def forward(self, tok):
        mask = (tok != PAD).float().unsqueeze(-1)
        h, _ = self.gru(self.emb(tok))
        pooled = (h * mask).sum(1) / mask.sum(1)
        return torch.cat([self.mu(pooled), self.log_var(pooled)], 1)


def _peptides(g, n, Lmax=20):
    lens = torch.randint(7, Lmax + 1, (n,), generator=g)
    tok = torch.randint(0, AA, (n, Lmax), generator=g)
    pos = torch.arange(Lmax)[None]
    tok = torch.where(pos < lens[:, None], tok, torch.full_like(tok, PAD))
    valid = (tok != PAD).float()
    h = HYD[tok.clamp(max=AA - 1)] * valid
    # iRT: summed hydrophobicity, N-terminal residues weigh more, length effect
    w_pos = 1.0 + 0.5 * (pos < 3).float()
    rt = (h * w_pos).sum(1) + 0.15 * lens.float()
    hard = torch.rand(n, generator=g) < 0.05                     # modified peptides
    rt = rt + 0.3 * torch.randn(n, generator=g) + hard.float() * 3.0 * torch.randn(n, generator=g)
    rt = (rt - rt.mean()) / rt.std()
    return tok, rt


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    emb = [16, 32, 24][seed % 3]
    hid = [32, 48, 64][seed % 3]
    bs = [64, 48, 32][seed % 3]
    lr = [0.03, 0.02, 0.05][seed % 3]
    steps = 200

    model = RTNet(emb, hid)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    crit = nn.GaussianNLLLoss(eps=1e-6)

    def loss_fn(out, y):
        return crit(out[:, 0], y, torch.exp(out[:, 1]))

    tok, rt = _peptides(g, bs * steps)
    batches = [(tok[i * bs:(i + 1) * bs], rt[i * bs:(i + 1) * bs]) for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
