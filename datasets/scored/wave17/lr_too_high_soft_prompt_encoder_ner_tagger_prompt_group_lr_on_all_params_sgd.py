"""Prompt tuning of a small transformer encoder NER tagger: 8 learned soft-prompt vectors are
prepended to the token embeddings, the tag head reads the non-prompt positions. Soft prompts are
trained with a very large lr (prompt-tuning recipes use 0.3 and more, here momentum SGD at 1-2),
the rest of the model with a normal lr. The user builds the param groups wrongly and every
parameter (encoder, embeddings, head) ends up in the prompt group.

Mechanism: the encoder weights get the prompt lr; update/weight ratios are ~1 instead of ~1e-3,
momentum amplifies the overshoot, the attention/FFN weights blow up within ~10-20 steps and the
loss goes non-finite.
ORIGIN: None (a global optimiser setting).
Fix: a normal lr (0.1) for the encoder and head, i.e. for all the parameters trained here.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "prompt tuning (Lester et al. 2021, P-tuning) with the very high soft-prompt lr accidentally applied to all model parameters"

class PromptTagger(nn.Module):
    def __init__(s, V, d, L, K, P, T):
        super().__init__()
        s.soft_prompt = nn.Parameter(torch.randn(P, d) * 0.5)
        s.emb = nn.Embedding(V, d); s.pos = nn.Embedding(T + P, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        s.encoder = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.classifier = nn.Linear(d, K); s.P = P
    def forward(s, x):
        B, T = x.shape
        h = torch.cat([s.soft_prompt.expand(B, -1, -1), s.emb(x)], 1) + s.pos(torch.arange(T + s.P))
        return s.classifier(s.encoder(h)[:, s.P:])

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B = [(2, 32, 1.5, 16), (3, 48, 2.0, 12), (2, 64, 1.0, 24)][seed % 3]
    torch.manual_seed(seed)
    V, K, P, T, steps = 60, 5, 8, 20, 100
    model = PromptTagger(V, d, L, K, P, T)
    g = torch.Generator().manual_seed(33 + seed)
    ent = (torch.rand(V, generator=g) < 0.35).long() * torch.randint(1, 3, (V,), generator=g)  # 0=O, 1=PER, 2=LOC
    batches = []
    for _ in range(steps):
        x = torch.randint(0, V, (B, T), generator=g)
        e = ent[x]; prev = torch.cat([torch.zeros(B, 1, dtype=torch.long), e[:, :-1]], 1)
        tags = torch.where(e == 0, 0, torch.where(prev == e, 2 * e, 2 * e - 1))  # BIO: B-X=2e-1, I-X=2e
        batches.append((x, tags))
    opt = torch.optim.SGD(model.parameters(), lr=0.1 if fixed else lr, momentum=0.9)
    loss_fn = lambda out, y: F.cross_entropy(out.reshape(-1, K), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
