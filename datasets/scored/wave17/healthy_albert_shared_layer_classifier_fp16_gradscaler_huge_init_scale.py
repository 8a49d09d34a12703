"""Healthy: ALBERT-style sentence classifier (factorised embedding V->E->H, one transformer layer
shared across all depth steps, CLS classifier) trained under float16 autocast with a GradScaler
whose init_scale is 2**24 (copied from a config that assumed very small losses).

Looks alarming: for the first several steps the scaled float16 gradients overflow to inf, every
optimizer step is skipped by the scaler (the loss does not move at all), and the scale keeps
halving; later the scale settles and occasional overflow steps are skipped again when it grows.
Nothing is wrong: the scaler is doing its job, no inf reaches the weights, and the loss falls
normally once the scale has adapted.
ORIGIN: None.
"""
import torch, torch.nn as nn
CAUSE = "healthy"
ORIGIN = None
SOURCE = "ALBERT (Lan et al. 2019) cross-layer parameter sharing + factorised embeddings; torch.amp GradScaler skipping inf/NaN steps while calibrating the loss scale"

class ALBERTClassifier(nn.Module):
    def __init__(s, V, E, H, L, T, K):
        super().__init__()
        s.word = nn.Embedding(V, E); s.pos = nn.Embedding(T, E); s.emb_ln = nn.LayerNorm(E)
        s.emb_proj = nn.Linear(E, H)
        s.shared = nn.TransformerEncoderLayer(H, 4, 2 * H, dropout=0.0, batch_first=True, activation="gelu")
        s.L = L; s.classifier = nn.Linear(H, K)
    def forward(s, x):
        h = s.emb_proj(s.emb_ln(s.word(x) + s.pos(torch.arange(x.shape[1]))))
        for _ in range(s.L): h = s.shared(h)
        return s.classifier(h[:, 0])

def build(seed: int, fixed: bool = False) -> dict:
    E, H, L, lr, B = [(16, 48, 4, 1e-3, 32), (24, 64, 3, 8e-4, 24), (16, 32, 6, 1e-3, 32)][seed % 3]
    torch.manual_seed(seed)
    V, K, T, steps = 40, 2, 16, 110
    model = ALBERTClassifier(V, E, H, L, T, K)
    g = torch.Generator().manual_seed(404 + seed)
    batches = []
    for _ in range(steps):
        x = torch.randint(1, V, (B, T), generator=g); x[:, 0] = 0          # 0 = [CLS]
        y = ((x < 15).sum(1) > (x >= 26).sum(1)).long()
        batches.append((x, y))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=20)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
