"""STS-B style cross-encoder: the sentence pair is packed as [CLS] a [SEP] b into a small
transformer encoder, the mean-pooled states go through a Linear scorer and the prediction is bounded to
the label range as 5 * sigmoid(scale * z), trained with MSE against gold similarities in [0, 5].
The user copied the logit scale 100 (temperature 0.01) from a CLIP/contrastive recipe, where it
multiplies cosines in [-1, 1], and applies it to the raw, unbounded Linear output.

Mechanism: z ~ N(0, 0.5) at init, so 100*z puts almost every example deep in the flat tails of the
sigmoid (|100 z| ~ 20-100, sigmoid' < 1e-9). The predictions are stuck at 0 or 5, the MSE
gradient is multiplied by the vanishing sigmoid derivative, and neither the scorer nor the
encoder learn: the loss plateaus.
ORIGIN: score_act, the Sigmoid that saturates.
Fix: no extra scale on the raw scorer output (scale = 1), so the sigmoid works in its linear range.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "saturation"
ORIGIN = "score_act"
SOURCE = "sentence-transformers CrossEncoder on STS-B with a sigmoid-bounded regression head; logit scale 100 (temperature 0.01) borrowed from CLIP-style contrastive training"

class CrossEncoder(nn.Module):
    def __init__(s, V, d, L, T, scale):
        super().__init__()
        s.emb = nn.Embedding(V, d); s.pos = nn.Embedding(T // 2 + 1, d); s.seg = nn.Embedding(2, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, activation="gelu")
        s.encoder = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.scorer = nn.Linear(d, 1); s.score_act = nn.Sigmoid(); s.scale = scale
    def forward(s, x, seg):
        n = x.shape[1] // 2 - 1                       # a and b tokens share position ids 1..n
        pos = torch.cat([torch.arange(n + 2), torch.arange(1, n + 1)])
        h = s.encoder(s.emb(x) + s.pos(pos) + s.seg(seg))
        return 5.0 * s.score_act(s.scale * s.scorer(h.mean(1))).squeeze(-1)

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B = [(2, 32, 2e-3, 32), (1, 48, 3e-3, 24), (2, 48, 2e-3, 24)][seed % 3]
    torch.manual_seed(seed)
    V, n, steps = 30, 8, 150                       # 0 = CLS, 1 = SEP
    T = 2 * n + 2
    model = CrossEncoder(V, d, L, T, 1.0 if fixed else 100.0)
    g = torch.Generator().manual_seed(123 + seed)
    seg = torch.cat([torch.zeros(n + 2, dtype=torch.long), torch.ones(n, dtype=torch.long)])
    pol = (torch.rand(V, generator=g) < 0.5).float()
    batches = []
    for _ in range(steps):
        a = torch.randint(2, V, (B, n), generator=g)
        keep = torch.rand(B, 1, generator=g)
        b = torch.where(torch.rand(B, n, generator=g) < keep, a, torch.randint(2, V, (B, n), generator=g))
        sim = 2.5 * (pol[a].mean(1) + pol[b].mean(1))  # proxy gold score from lexical polarity of both sides
        x = torch.cat([torch.zeros(B, 1, dtype=torch.long), a, torch.ones(B, 1, dtype=torch.long), b], 1)
        batches.append(((x, seg.expand(B, -1)), sim))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps)
