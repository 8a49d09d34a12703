"""Healthy: next-word prediction for a multilingual mobile keyboard with a GRU language model
over a shared vocabulary (two languages + shared tokens such as numbers and emoji). Each batch
comes from one user's session, and the user has only some languages enabled: the logits of
every word outside the enabled languages are masked to -inf (`masked_fill`) before the
cross-entropy, so the keyboard never suggests them.

Why it looks suspicious but is fine: the model output contains -inf entries every step, and for
sessions with one language enabled about half of the vocabulary is -inf. The targets are always
enabled words, so log_softmax stays finite on the target entries, the masked entries get
exactly zero probability and exactly zero gradient (sparse output-layer gradients), and the
loss is finite and falls steadily. Trained with AdamW.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("vocabulary / language masking of LM logits with -inf in multilingual keyboards "
          "(Gboard multilingual LM; constrained decoding with masked_fill(-inf) before softmax)")


class MaskedGRULM(nn.Module):
    def __init__(self, V, d, hidden):
        super().__init__()
        self.emb = nn.Embedding(V, d)
        self.gru = nn.GRU(d, hidden, batch_first=True)
        self.out = nn.Linear(hidden, V)

    def forward(self, tokens, allowed):
        h, _ = self.gru(self.emb(tokens))
        logits = self.out(h)
        return logits.masked_fill(~allowed[:, None, :], float("-inf"))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    per_lang = [80, 64, 96][seed % 3]
    shared = 16
    V = 2 * per_lang + shared
    d = [32, 24, 32][seed % 3]
    hidden = [64, 48, 96][seed % 3]
    lr = [3e-3, 4e-3, 2e-3][seed % 3]
    bs = [24, 32, 16][seed % 3]
    steps = 150
    T = 12
    model = MaskedGRULM(V, d, hidden)
    lang_of = torch.cat([torch.zeros(per_lang), torch.ones(per_lang), torch.full((shared,), 2.0)]).long()
    succ = [torch.randperm(per_lang, generator=g) + k * per_lang for k in range(2)]
    batches = []
    for _ in range(steps):
        mode = int(torch.randint(0, 3, (1,), generator=g))  # 0: lang A only, 1: lang B only, 2: both
        langs = [0] if mode == 0 else [1] if mode == 1 else [0, 1]
        allowed = (lang_of == 2).clone()
        for k in langs:
            allowed |= lang_of == k
        toks = torch.empty(bs, T + 1, dtype=torch.long)
        lang = torch.tensor(langs)[torch.randint(0, len(langs), (bs,), generator=g)]
        toks[:, 0] = torch.randint(0, per_lang, (bs,), generator=g) + lang * per_lang
        for t in range(T):
            cur = toks[:, t]
            nxt = torch.where(lang == 0, succ[0][cur.clamp(max=per_lang - 1)],
                              succ[1][(cur - per_lang).clamp(min=0, max=per_lang - 1)])
            is_word = cur < 2 * per_lang
            nxt = torch.where(is_word, nxt, torch.randint(0, per_lang, (bs,), generator=g) + lang * per_lang)
            r = torch.rand(bs, generator=g)
            emoji = torch.randint(2 * per_lang, V, (bs,), generator=g)
            toks[:, t + 1] = torch.where(r < 0.1, emoji, nxt)
        batches.append(((toks[:, :-1], allowed.expand(bs, V).clone()), toks[:, 1:]))

    def loss_fn(logits, target):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
