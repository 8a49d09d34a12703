"""Deep Bengio-style neural probabilistic language model over characters: the embeddings of the
previous n characters are concatenated and fed through a stack of tanh hidden layers to a softmax
over the alphabet. Every nn.Linear was re-initialised with the old TF1 tutorial default
normal(0, 0.01). With width w each layer multiplies the activation scale by about 0.01*sqrt(w) << 1,
so after a handful of layers the hidden state is ~1e-8 of the input, the output logits are
constant, and the back-propagated gradient shrinks by the same factor per layer. SGD with
momentum only learns the output bias; because the synthetic text has a uniform character
marginal, that bias is worth nothing and the loss sits at log(V) without any NaN. The fixed run
only swaps the init for Xavier (the PyTorch-recommended gain for tanh)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "hidden.0"
SOURCE = "Bengio et al. 2003 NPLM; TF1 tutorials' tf.random_normal(stddev=0.01) init reused in deep MLPs (vanishing activations/gradients, Glorot & Bengio 2010)"


class NPLM(nn.Module):
    def __init__(self, vocab, ctx, emb, width, depth):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        layers = []
        d = ctx * emb
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        self.hidden = nn.Sequential(*layers)
        self.out = nn.Linear(d, vocab)

    def forward(self, ctx_ids):
        return self.out(self.hidden(self.embed(ctx_ids).flatten(1)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab = [27, 32, 24][seed % 3]
    ctx = [3, 4, 3][seed % 3]
    width = [64, 48, 80][seed % 3]
    depth = [6, 5, 7][seed % 3]
    steps = [150, 200, 120][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr = [0.1, 0.05, 0.1][seed % 3]
    # a noisy deterministic "grammar": next char depends on the previous two chars, marginal uniform
    a, b = 7, 3
    L = 20000
    seq = torch.empty(L, dtype=torch.long)
    seq[0], seq[1] = 1, 2
    noise = torch.rand(L, generator=g) < 0.1
    rnd = torch.randint(0, vocab, (L,), generator=g)
    for i in range(2, L):
        seq[i] = rnd[i] if noise[i] else (a * seq[i - 1] + b * seq[i - 2] + 1) % vocab
    starts = torch.randint(0, L - ctx - 1, (steps, bs), generator=g)
    batches = []
    for s in range(steps):
        idx = starts[s].unsqueeze(1) + torch.arange(ctx)
        batches.append((seq[idx], seq[starts[s] + ctx]))
    model = NPLM(vocab, ctx, 16, width, depth)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("tanh"))
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, t: F.cross_entropy(o, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
