"""Healthy: BiLSTM-CRF named-entity tagger (Lample et al. 2016) with a correct forward
algorithm (torch.logsumexp) and gold-path score; the loss is the CRF negative log-likelihood
SUMMED over the sentences of the batch (reduction='sum', as in many CRF libraries), with a
bucketing sampler that yields batches of very different sizes and sentence lengths; Adam,
no gradient clipping.

Looks alarming but is fine: the per-step loss jumps by 10x between a batch of 4 short sentences
and one of 24 long sentences, the NLL is a sum of log-partition terms (large positive numbers),
and the first steps are tens-hundreds.  Per-token it converges steadily.
ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Lample et al. 2016 'Neural Architectures for NER'; PyTorch 'Advanced: Making Dynamic "
          "Decisions and the Bi-LSTM CRF' tutorial; pytorch-crf reduction='sum' default")


class BiLSTMCRF(nn.Module):
    def __init__(self, V, e, h, n_tags):
        super().__init__()
        self.emb = nn.Embedding(V, e)
        self.lstm = nn.LSTM(e, h, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(2 * h, n_tags)
        self.trans = nn.Parameter(torch.zeros(n_tags, n_tags))    # trans[i, j]: i -> j
        self.start = nn.Parameter(torch.zeros(n_tags))

    def forward(self, x):
        e, _ = self.lstm(self.emb(x))
        return self.emit(e), self.trans, self.start


def crf_nll_sum(out, tags):
    emis, trans, start = out                      # emis (B, T, K)
    B, T, K = emis.shape
    alpha = start + emis[:, 0]
    for t in range(1, T):
        alpha = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), 1) + emis[:, t]
    logZ = torch.logsumexp(alpha, 1)
    gold = start[tags[:, 0]] + emis[:, 0].gather(1, tags[:, :1]).squeeze(1)
    for t in range(1, T):
        gold = gold + trans[tags[:, t - 1], tags[:, t]] + emis[:, t].gather(1, tags[:, t:t + 1]).squeeze(1)
    return (logZ - gold).sum()


def build(seed: int, fixed: bool = False) -> dict:
    e, h, lr = [(16, 16, 1e-2), (24, 16, 7.5e-3), (16, 24, 1e-2)][seed % 3]
    V = 40
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    model = BiLSTMCRF(V, e, h, 5)
    ent = torch.zeros(V, dtype=torch.long)
    ent[30:35] = 1        # PER words
    ent[35:40] = 2        # LOC words
    steps = 70
    batches = []
    for _ in range(steps):
        bs = int(torch.randint(4, 25, (1,), generator=g))
        T = int(torch.randint(5, 16, (1,), generator=g))
        x = torch.randint(0, V, (bs, T), generator=g)
        typ = ent[x]
        prev = torch.cat([torch.zeros(bs, 1, dtype=torch.long), typ[:, :-1]], 1)
        # BIO: 0=O, 1=B-PER, 2=I-PER, 3=B-LOC, 4=I-LOC
        tags = torch.zeros(bs, T, dtype=torch.long)
        tags[(typ == 1) & (prev != 1)] = 1
        tags[(typ == 1) & (prev == 1)] = 2
        tags[(typ == 2) & (prev != 2)] = 3
        tags[(typ == 2) & (prev == 2)] = 4
        batches.append((x, tags))
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    return dict(model=model, optimizer=opt, loss_fn=crf_nll_sum, batches=batches, steps=steps)
