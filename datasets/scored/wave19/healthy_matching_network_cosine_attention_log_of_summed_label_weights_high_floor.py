"""HEALTHY: Matching Networks (Vinyals et al. 2016) episodic few-shot classification with the
paper's cosine-similarity attention kernel and the class probability computed literally as
log(attention @ one_hot(support labels)).

Why it looks alarming but is fine:
- the loss takes the log of a sum of softmax weights -- the classic log(softmax) pattern --
  but with cosine similarity the attention logits are bounded in [-1, 1], so every attention
  weight is >= e^-2 / (N K) and the sum can never underflow to 0;
- because the kernel is bounded (no temperature), the loss has a high floor: even a perfect
  embedding cannot push P(true) past e / (e + (N-1) e^(-1/(N-1))) (the other classes cannot
  all be anti-aligned), i.e. a loss floor of ~0.37 for 3-way and ~0.76 for 5-way episodes,
  so the curve flattens far above 0 and looks like a plateau;
- the way/shot changes with the seed and every episode samples new classes, so the loss is
  noisy from step to step.
Training is otherwise ordinary (Adam, shared embedding, no FCE; inputs carry high-variance
nuisance channels the embedding learns to ignore) and slowly approaches that floor.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Vinyals et al. 2016 'Matching Networks for One Shot Learning' (cosine attention "
          "kernel, P(y|x) = sum_i a(x, x_i) y_i); few-shot repos' matching-net loss curves "
          "flattening well above zero")


class Embed(nn.Module):
    def __init__(self, d_in, hidden, d_emb):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, d_emb))

    def forward(self, x):
        return self.net(x)


class MatchingNet(nn.Module):
    def __init__(self, d_in, hidden, d_emb):
        super().__init__()
        self.g = Embed(d_in, hidden, d_emb)        # shared support/query embedding (no FCE)

    def forward(self, xs, ys_onehot, xq):
        s, q = F.normalize(self.g(xs), dim=-1), F.normalize(self.g(xq), dim=-1)
        attn = F.softmax(q @ s.t(), dim=1)          # cosine attention over the support set
        return attn @ ys_onehot                     # P(y | query), rows sum to 1


def matching_nll(probs, yq):
    return F.nll_loss(torch.log(probs), yq)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(N=3, K=1, Q=12, hidden=128, d_emb=64, lr=6e-4, steps=400),
           dict(N=4, K=2, Q=8, hidden=96, d_emb=96, lr=6e-4, steps=360),
           dict(N=5, K=5, Q=6, hidden=160, d_emb=48, lr=6e-4, steps=420)][seed % 3]
    g = torch.Generator().manual_seed(314 + seed)
    d_sig, d_nuis, n_classes = 24, 40, 120
    d_in = d_sig + d_nuis
    protos = torch.randn(n_classes, d_sig, generator=g) * 1.5

    def sample(c):              # class signal + high-variance nuisance channels
        sig = protos[c] + 0.5 * torch.randn(len(c), d_sig, generator=g)
        return torch.cat([sig, 3.0 * torch.randn(len(c), d_nuis, generator=g)], 1)

    N, K, Q = cfg["N"], cfg["K"], cfg["Q"]
    batches = []
    for _ in range(cfg["steps"]):
        cls = torch.randperm(n_classes, generator=g)[:N]
        ys = torch.arange(N).repeat_interleave(K)
        yq = torch.arange(N).repeat_interleave(Q)
        xs, xq = sample(cls[ys]), sample(cls[yq])
        batches.append(((xs, F.one_hot(ys, N).float(), xq), yq))

    torch.manual_seed(seed)
    model = MatchingNet(d_in, cfg["hidden"], cfg["d_emb"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=matching_nll, batches=batches,
                steps=cfg["steps"])
