"""Healthy: ULMFiT-style text classifier: embedding + 2 stacked LSTM layers (the 'pretrained'
encoder) + concat-pooling head ([last, max, mean] -> Linear -> ReLU -> Linear), trained with
Adam, a slanted-triangular lr and gradual unfreezing (head only, then the top LSTM layer, then
everything), all driven by an optimizer step post-hook.

Looks alarming: for the first phase most parameters have no gradient at all (frozen), the loss
decreases only slowly, and every unfreezing step makes the loss jump up for a few steps because
the newly trainable layers receive large lr updates at the peak of the triangular schedule. The
bumps recover and the final loss is far below the start.
ORIGIN: None.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "healthy"
ORIGIN = None
SOURCE = "ULMFiT (Howard & Ruder 2018): gradual unfreezing, slanted triangular learning rates, concat pooling"

class ULMFiTClassifier(nn.Module):
    def __init__(s, V, e, h, K):
        super().__init__()
        s.emb = nn.Embedding(V, e)
        s.rnns = nn.ModuleList([nn.LSTM(e, h, batch_first=True), nn.LSTM(h, h, batch_first=True)])
        s.head = nn.Sequential(nn.Linear(3 * h, h), nn.ReLU(), nn.Linear(h, K))
    def forward(s, x):
        o = s.emb(x)
        for r in s.rnns: o, _ = r(o)
        return s.head(torch.cat([o[:, -1], o.max(1).values, o.mean(1)], -1))

def build(seed: int, fixed: bool = False) -> dict:
    e, h, lr, B, u1, u2 = [(24, 32, 1e-2, 32, 25, 50), (32, 48, 8e-3, 24, 30, 60), (16, 32, 1e-2, 48, 20, 45)][seed % 3]
    torch.manual_seed(seed)
    V, K, T, steps = 50, 3, 16, 120
    model = ULMFiTClassifier(V, e, h, K)
    groups = [list(model.emb.parameters()) + list(model.rnns[0].parameters()), list(model.rnns[1].parameters())]
    for p in groups[0] + groups[1]: p.requires_grad_(False)
    g = torch.Generator().manual_seed(61 + seed)
    polarity = torch.randint(-1, 2, (V,), generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randint(0, V, (B, T), generator=g)
        sc = polarity[x].sum(1)
        y = torch.where(sc > 1, 2, torch.where(sc < -1, 0, 1))    # negative / neutral / positive
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.8, 0.99))
    cut = int(0.1 * steps)
    stlr = lambda i: (i + 1) / cut if i < cut else max(0.05, 1 - (i - cut) / (steps - cut))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, stlr)
    state = {"step": 0}
    def hook(*_):
        state["step"] += 1; sched.step()
        if state["step"] == u1:
            for p in groups[1]: p.requires_grad_(True)
        if state["step"] == u2:
            for p in groups[0]: p.requires_grad_(True)
    opt.register_step_post_hook(hook)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
