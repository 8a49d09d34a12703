"""Grammar-constrained AST decoder for semantic parsing (TRANX / Yin & Neubig style) -- healthy.

Model: a BiLSTM encoder reads the natural-language utterance; an LSTM decoder emits the
linearised derivation of the program's AST one production rule at a time (teacher forcing).
At every step the frontier non-terminal is known, and all productions whose left-hand side is a
different non-terminal are masked with -inf (`masked_fill`) before the softmax: the decoder can
only produce grammatical ASTs. Loss: cross-entropy over productions with ignore_index for the
padding of shorter derivations; optimiser AdamW.

Why it looks alarming but is healthy:
- the model's output logits contain -inf in most columns on every step (a naive monitor sees
  non-finite outputs), but the gold production is always allowed, so the log-softmax at the
  target is finite and the -inf columns get zero probability and zero gradient;
- padded steps use the target -100 (ignored) and get an all-allowed mask, so no row of the
  softmax is entirely -inf and no NaN can appear in the backward pass;
- derivation lengths, and therefore the number of counted steps, vary from batch to batch.
It learns: the loss falls to a fraction of its start.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Yin & Neubig 2017/2018 (syntactic neural model, TRANX): production masking by the "
          "frontier non-terminal with -inf before softmax; ignore_index padding")


class GrammarDecoder(nn.Module):
    def __init__(self, vocab, n_prod, n_nt, d, hidden, lhs):
        super().__init__()
        self.wemb = nn.Embedding(vocab, d)
        self.encoder = nn.LSTM(d, hidden, batch_first=True, bidirectional=True)
        self.pemb = nn.Embedding(n_prod + 1, d)              # +1: <start>
        self.ntemb = nn.Embedding(n_nt, d)
        self.decoder = nn.LSTM(3 * d, hidden, batch_first=True)
        self.bridge = nn.Linear(2 * hidden, d)
        self.att_q = nn.Linear(hidden, 2 * hidden, bias=False)
        self.out = nn.Linear(3 * hidden, n_prod)
        self.register_buffer("lhs", lhs)                      # lhs[p] = non-terminal of p

    def forward(self, words, prev_prod, frontier, align):
        enc, _ = self.encoder(self.wemb(words))               # B x N x 2H
        ctx = self.bridge(enc.gather(1, align.unsqueeze(-1).expand(-1, -1, enc.shape[-1])))
        x = torch.cat([self.pemb(prev_prod), self.ntemb(frontier.clamp(min=0)), ctx], dim=-1)
        dec, _ = self.decoder(x)
        att = torch.softmax(self.att_q(dec) @ enc.transpose(1, 2), dim=-1) @ enc   # B x T x 2H
        logits = self.out(torch.cat([dec, att], dim=-1))
        allowed = self.lhs.view(1, 1, -1) == frontier.unsqueeze(-1)
        allowed = allowed | (frontier.unsqueeze(-1) < 0)      # padded steps: all allowed
        return logits.masked_fill(~allowed, float("-inf"))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab = 200
    n_nt = [6, 8, 5][seed % 3]
    per_nt = [5, 4, 6][seed % 3]
    n_prod = n_nt * per_nt
    d = [32, 24, 48][seed % 3]
    hidden = [48, 64, 32][seed % 3]
    batch = [32, 48, 24][seed % 3]
    steps = [120, 100, 140][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]

    lhs = torch.arange(n_nt).repeat_interleave(per_nt)
    # utterance word -> which alternative is chosen for the non-terminal it is aligned to
    word_choice = torch.randint(0, per_nt, (vocab,), generator=g)
    nt_next = torch.randint(0, n_nt, (n_prod,), generator=g)    # next frontier after a rule
    batches = []
    for _ in range(steps):
        lens = torch.randint(6, 15, (batch,), generator=g)
        T = int(lens.max())
        words = torch.randint(0, vocab, (batch, T), generator=g)
        prev = torch.full((batch, T), n_prod, dtype=torch.long)
        frontier = torch.full((batch, T), -1, dtype=torch.long)
        target = torch.full((batch, T), -100, dtype=torch.long)
        for b in range(batch):
            nt = int(torch.randint(0, n_nt, (1,), generator=g))
            for t in range(int(lens[b])):
                p = nt * per_nt + int(word_choice[words[b, t]])
                frontier[b, t] = nt
                target[b, t] = p
                if t + 1 < T:
                    prev[b, t + 1] = p
                nt = int(nt_next[p])
        align = torch.arange(T).unsqueeze(0).expand(batch, -1).contiguous()
        batches.append(((words, prev, frontier, align), target))

    model = GrammarDecoder(vocab, n_prod, n_nt, d, hidden, lhs)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def loss_fn(logits, target):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                               ignore_index=-100)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
