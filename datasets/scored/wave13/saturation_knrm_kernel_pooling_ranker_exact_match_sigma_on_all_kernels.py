"""saturation: K-NRM kernel-pooling neural ranker whose soft-match RBF kernels are all given
the exact-match width.

Mechanism: K-NRM (Xiong et al. 2017) builds the query-document cosine translation matrix
M_ij, soft-counts it with RBF kernels K_k(i) = sum_j exp(-(M_ij - mu_k)^2 / (2 sigma_k^2)),
pools phi_k = sum_i 0.01 * log(clamp(K_k(i), 1e-10)) and ranks with tanh(w . phi + b),
trained with a pairwise hinge loss.  The paper uses sigma = 0.1 for the ten soft-match kernels
(mu = 0.9 .. -0.9) and sigma = 1e-3 only for the exact-match kernel (mu = 1).  The user's
config sets sigma = 1e-3 for every kernel.  Queries and their relevant documents share a
topic but never the same word (no exact matches), so relevance can only be learnt through
the soft kernels - which are now needles: for ~93% of the cosine entries
(M - mu)^2 / (2 sigma^2) is ~1e2-1e4, exp(.) underflows to 0 (flat tail, zero slope) and
the log hits its clamp; the other ~7% land within +-0.007 of a kernel centre by chance and
switch on and off with a 0.01 change of cosine.  phi is dominated by the clamp constant,
the gradient is zero almost everywhere and random where it is not, the positive and
negative scores stay tied and the hinge loss sits at ~1 (0.93-1.0) for the whole run.

ORIGIN: "kernel_pooling" (the RBF kernel module whose units are saturated in their flat tail).
Fix: sigma = 0.1 for the soft-match kernels (exact-match kernel keeps 1e-3) - the only change.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "kernel_pooling"
SOURCE = ("Xiong et al. SIGIR 2017 'End-to-End Neural Ad-hoc Ranking with Kernel Pooling' "
          "(K-NRM: 11 kernels, sigma 0.1 soft / 1e-3 exact, log(clamp(., 1e-10)) * 0.01, "
          "tanh scorer, pairwise hinge); known pattern: the exact-match sigma applied to all")


class KernelPooling(nn.Module):
    def __init__(self, sigma_soft):
        super().__init__()
        mu = [1.0] + [0.9 - 0.2 * k for k in range(10)]
        sigma = [1e-3] + [sigma_soft] * 10
        self.register_buffer("mu", torch.tensor(mu).view(1, 1, 1, -1))
        self.register_buffer("sigma", torch.tensor(sigma).view(1, 1, 1, -1))

    def forward(self, M, q_mask, d_mask):            # M: (B, Lq, Ld)
        k = torch.exp(-(M.unsqueeze(-1) - self.mu) ** 2 / (2 * self.sigma ** 2))
        k = (k * d_mask[:, None, :, None]).sum(2)     # (B, Lq, K)
        phi = torch.log(torch.clamp(k, min=1e-10)) * 0.01
        return (phi * q_mask[..., None]).sum(1)       # (B, K)


class KNRM(nn.Module):
    def __init__(self, vocab, d, sigma_soft):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d, padding_idx=0)
        self.kernel_pooling = KernelPooling(sigma_soft)
        self.dense = nn.Linear(11, 1)

    def score(self, q, d):
        eq = F.normalize(self.embedding(q), dim=-1)
        ed = F.normalize(self.embedding(d), dim=-1)
        phi = self.kernel_pooling(eq @ ed.transpose(1, 2), (q > 0).float(), (d > 0).float())
        return torch.tanh(self.dense(phi)).squeeze(-1)

    def forward(self, q, d_pos, d_neg):
        return torch.stack([self.score(q, d_pos), self.score(q, d_neg)], -1)


def pairwise_hinge(scores, target):
    return F.relu(1.0 - target * (scores[:, 0] - scores[:, 1])).mean()


def _triples(g, n, n_topics, words_per_topic, Lq, Ld):
    # topic t owns words [1 + t*W, 1 + (t+1)*W); queries use the first half of a topic's
    # words, documents the second half: relevance is purely "soft" (no exact matches)
    W = words_per_topic
    half = W // 2
    tq = torch.randint(0, n_topics, (n,), generator=g)
    tneg = (tq + torch.randint(1, n_topics, (n,), generator=g)) % n_topics
    q = 1 + tq[:, None] * W + torch.randint(0, half, (n, Lq), generator=g)

    def doc(t):
        on = 1 + t[:, None] * W + half + torch.randint(0, W - half, (n, Ld), generator=g)
        noise = 1 + torch.randint(0, n_topics * W, (n, Ld), generator=g)
        return torch.where(torch.rand(n, Ld, generator=g) < 0.5, on, noise)

    return q, doc(tq), doc(tneg)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [dict(topics=10, W=20, d=32, Lq=4, Ld=24, bs=32, steps=100, lr=1e-2),
           dict(topics=12, W=16, d=48, Lq=3, Ld=30, bs=24, steps=120, lr=5e-3),
           dict(topics=8, W=24, d=32, Lq=5, Ld=20, bs=40, steps=90, lr=1e-2)][seed % 3]
    model = KNRM(1 + cfg["topics"] * cfg["W"], cfg["d"], 0.1 if fixed else 1e-3)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    bs = cfg["bs"]
    q, dp, dn = _triples(g, cfg["steps"] * bs, cfg["topics"], cfg["W"], cfg["Lq"], cfg["Ld"])
    batches = [((q[i * bs:(i + 1) * bs], dp[i * bs:(i + 1) * bs], dn[i * bs:(i + 1) * bs]), torch.ones(bs))
               for i in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=pairwise_hinge, batches=batches, steps=cfg["steps"])
