"""Word-level GRU language model with nn.AdaptiveLogSoftmaxWithLoss (Grave et al. 2017) over a
Zipf-distributed vocabulary: a head shortlist of frequent words plus two tail clusters with
down-projected (div_value=4) embeddings. The model takes (ids, targets) like HF-style models and
returns the adaptive-softmax NamedTuple; the loss is its .loss. It looks alarming to a monitor:
the tail clusters' projection/output weights only get gradient through the handful of rare
targets in each batch, so their gradient norms are tiny (~1e-3..1e-2) and the down-projected tail
parameters barely move, the output is a NamedTuple rather than logits, and the per-batch loss
jumps with how many rare words a batch holds. This is how adaptive
softmax is supposed to behave; the loss decreases steadily underneath the noise."""
import torch, torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Grave et al. 2017 'Efficient softmax approximation for GPUs'; torch.nn.AdaptiveLogSoftmaxWithLoss "
          "as used in fairseq/transformer-XL adaptive-input LMs")

V, E, H, T, B = 800, 24, 48, 20, 16
CUTOFFS = [60, 250]


class AdaptiveGRULM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.rnn = nn.GRU(E, H, batch_first=True)
        self.asm = nn.AdaptiveLogSoftmaxWithLoss(H, V, cutoffs=CUTOFFS, div_value=4.0)

    def forward(self, ids, targets):
        h, _ = self.rnn(self.embed(ids))
        return self.asm(h.reshape(-1, H), targets.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 8)
    model = AdaptiveGRULM()
    ranks = torch.arange(1, V + 1, dtype=torch.float)
    zipf = 1.0 / ranks ** 1.1
    zipf /= zipf.sum()
    # bigram structure: each word prefers a few successors drawn from the Zipf distribution
    succ = torch.multinomial(zipf, V * 4, replacement=True, generator=g).view(V, 4)
    n_batches = 40
    data = []
    for _ in range(n_batches):
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = torch.multinomial(zipf, B, replacement=True, generator=g)
        for t in range(T):
            follow = succ[seq[:, t], torch.randint(0, 4, (B,), generator=g)]
            fresh = torch.multinomial(zipf, B, replacement=True, generator=g)
            seq[:, t + 1] = torch.where(torch.rand(B, generator=g) < 0.7, follow, fresh)
        data.append(((seq[:, :-1], seq[:, 1:]), seq[:, 1:]))
    steps = 160
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(out, y):
        return out.loss

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
