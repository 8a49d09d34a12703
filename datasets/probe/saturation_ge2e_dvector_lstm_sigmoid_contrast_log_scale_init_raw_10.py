"""GE2E speaker-verification d-vector (Wan et al. 2018): a 3-layer LSTM over log-mel
frames, a linear projection of the last frame, L2-normalised embeddings; per batch of
N speakers x M utterances the centroids (leave-one-out for the own speaker) and the
scaled cosine similarity matrix S = w * cos + b are formed in a `GE2EScore` module and
trained with the paper's *contrast* loss
    L = 1 - sigmoid(S_ji,j) + max_{k != j} sigmoid(S_ji,k).
The paper initialises w = 10, b = -5 and keeps w > 0.

Bug: to keep w positive the user parametrises it as w = exp(log_w) (a common trick) but
initialises `log_w` with the paper's value of w itself, 10.0 -- so w = e^10 ~ 22000.
Every similarity logit is then w*cos - 5 with |w*cos| in the thousands: the sigmoids are
exactly 0 or 1 in float32 and their derivative underflows to 0.  The contrast loss is a
piecewise-constant count of mis-ordered pairs, no gradient reaches w, b, the projection
or the LSTM, and the loss never moves from its starting value.

ORIGIN: `score` -- the GE2E scoring module whose similarity logits are scaled so far
that the sigmoid saturates.

Fix: initialise log_w = log(10) (w = 10 as in the paper).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "score"
SOURCE = ("Wan, Wang, Papir, Lopez Moreno, 'Generalized end-to-end loss for speaker "
          "verification' (ICASSP 2018), contrast variant, w=10 b=-5 init; PyTorch ports that "
          "parametrise w through exp() and copy the raw init value")


class GE2EScore(nn.Module):
    def __init__(self, log_w_init, b_init=-5.0):
        super().__init__()
        self.log_w = nn.Parameter(torch.tensor(float(log_w_init)))
        self.b = nn.Parameter(torch.tensor(float(b_init)))

    def forward(self, e, n_spk, n_utt):
        e = e.view(n_spk, n_utt, -1)
        total = e.sum(1, keepdim=True)
        cent_excl = F.normalize((total - e) / (n_utt - 1), dim=-1)          # (N, M, D) own speaker
        cent = F.normalize(total[:, 0] / n_utt, dim=-1)                       # (N, D)
        cos = torch.einsum("nmd,kd->nmk", e, cent)                            # (N, M, N)
        own = (e * cent_excl).sum(-1)                                         # (N, M)
        idx = torch.arange(n_spk)
        cos = cos.clone()
        cos[idx, :, idx] = own
        S = torch.exp(self.log_w) * cos + self.b
        return S.view(n_spk * n_utt, n_spk)


class DVectorGE2E(nn.Module):
    def __init__(self, n_mels, hidden, proj, layers, n_spk, n_utt, log_w_init):
        super().__init__()
        self.n_spk, self.n_utt = n_spk, n_utt
        self.lstm = nn.LSTM(n_mels, hidden, num_layers=layers, batch_first=True)
        self.proj = nn.Linear(hidden, proj)
        self.score = GE2EScore(log_w_init)

    def forward(self, mels):                                   # (N*M, T, n_mels)
        h, _ = self.lstm(mels)
        e = F.normalize(self.proj(h[:, -1]), dim=-1)
        return self.score(e, self.n_spk, self.n_utt)


def contrast_loss(S, spk):
    p = torch.sigmoid(S)
    pos = p.gather(1, spk[:, None])[:, 0]
    neg = p.masked_fill(F.one_hot(spk, S.shape[1]).bool(), -1.0).amax(1)
    return (1 - pos + neg).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_mels=24, T=30, hidden=64, proj=32, layers=3, N=6, M=5, lr=1e-3, steps=80),
           dict(n_mels=32, T=25, hidden=48, proj=32, layers=2, N=8, M=4, lr=2e-3, steps=70),
           dict(n_mels=24, T=35, hidden=64, proj=24, layers=3, N=5, M=6, lr=1e-3, steps=90)][seed % 3]
    n_pool = 40
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6060 + seed)
    spk_mean = 1.2 * torch.randn(n_pool, cfg["n_mels"], generator=g)
    spk_dyn = 0.6 * torch.randn(n_pool, cfg["n_mels"], generator=g)
    log_w0 = math.log(10.0) if fixed else 10.0
    model = DVectorGE2E(cfg["n_mels"], cfg["hidden"], cfg["proj"], cfg["layers"], cfg["N"], cfg["M"], log_w0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    t = torch.linspace(0, 1, cfg["T"])
    for _ in range(cfg["steps"]):
        spks = torch.randperm(n_pool, generator=g)[:cfg["N"]]
        x = []
        for s in spks.tolist():
            ph = 6.28 * torch.rand(cfg["M"], 1, 1, generator=g)
            utt = spk_mean[s] + spk_dyn[s] * torch.sin(6.28 * 3 * t[None, :, None] + ph) \
                + torch.randn(cfg["M"], cfg["T"], cfg["n_mels"], generator=g)
            x.append(utt)
        x = torch.cat(x)
        target = torch.arange(cfg["N"]).repeat_interleave(cfg["M"])
        batches.append((x, target))
    return dict(model=model, optimizer=opt, loss_fn=contrast_loss, batches=batches, steps=cfg["steps"])
