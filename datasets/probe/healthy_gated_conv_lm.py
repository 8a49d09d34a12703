"""Healthy: gated convolutional language model (GCNN / GLU LM, Dauphin et al. 2017).

Setup
-----
Token embedding -> a stack of residual blocks, each a causal (left-padded)
1-D convolution producing 2d channels split into value and gate halves,
h = A * sigmoid(B) (the Gated Linear Unit), with pre-LayerNorm and a residual
connection -> LayerNorm -> tied-free vocabulary projection.  Trained with Adam
(lr 1e-3..2e-3), gradient-norm clipping at 1.0 as in the paper, on synthetic
text drawn from a sparse second-order Markov source, so there is real
context structure for the causal convolutions to pick up.

Nothing is wrong: inputs are token ids, the init is PyTorch's default
(fan-in scaled), the learning rate is moderate, there is no mixed precision
and no unsafe op.  The cross-entropy falls steadily from ~log(V) towards the
source's conditional entropy.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Dauphin et al. 2017, 'Language Modeling with Gated Convolutional Networks' "
          "(GCNN-8 style residual GLU blocks, gradient clipping); fairseq fconv LM")


class GLUBlock(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.k = k
        self.norm = nn.LayerNorm(d)
        self.conv = nn.Conv1d(d, 2 * d, k)

    def forward(self, x):  # x: (B, T, d)
        h = self.norm(x).transpose(1, 2)
        h = F.pad(h, (self.k - 1, 0))  # causal
        h = F.glu(self.conv(h), dim=1)
        return x + h.transpose(1, 2)


class GatedConvLM(nn.Module):
    def __init__(self, vocab, d, k, depth):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[GLUBlock(d, k) for _ in range(depth)])
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.out(self.norm(self.blocks(self.embed(tokens))))


class ClippedAdam(torch.optim.Adam):
    """Adam with global grad-norm clipping applied inside step()."""

    def __init__(self, params, max_norm=1.0, **kw):
        params = list(params)
        super().__init__(params, **kw)
        self._clip_params = params
        self.max_norm = max_norm

    def step(self, closure=None):
        torch.nn.utils.clip_grad_norm_(self._clip_params, self.max_norm)
        return super().step(closure)


def _markov_source(g, vocab, branching):
    # p(x_t | x_{t-2}, x_{t-1}): each context allows `branching` next tokens
    nxt = torch.randint(0, vocab, (vocab, vocab, branching), generator=g)
    probs = torch.softmax(1.5 * torch.randn(vocab, vocab, branching, generator=g), -1)
    return nxt, probs


def _sample(g, nxt, probs, B, T, vocab):
    seq = torch.empty(B, T, dtype=torch.long)
    seq[:, :2] = torch.randint(0, vocab, (B, 2), generator=g)
    for t in range(2, T):
        a, b = seq[:, t - 2], seq[:, t - 1]
        choice = torch.multinomial(probs[a, b], 1, generator=g).squeeze(1)
        seq[:, t] = nxt[a, b, choice]
    return seq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    vocab = [32, 40, 48][seed % 3]
    d = [64, 64, 48][seed % 3]
    depth = [4, 3, 4][seed % 3]
    k = 3
    B, T = 24, 33
    steps = 200
    lr = [2e-3, 1.5e-3, 2e-3][seed % 3]

    nxt, probs = _markov_source(g, vocab, branching=3)
    batches = []
    for _ in range(steps):
        seq = _sample(g, nxt, probs, B, T, vocab)
        batches.append((seq[:, :-1], seq[:, 1:]))

    model = GatedConvLM(vocab, d, k, depth)
    opt = ClippedAdam(model.parameters(), max_norm=1.0, lr=lr)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
