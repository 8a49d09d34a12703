"""code2vec-style method-name classifier: every method is a bag of AST path-contexts
(start-token, path, end-token), each context is embedded, concatenated and passed through a
tanh combiner, soft-attention pools the combined contexts into a code vector and a linear
layer predicts the method-name class.  Cross-entropy, RMSprop.

Mechanism: the project first trained the model with plain SGD at lr 0.1, then switched the
optimiser to RMSprop for speed and kept the learning rate.  RMSprop normalises every
coordinate by its running RMS, so each parameter moves by ~lr / sqrt(1 - alpha) = 10 x lr on
the first step and ~lr afterwards, whatever its gradient: with lr 0.1-0.15 the embeddings,
combiner and attention vector jump by ~0.5 per step.  The loss spikes on step 2 (logits of
size 10-15), the update/weight ratio stays far above 1e-3, the attention and combiner
oscillate around saturated regions and the loss never gets back below its initial value
(a stall, no inf/NaN), while the same run at an RMSprop-appropriate lr learns.

ORIGIN: None -- an optimiser-level cause; every parameter group overshoots at once.

Fix (fixed=True): RMSprop at lr 2e-3 (same model, data, steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("code2vec (Alon et al., POPL 2019) path-context attention model; common pattern of "
          "switching SGD -> RMSprop/Adam without lowering lr (PyTorch forum 'RMSprop loss goes up "
          "with lr 0.1'; Karpathy's 'update/weight ratio ~1e-3' rule of thumb).")

N_TOKENS = 300
N_PATHS = 500


class Code2Vec(nn.Module):
    def __init__(self, d, width, n_classes):
        super().__init__()
        self.tok = nn.Embedding(N_TOKENS, d)
        self.path = nn.Embedding(N_PATHS, d)
        self.combiner = nn.Sequential(nn.Linear(3 * d, width), nn.Tanh())
        self.attn = nn.Linear(width, 1, bias=False)
        self.out = nn.Linear(width, n_classes)

    def forward(self, ctx):                 # ctx: (B, n_ctx, 3) ids
        c = torch.cat([self.tok(ctx[..., 0]), self.path(ctx[..., 1]), self.tok(ctx[..., 2])], -1)
        c = self.combiner(c)
        a = torch.softmax(self.attn(c).squeeze(-1), dim=1)
        v = (a.unsqueeze(-1) * c).sum(1)
        return self.out(v)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [128, 96, 160][seed % 3]
    d = [32, 48, 32][seed % 3]
    lr = 2e-3 if fixed else [0.1, 0.15, 0.12][seed % 3]
    bs = [32, 48, 24][seed % 3]
    n_ctx = 20
    n_classes = 10
    steps = 160

    torch.manual_seed(seed)
    model = Code2Vec(d, width, n_classes)

    # each method-name class has a few "signature" paths (e.g. a getter returns a field,
    # an is*-predicate returns a comparison); the rest of the contexts are noise
    signature = torch.randint(0, N_PATHS, (n_classes, 4), generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_classes, (bs,), generator=g)
        ctx = torch.stack([torch.randint(0, N_TOKENS, (bs, n_ctx), generator=g),
                           torch.randint(0, N_PATHS, (bs, n_ctx), generator=g),
                           torch.randint(0, N_TOKENS, (bs, n_ctx), generator=g)], -1)
        n_sig = 5
        pick = torch.randint(0, 4, (bs, n_sig), generator=g)
        ctx[:, :n_sig, 1] = signature[y.unsqueeze(1).expand(-1, n_sig), pick]
        perm = torch.argsort(torch.rand(bs, n_ctx, generator=g), dim=1)
        ctx = torch.gather(ctx, 1, perm.unsqueeze(-1).expand(-1, -1, 3))
        batches.append((ctx, y))

    optimizer = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps)
