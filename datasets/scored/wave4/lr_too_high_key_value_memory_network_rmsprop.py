"""Key-value memory network reader (Miller et al. 2016): a question embedding (bag of token ids)
addresses a set of memory slots by softmax attention over key embeddings, reads the value embeddings,
and scores answers. Trained with RMSprop at lr 0.3-0.8 (a value copied from an Adagrad sparse-embedding
recipe), every step moves each embedding coordinate by ~lr regardless of gradient size: the
attention logits swing between one-hot extremes, the answer logits oscillate and the cross-entropy
never goes below its starting level (no NaN). Fix: lower the learning rate."""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "Key-Value Memory Networks (Miller et al. 2016); RMSprop normalised step ~lr per coordinate, oscillating embedding training"
class KVMemNN(nn.Module):
    def __init__(s, V, d, A):
        super().__init__(); s.q_emb = nn.EmbeddingBag(V, d, mode="sum"); s.k_emb = s.q_emb  # adjacent weight tying of query/key embeddings
        s.v_emb = nn.Embedding(A, d); s.R = nn.Linear(d, d, bias=False); s.ans = nn.Linear(d, A)
    def forward(s, q, keys, vals):
        B, M, L = keys.shape
        qe = s.q_emb(q); ke = s.k_emb(keys.reshape(B * M, L)).reshape(B, M, -1); ve = s.v_emb(vals)
        a = torch.softmax((ke @ qe[:, :, None]).squeeze(-1), -1)
        o = (a[:, :, None] * ve).sum(1)
        return s.ans(s.R(qe + o))
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    V, d, A, M, L = 60, 24 + 8 * seed, 10, 6 + 2 * seed, 3
    steps, bs = 160, 32
    model = KVMemNN(V, d, A)
    batches = []
    for _ in range(steps):
        keys = torch.randint(0, V, (bs, M, L), generator=g); vals = torch.randint(0, A, (bs, M), generator=g)
        j = torch.randint(0, M, (bs,), generator=g)
        q = torch.cat([keys[torch.arange(bs), j, :2], torch.randint(0, V, (bs, 1), generator=g)], -1)
        batches.append(((q, keys, vals), vals[torch.arange(bs), j]))
    lr = 1e-3 if fixed else [0.3, 0.5, 0.8][seed]
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y), batches=batches, steps=steps, amp_dtype=None, scaler=None)
