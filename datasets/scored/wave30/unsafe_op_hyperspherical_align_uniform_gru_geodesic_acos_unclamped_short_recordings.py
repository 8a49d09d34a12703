"""Alignment + uniformity self-supervised learning on the hypersphere (Wang & Isola 2020)
for variable-length wearable recordings: a GRU encoder over random crops, L2-normalised
embeddings, alignment measured as the squared *geodesic* angle between the two crops'
embeddings, ``acos(cos_sim)^2``, plus the Gaussian-potential uniformity term, RMSprop.

Mechanism: the angle is computed as ``torch.acos(F.cosine_similarity(za, zb))`` with no
clamp.  For ordinary pairs cos < 1 and the run is calm.  Most recordings are longer than
the crop, but the stream contains a few short recordings (the step where the first one
appears depends on the seed); a recording shorter than the crop is zero-padded and both
"random" crops return the whole padded recording, so the two views are identical.  Their
embeddings are bit-identical, the cosine comes out as exactly 1.0 (or 1.0000001 after
rounding): acos gives NaN in the forward pass in the second case, and in the first the
backward is acos'(1) = -1/sqrt(0) = -inf times 2*theta = 0, i.e. NaN gradients.  The
weights become NaN and the loss is NaN from then on.

ORIGIN: ``proj`` - the projection whose (normalised) outputs feed the unguarded acos; the
encoder and data are fine, the op has no domain guard.

Fix: clamp the cosine to [-1 + 1e-6, 1 - 1e-6] before acos (as ArcFace-style code does).
Same model, optimiser, data and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "proj"
SOURCE = ("Wang & Isola 2020 alignment/uniformity; geodesic (acos) variants and ArcFace-style "
          "code need cos.clamp(-1+eps, 1-eps) - 'acos gives nan gradient at 1' PyTorch "
          "forum/GitHub reports")


class GRUEncoder(nn.Module):
    def __init__(self, c_in, hid, emb):
        super().__init__()
        self.gru = nn.GRU(c_in, hid, batch_first=True)
        self.proj = nn.Linear(hid, emb)

    def forward(self, xa, xb):
        _, h = self.gru(torch.cat([xa, xb]))
        z = F.normalize(self.proj(h[-1]), dim=1)
        n = xa.shape[0]
        return z[:n], z[n:]


def make_loss(clamp):
    def loss_fn(out, target):
        za, zb = out
        cos = F.cosine_similarity(za, zb, dim=1)
        if clamp:
            cos = cos.clamp(-1 + 1e-6, 1 - 1e-6)
        align = torch.acos(cos).pow(2).mean()
        z = torch.cat([za, zb])
        sq = (2 - 2 * z @ z.T)
        n = z.shape[0]
        off = ~torch.eye(n, dtype=torch.bool)
        uniform = torch.log(torch.exp(-2 * sq[off]).mean())
        return align + uniform
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hid = [48, 64, 32][seed % 3]
    emb = [32, 24, 16][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [2e-3, 1.5e-3, 3e-3][seed % 3]
    crop = [40, 32, 48][seed % 3]
    steps = 120
    first_short = [17, 29, 41][seed % 3] + 2 * (seed // 3)
    c_in, n_act = 3, 6
    act_freq = 0.1 + 0.4 * torch.rand(n_act, c_in, generator=g)
    act_amp = 0.5 + torch.rand(n_act, c_in, generator=g)
    batches = []
    for step in range(steps):
        act = torch.randint(0, n_act, (bs,), generator=g)
        lengths = torch.randint(crop + 16, 3 * crop, (bs,), generator=g)
        if step >= first_short and step % 9 == first_short % 9:
            lengths[int(torch.randint(0, bs, (1,), generator=g))] = crop - 8   # short recording
        T = max(int(lengths.max()), crop)
        t = torch.arange(T).float().view(1, T, 1)
        ph = 6.28 * torch.rand(bs, 1, c_in, generator=g)
        x = act_amp[act].unsqueeze(1) * torch.sin(act_freq[act].unsqueeze(1) * t + ph)
        x = x + 0.15 * torch.randn(bs, T, c_in, generator=g)
        x = x * (t < lengths.view(bs, 1, 1)).float()                      # zero padding
        # positive pair = two overlapping crops a few frames apart (temporal neighbours);
        # the start is clamped to the recording, so a recording no longer than the crop
        # yields the same (zero-padded) crop twice
        starts_a, starts_b = [], []
        for i in range(bs):
            hi = max(int(lengths[i]) - crop, 0)
            sa = int(torch.randint(0, max(hi - 12, 0) + 1, (1,), generator=g))
            sb = min(sa + int(torch.randint(4, 13, (1,), generator=g)), hi)
            starts_a.append(sa)
            starts_b.append(sb)
        xa = torch.stack([x[i, s:s + crop] for i, s in enumerate(starts_a)])
        xb = torch.stack([x[i, s:s + crop] for i, s in enumerate(starts_b)])
        batches.append(((xa, xb), torch.zeros(bs)))
    model = GRUEncoder(c_in, hid, emb)
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fixed), batches=batches, steps=steps)
