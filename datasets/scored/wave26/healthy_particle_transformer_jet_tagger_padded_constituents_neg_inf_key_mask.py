"""Healthy: small Particle-Transformer-style jet tagger (top / W / QCD) over zero-padded,
variable-length constituent lists, with padded keys masked by -inf attention logits.

What a naive monitor may flag: the attention logits contain -inf for every padded key (jets
have 8-30 constituents padded to 32), and the softmax gives exact zeros there; the padded
rows of the hidden states carry junk that never reaches the loss (pooling is a masked mean),
so their gradients are exactly zero; the cross-entropy is noisy from batch to batch.  Every
jet has at least one real constituent, so no attention row is all -inf and nothing becomes
NaN; the classifier learns.

ORIGIN: None (healthy run).

Set-up: per-particle features (log pT fraction, d_eta, d_phi, log dR, charge), a linear
embedding, 2-3 pre-LN transformer blocks with hand-written multi-head attention, masked mean
pooling, a linear head and cross-entropy; AdamW.  Seeds change the width, the depth, the
number of heads, the learning rate and the batch size.
"""
import math
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Qu, Li, Qian, 'Particle Transformer for jet tagging' (ICML 2022) and ParticleNet "
          "padding masks; PyTorch key_padding_mask semantics (-inf logits for padded keys); "
          "JetClass-style top/W/QCD classes.")

NMAX = 32


def _jets(n, g):
    y = torch.randint(0, 3, (n,), generator=g)            # 0 QCD, 1 W (2-prong), 2 top (3-prong)
    mult = torch.randint(8, 31, (n,), generator=g)
    x = torch.zeros(n, NMAX, 5)
    mask = torch.zeros(n, NMAX, dtype=torch.bool)
    for j in range(n):
        m = int(mult[j])
        nprong = int(y[j]) + 1
        ang = 2 * math.pi * torch.rand(nprong, generator=g)
        rad = torch.where(torch.arange(nprong) == 0, torch.zeros(nprong),
                          0.25 + 0.35 * torch.rand(nprong, generator=g))
        cx, cy = rad * torch.cos(ang), rad * torch.sin(ang)
        k = torch.randint(0, nprong, (m,), generator=g)
        spread = 0.04 if nprong > 1 else 0.12
        eta = cx[k] + spread * torch.randn(m, generator=g)
        phi = cy[k] + spread * torch.randn(m, generator=g)
        pt = torch.empty(m).exponential_(1.0, generator=g) + 0.05
        f = pt / pt.sum()
        dr = torch.sqrt(eta ** 2 + phi ** 2 + 1e-8)
        q = torch.randint(-1, 2, (m,), generator=g).float()
        x[j, :m] = torch.stack([torch.log(f) / 3, eta * 4, phi * 4, torch.log(dr) / 3, q], 1)
        mask[j, :m] = True
    return (x, mask), y


class MaskedMHA(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, mask):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        logits = logits.masked_fill(~mask[:, None, None, :], float("-inf"))
        att = torch.softmax(logits, -1)
        return self.out((att @ v).transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = MaskedMHA(d, heads)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.ffn(self.ln2(x))


class ParTLite(nn.Module):
    def __init__(self, d, depth, heads):
        super().__init__()
        self.embed = nn.Linear(5, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(depth)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, 3)

    def forward(self, x, mask):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h, mask)
        m = mask.unsqueeze(-1).float()
        pooled = (self.ln(h) * m).sum(1) / m.sum(1)
        return self.head(pooled)


def build(seed: int, fixed: bool = False) -> dict:
    d = [32, 48, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    heads = [4, 4, 6][seed % 3]
    lr = [2e-3, 1.5e-3, 1e-3][seed % 3]
    bs = [48, 32, 40][seed % 3]
    steps = 100
    g = torch.Generator().manual_seed(18000 + seed)
    batches = [_jets(bs, g) for _ in range(steps)]
    torch.manual_seed(seed)
    model = ParTLite(d, depth, heads)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
