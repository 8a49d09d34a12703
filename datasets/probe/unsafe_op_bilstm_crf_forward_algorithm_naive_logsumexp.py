"""BiLSTM-CRF named-entity tagger whose CRF partition function (the forward algorithm over tag
transitions) is vectorised by hand with a naive log-sum-exp: log(sum(exp(alpha + trans))).
The forward variable alpha (log-score of all paths so far) grows by about log(#tags) + the best emission
score per token, i.e. with sentence length and with the tagger's confidence; once it passes ~88 on a
long sentence, exp() overflows float32 to inf, log Z is inf and backward turns it into NaN. The run is
calm for ~50 steps, then the growing emissions push it over. fixed=True: the max-shifted torch.logsumexp.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "crf"
SOURCE = ("PyTorch tutorial 'Advanced: Making Dynamic Decisions and the Bi-LSTM CRF' (its log_sum_exp "
          "subtracts the max 'in a numerically stable way'); batched re-implementations that drop the max "
          "shift and report inf/NaN loss on long sentences (Lample et al. 2016 architecture)")

VOCAB, PAD = 2000, 0
TYPES = 4                      # PER, LOC, ORG, MISC
N_TAGS = 1 + 2 * TYPES         # O, B-x, I-x
BATCH = 32
MIN_LEN, MAX_LEN = 6, 26


def naive_logsumexp(x, dim):
    return torch.log(torch.sum(torch.exp(x), dim=dim))


class CRF(nn.Module):
    def __init__(self, n_tags, stable):
        super().__init__()
        self.transitions = nn.Parameter(torch.empty(n_tags, n_tags).uniform_(-0.1, 0.1))  # [from, to]
        self.start_transitions = nn.Parameter(torch.empty(n_tags).uniform_(-0.1, 0.1))
        self.end_transitions = nn.Parameter(torch.empty(n_tags).uniform_(-0.1, 0.1))
        self.lse = torch.logsumexp if stable else naive_logsumexp

    def forward(self, emissions, tags, mask):
        """Mean negative log-likelihood of the gold tag paths. emissions [B,T,K], tags/mask [B,T]."""
        B, T, K = emissions.shape
        # --- score of the gold path
        emit = emissions.gather(2, tags[:, :, None]).squeeze(2) * mask
        trans = self.transitions[tags[:, :-1], tags[:, 1:]] * mask[:, 1:]
        last = tags.gather(1, (mask.sum(1).long() - 1)[:, None]).squeeze(1)
        gold = self.start_transitions[tags[:, 0]] + emit.sum(1) + trans.sum(1) + self.end_transitions[last]
        # --- forward algorithm: log partition function
        alpha = self.start_transitions[None] + emissions[:, 0]
        for t in range(1, T):
            nxt = self.lse(alpha[:, :, None] + self.transitions[None], dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t, None] > 0, nxt, alpha)
        log_z = self.lse(alpha + self.end_transitions[None], dim=1)
        return (log_z - gold).mean()


class BiLSTMCRF(nn.Module):
    def __init__(self, stable):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, 64, padding_idx=PAD)
        self.lstm = nn.LSTM(64, 64, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(128, N_TAGS)
        self.crf = CRF(N_TAGS, stable)

    def forward(self, words):
        h, _ = self.lstm(self.embedding(words))
        return self.hidden2tag(h)  # emission scores


def _sentence(g):
    n = int(torch.randint(MIN_LEN, MAX_LEN + 1, (1,), generator=g))
    words, tags = [], []
    while len(words) < n:
        if torch.rand(1, generator=g).item() < 0.25:
            typ = int(torch.randint(0, TYPES, (1,), generator=g))
            cue = 20 + typ * 5 + int(torch.randint(0, 5, (1,), generator=g))  # "Mr.", "in", "at", ...
            words.append(cue)
            tags.append(0)
            span = int(torch.randint(1, 4, (1,), generator=g))
            lo = 100 + typ * 200                                         # entity lexicon per type
            for k in range(span):
                words.append(lo + int(torch.randint(0, 200, (1,), generator=g)))
                tags.append(1 + typ if k == 0 else 1 + TYPES + typ)
        else:
            words.append(900 + int(torch.randint(0, VOCAB - 900, (1,), generator=g)))
            tags.append(0)
    return words[:n], tags[:n]


def _make_batches(g, steps):
    batches = []
    for _ in range(steps):
        sents = [_sentence(g) for _ in range(BATCH)]
        T = max(len(w) for w, _ in sents)
        words = torch.full((BATCH, T), PAD, dtype=torch.long)
        tags = torch.full((BATCH, T), -1, dtype=torch.long)
        for i, (w, t) in enumerate(sents):
            words[i, :len(w)] = torch.tensor(w)
            tags[i, :len(t)] = torch.tensor(t)
        batches.append((words, tags))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    steps = 140
    model = BiLSTMCRF(stable=fixed)

    def loss_fn(emissions, tags):
        mask = (tags >= 0).float()
        return model.crf(emissions.float(), tags.clamp_min(0), mask)

    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn,
                batches=_make_batches(g, steps), steps=steps, amp_dtype=None, scaler=None)
