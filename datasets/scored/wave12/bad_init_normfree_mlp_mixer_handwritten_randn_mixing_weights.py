"""Norm-free MLP-Mixer for a dense task (per-patch keypoint-heatmap logits on small images),
with hand-written mixing layers: each block stores its token-mixing and channel-mixing weights
as nn.Parameter(torch.randn(in, out)) and applies x @ W. torch.randn gives std 1, not
1/sqrt(fan_in), and there is no LayerNorm in the blocks, so every mixing matmul multiplies the
activation scale by about sqrt(fan_in) (4-8x); after four blocks of two such matmuls each the
residual stream is many orders of magnitude larger than the patch embedding. The per-patch
keypoint logits are ~1e10 at step 0, the cross-entropy gradient is of the same order, and the
first momentum-SGD step sends the weights to inf: the loss is NaN from step 1. Scaling the same
parameters by 1/sqrt(fan_in) (LeCun/Xavier-style) trains with the same optimizer and lr."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.token_mix.fc1"
SOURCE = ("Tolstikhin et al. 2021 MLP-Mixer; known from-scratch pitfall: hand-written layers "
          "initialised with torch.randn without the 1/sqrt(fan_in) scaling")


class RawLinear(nn.Module):
    """x @ W + b with W stored as (in, out), as in many from-scratch implementations."""
    def __init__(self, d_in, d_out, fixed):
        super().__init__()
        w = torch.randn(d_in, d_out)
        if fixed:
            w = w / math.sqrt(d_in)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class TokenMix(nn.Module):
    def __init__(self, n_tok, hidden, fixed):
        super().__init__()
        self.fc1 = RawLinear(n_tok, hidden, fixed)
        self.fc2 = RawLinear(hidden, n_tok, fixed)

    def forward(self, x):                       # x: B, N, C -> mix along N
        y = x.transpose(1, 2)
        y = self.fc2(F.gelu(self.fc1(y)))
        return y.transpose(1, 2)


class ChannelMix(nn.Module):
    def __init__(self, dim, hidden, fixed):
        super().__init__()
        self.fc1 = RawLinear(dim, hidden, fixed)
        self.fc2 = RawLinear(hidden, dim, fixed)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, n_tok, dim, fixed):
        super().__init__()
        self.token_mix = TokenMix(n_tok, 32, fixed)
        self.channel_mix = ChannelMix(dim, 64, fixed)

    def forward(self, x):
        x = x + self.token_mix(x)
        return x + self.channel_mix(x)


class KeypointMixer(nn.Module):
    def __init__(self, fixed, patch=4, img=16, dim=32, depth=4, n_kp=3):
        super().__init__()
        self.patch = patch
        n_tok = (img // patch) ** 2
        self.embed = nn.Linear(3 * patch * patch, dim)
        self.blocks = nn.ModuleList([MixerBlock(n_tok, dim, fixed) for _ in range(depth)])
        self.head = nn.Linear(dim, n_kp)

    def forward(self, x):
        b = x.shape[0]
        p = F.unfold(x, self.patch, stride=self.patch).transpose(1, 2)   # B, N, 3*p*p
        h = self.embed(p)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h).transpose(1, 2)      # B, K, N: per-keypoint logits over patches


def _batch(g, n=16, img=16, patch=4, n_kp=3):
    grid = img // patch
    x = 0.3 * torch.randn(n, 3, img, img, generator=g)
    tgt = torch.zeros(n, n_kp, dtype=torch.long)
    for i in range(n):
        for k in range(n_kp):
            cell = int(torch.randint(0, grid * grid, (1,), generator=g))
            r, c = divmod(cell, grid)
            x[i, k, r * patch:(r + 1) * patch, c * patch:(c + 1) * patch] += 0.3   # a faint mark
            tgt[i, k] = cell
    return x, tgt


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = KeypointMixer(fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 150
    batches = [_batch(g) for _ in range(steps)]

    def loss_fn(logits, tgt):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
