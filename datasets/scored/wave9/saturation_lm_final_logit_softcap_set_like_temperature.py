"""Small pre-LN causal Transformer LM (tied, sqrt(d)-scaled embeddings, final LayerNorm) with a
Gemma-2-style final-logit soft-cap, logits = cap * tanh(logits / cap), trained with AdamW. Gemma
uses cap = 30; the author treated the cap like a softmax temperature and set cap = 0.2. The raw
tied-head logits have a spread of ~+-1.3 (up to ~7), so logits / 0.2 is beyond +-3 for about half
of the vocabulary entries from step 0 and far beyond for the confident ones: there the tanh is
pinned at +-1 (derivative < 1e-2, down to ~1e-30), every capped logit is confined to +-0.2, the
output distribution stays nearly uniform, and the gradient that passes the cap back into the
head, the tied embeddings and the blocks is crushed exactly where the model tries to become
confident. The loss stays within a few percent of its start for the whole run, without any
non-finite value. Fixed: cap = 30 (the tanh works in its linear range), nothing else changed."""
import torch, torch.nn as nn

CAUSE = "saturation"
ORIGIN = "softcap"
SOURCE = ("Gemma 2 final_logit_softcapping (cap * tanh(x / cap), cap = 30); pattern: soft-cap set "
          "far below the logit scale so the tanh saturates")

V, D, T, B, NH = 32, 48, 24, 16, 4


class SoftCap(nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def forward(self, x):
        return self.cap * torch.tanh(x / self.cap)


class TinyLM(nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.zeros(T, D))
        layer = nn.TransformerEncoderLayer(D, NH, 2 * D, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(D)
        self.softcap = SoftCap(cap)
        self.register_buffer("causal", torch.triu(torch.full((T, T), float("-inf")), 1))

    def forward(self, ids):
        h = self.tok(ids) * D ** 0.5 + self.pos[: ids.shape[1]]
        h = self.blocks(h, mask=self.causal[: ids.shape[1], : ids.shape[1]], is_causal=True)
        logits = self.ln_f(h) @ self.tok.weight.t()
        return self.softcap(logits)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 3)
    model = TinyLM(30.0 if fixed else 0.2)
    nn.init.normal_(model.tok.weight, std=D ** -0.5)
    succ = torch.randint(0, V, (V, 2), generator=g)
    n_batches = 20
    data = []
    for _ in range(n_batches):
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, V, (B,), generator=g)
        for t in range(T):
            pick = succ[seq[:, t], torch.randint(0, 2, (B,), generator=g)]
            noise = torch.randint(0, V, (B,), generator=g)
            seq[:, t + 1] = torch.where(torch.rand(B, generator=g) < 0.9, pick, noise)
        data.append((seq[:, :-1], seq[:, 1:]))
    steps = 120
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    def loss_fn(logits, y):
        return nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
