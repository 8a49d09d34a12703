"""Second-stage prior for a VQ-VAE: a Bengio-style neural n-gram model predicts the next
codebook index from the previous three (embeddings concatenated, one ReLU hidden layer,
softmax over the 32 codes). The codes are used uniformly, so the unconditional entropy is
ln 32 while the true conditional entropy is far lower. The training script was switched from
SGD to Adam but kept the SGD learning rate (0.3). Adam moves every weight by ~lr on each of
the first steps, which pushes the pre-activations of every unit of  below zero for
every context; the logits collapse to the output bias, the loss sits at ln 32 and no gradient
ever reaches the dead units, a plateau with no NaN. Fixed: Adam lr=3e-3, nothing else."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hidden"
SOURCE = ("Bengio et al. 2003 NPLM used as a prior over VQ-VAE codes; 'switched SGD to Adam, kept "
          "the lr, all ReLUs dead / loss stuck at log(V)' reports (CS231n dying-ReLU note)")


class CodePrior(nn.Module):
    def __init__(self, vocab=32, ctx=3, emb=16, h=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.hidden = nn.Linear(ctx * emb, h)
        self.out = nn.Linear(h, vocab)

    def forward(self, codes):
        e = self.embed(codes).flatten(1)
        return self.out(F.relu(self.hidden(e)))


def _code_stream(g, n, perm, vocab=32, ctx=3):
    seq = torch.zeros(n + ctx, dtype=torch.long)
    seq[0] = torch.randint(0, vocab, (1,), generator=g)
    for i in range(1, n + ctx):
        if torch.rand(1, generator=g).item() < 0.85:
            seq[i] = perm[seq[i - 1]]
        else:
            seq[i] = torch.randint(0, vocab, (1,), generator=g)
    ctxs = torch.stack([seq[i:i + n] for i in range(ctx)], 1)
    return ctxs, seq[ctx:ctx + n]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    model = CodePrior()
    steps, bs = 150, 128
    perm = torch.randperm(32, generator=g)
    ctxs, tgt = _code_stream(g, 4096, perm)
    batches = []
    for s in range(steps):
        idx = torch.randint(0, 4096, (bs,), generator=g)
        batches.append((ctxs[idx], tgt[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3 if fixed else 0.3)
    return dict(model=model, optimizer=opt, loss_fn=lambda logits, y: F.cross_entropy(logits, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
