"""Supervised morphological segmentation for a low-resource polysynthetic language as BMES
character tagging (Begin / Middle / End / Single morph): a character CNN produces emission
scores and a hand-written linear-chain CRF (log-space forward algorithm) gives the sequence
negative log-likelihood, summed over the words of the batch.  Adam.

Why a naive monitor might flag it (all healthy):
- The CRF transition matrix contains -inf entries for forbidden BMES transitions (B->B, B->S,
  M->B, M->S, E->M, E->E, S->M, S->E) and forbidden start/end tags; they are added as a
  fixed mask, so the transition tensor used in every step holds -inf.  They never reach the
  loss: logsumexp over a row always has finite entries, gold paths never use a forbidden
  transition, and the gradient of logsumexp puts exactly zero weight on the -inf entries.
- The loss is a sum over 24-64 words of ~L*log(4) nats, so it starts in the hundreds and its
  scale changes with the batch size; it falls steadily.
- Gradients of the masked transition parameters are exactly zero at every step.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("BiLSTM/CNN-CRF BMES morphological segmentation (Kann et al. 2018; Ruokolainen et al. "
          "2013 CRF segmentation of low-resource languages); hand-written CRF with -inf "
          "constrained transitions as in AllenNLP's allowed_transitions / pytorch-crf.")

N_CHARS = 40
TAGS = ["B", "M", "E", "S"]
ALLOWED = {("B", "M"), ("B", "E"), ("M", "M"), ("M", "E"), ("E", "B"), ("E", "S"),
           ("S", "B"), ("S", "S")}


class CharCNNCRF(nn.Module):
    def __init__(self, emb, channels):
        super().__init__()
        self.emb = nn.Embedding(N_CHARS, emb)
        self.conv = nn.Sequential(nn.Conv1d(emb, channels, 5, padding=2), nn.ReLU(),
                                  nn.Conv1d(channels, channels, 3, padding=1), nn.ReLU())
        self.emit = nn.Linear(channels, 4)
        self.trans = nn.Parameter(torch.zeros(4, 4))
        self.start = nn.Parameter(torch.zeros(4))
        self.end = nn.Parameter(torch.zeros(4))
        mask = torch.full((4, 4), float("-inf"))
        for a, b in ALLOWED:
            mask[TAGS.index(a), TAGS.index(b)] = 0.0
        self.register_buffer("trans_mask", mask)
        se = torch.tensor([0.0, float("-inf"), float("-inf"), 0.0])      # start with B or S
        ee = torch.tensor([float("-inf"), float("-inf"), 0.0, 0.0])      # end with E or S
        self.register_buffer("start_mask", se)
        self.register_buffer("end_mask", ee)

    def forward(self, chars):
        h = self.conv(self.emb(chars).transpose(1, 2)).transpose(1, 2)
        return (self.emit(h), self.trans + self.trans_mask,
                self.start + self.start_mask, self.end + self.end_mask)


def crf_summed_nll(out, tags):
    emis, trans, start, end = out
    B, L, K = emis.shape
    # log partition
    alpha = start + emis[:, 0]
    for t in range(1, L):
        alpha = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), dim=1) + emis[:, t]
    log_z = torch.logsumexp(alpha + end, dim=1)
    # gold path score
    idx = torch.arange(B)
    score = start[tags[:, 0]] + emis[idx, 0, tags[:, 0]]
    for t in range(1, L):
        score = score + trans[tags[:, t - 1], tags[:, t]] + emis[idx, t, tags[:, t]]
    score = score + end[tags[:, -1]]
    return (log_z - score).sum()


def _bmes(g, n, L, boundary_after):
    x = torch.randint(0, N_CHARS, (n, L), generator=g)
    cut = boundary_after[x]                                      # morph ends after char t
    cut[:, -1] = True
    tags = torch.empty(n, L, dtype=torch.long)
    prev_cut = torch.ones(n, dtype=torch.bool)
    for t in range(L):
        begin = prev_cut
        endm = cut[:, t]
        tags[:, t] = torch.where(begin & endm, 3, torch.where(begin, 0, torch.where(endm, 2, 1)))
        prev_cut = endm
    return x, tags


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    channels = [64, 96, 48][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    bs = [32, 24, 64][seed % 3]
    L = 12
    steps = 120

    torch.manual_seed(seed)
    model = CharCNNCRF(24, channels)

    boundary_after = torch.rand(N_CHARS, generator=g) < 0.3
    batches = [_bmes(g, bs, L, boundary_after) for _ in range(steps)]

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=crf_summed_nll,
                batches=batches, steps=steps)
