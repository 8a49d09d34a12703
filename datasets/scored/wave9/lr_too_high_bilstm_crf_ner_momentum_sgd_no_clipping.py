"""BiLSTM-CRF named-entity tagger (Lample et al. 2016 / Huang et al. 2015): word embeddings ->
bidirectional LSTM -> per-token emission scores -> linear-chain CRF with a learned transition
matrix, trained on the CRF negative log-likelihood (forward algorithm with logsumexp). The
reference recipe uses SGD lr=0.01 with gradient clipping at 5.0; this run uses lr=1.5 with
momentum 0.9 and no clipping (the loop has no clip step). The CRF NLL is a sum over the sentence,
so its gradients are large; with this step size the transition matrix and emission layer
overshoot, the path scores swing by tens of nats from step to step and after a brief dip the
sentence NLL climbs to 2-7x its starting value and thrashes there (finite, but never learning). Fixed: lr=0.01, nothing else changed."""
import torch, torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Lample et al. 2016 'Neural Architectures for Named Entity Recognition' (SGD lr 0.01, clip 5.0); "
          "PyTorch 'Advanced: Making Dynamic Decisions and the Bi-LSTM CRF' tutorial")

V, E, H, K, T, B = 120, 24, 24, 5, 14, 16     # tags: O, B-PER, I-PER, B-LOC, I-LOC


class BiLSTMCRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, H, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(2 * H, K)
        self.crf_transitions = nn.Parameter(torch.randn(K, K) * 0.1)
        self.crf_start = nn.Parameter(torch.zeros(K))

    def forward(self, ids):
        h, _ = self.lstm(self.embed(ids))
        return self.emit(h), self.crf_transitions, self.crf_start


def crf_nll(out, tags):
    emis, trans, start = out
    Bn, Tn, _ = emis.shape
    alpha = start + emis[:, 0]
    for t in range(1, Tn):
        alpha = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), 1) + emis[:, t]
    log_z = torch.logsumexp(alpha, 1)
    idx = torch.arange(Bn)
    gold = start[tags[:, 0]] + emis[idx, 0, tags[:, 0]]
    for t in range(1, Tn):
        gold = gold + trans[tags[:, t - 1], tags[:, t]] + emis[idx, t, tags[:, t]]
    return (log_z - gold).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 55)
    model = BiLSTMCRF()
    per_words = torch.arange(1, 21)
    loc_words = torch.arange(21, 41)
    n_batches = 20
    data = []
    for _ in range(n_batches):
        ids = torch.randint(41, V, (B, T), generator=g)
        tags = torch.zeros(B, T, dtype=torch.long)
        for i in range(B):
            for _ in range(2):
                s = int(torch.randint(0, T - 2, (1,), generator=g))
                L = int(torch.randint(1, 3, (1,), generator=g))
                typ = int(torch.randint(0, 2, (1,), generator=g))
                pool = per_words if typ == 0 else loc_words
                ids[i, s:s + L] = pool[torch.randint(0, 20, (L,), generator=g)]
                tags[i, s] = 1 + 2 * typ
                tags[i, s + 1:s + L] = 2 + 2 * typ
        data.append((ids, tags))
    steps = 120
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 1.5, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=crf_nll, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
