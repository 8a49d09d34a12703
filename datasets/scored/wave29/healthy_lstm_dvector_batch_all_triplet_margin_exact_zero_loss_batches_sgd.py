"""Healthy: LSTM d-vector speaker embedder trained with a batch-all triplet loss that often hits 0.

What looks wrong but is not: a d-vector model (LSTM over log-mel frames -> last hidden state ->
Linear -> L2-normalised embedding) is trained with SGD + momentum on a batch-all triplet hinge
``relu(d(a,p) - d(a,n) + margin)`` averaged over every (anchor, positive, negative) triple of a
P-speakers x K-utterances batch.  As the embedding separates the speakers, more and more
batches have *every* triplet satisfied: the loss is exactly 0.0 and every gradient is exactly
zero on those steps (the optimiser still moves on momentum), interleaved with small non-zero
losses when a batch holds a hard pair of speakers.  A monitor that treats exactly-zero loss /
zero gradients as "dead" or "vanished" would flag it; the model is in fact converged on the
training speakers, and the loss curve falls from ~0.1 to 0 within ~50 steps, with
exact-zero batches on 30-50% of the later steps.

ORIGIN: None (healthy).

Fix: none needed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Wan et al. 2018 / Heigold et al. 2016 d-vector LSTM speaker embeddings; Hermans et al. "
          "2017, 'In defense of the triplet loss' (batch-all variant, zero-loss batches once "
          "margins are met)")


class DVector(nn.Module):
    def __init__(self, n_mels, hid, emb):
        super().__init__()
        self.lstm = nn.LSTM(n_mels, hid, batch_first=True)
        self.proj = nn.Linear(hid, emb)

    def forward(self, x):                               # (B, T, n_mels)
        _, (h, _) = self.lstm(x)
        return F.normalize(self.proj(h[-1]), dim=-1)


def batch_all_triplet(emb, spk, margin=0.3):
    d = torch.cdist(emb, emb).pow(2)                    # squared distances in [0, 4]
    same = spk.unsqueeze(0) == spk.unsqueeze(1)
    eye = torch.eye(len(spk), dtype=torch.bool)
    pos = same & ~eye
    neg = ~same
    trip = d.unsqueeze(2) - d.unsqueeze(1) + margin     # [a, p, n]
    valid = pos.unsqueeze(2) & neg.unsqueeze(1)
    return F.relu(trip)[valid].mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(17000 + seed)
    hid = [64, 96, 48][seed % 3]
    emb = [32, 48, 24][seed % 3]
    P, K = [(6, 4), (8, 3), (5, 5)][seed % 3]
    lr = [0.1, 0.08, 0.12][seed % 3]
    n_spk, n_mels, T, steps = 20, 24, 30, 200

    voice = 0.6 * torch.randn(n_spk, n_mels, generator=g)
    chan_basis = torch.randn(4, n_mels, generator=g)            # channel / session variability
    batches = []
    for _ in range(steps):
        spk = torch.randperm(n_spk, generator=g)[:P].repeat_interleave(K)
        chan = 0.3 * torch.randn(P * K, 4, generator=g) @ chan_basis
        x = (voice[spk] + chan).unsqueeze(1) + 0.5 * torch.randn(P * K, T, n_mels, generator=g)
        batches.append((x, spk))

    torch.manual_seed(seed)
    model = DVector(n_mels, hid, emb)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=batch_all_triplet, batches=batches,
                steps=steps)
