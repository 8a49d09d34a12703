"""Supervised contrastive learning (SupCon, Khosla et al. 2020) on pre-extracted clip
features: MLP encoder + projection head, L2-normalised embeddings, temperature 0.07, two
augmented views per sample, SGD with momentum; forward and loss under float16 autocast (no
GradScaler).  The loss is a port of the SupCon formula written with explicit
``torch.exp(sim / tau)`` and a sum over the denominator.

Mechanism: the reference SupCon code subtracts the row maximum before exponentiating; the
port dropped it because "the embeddings are normalised, so the logits are bounded".  They
are bounded by 1/0.07 = 14.3, but exp(14.3) = 1.6e6 while float16 overflows above
exp(11.09) = 65504.  Freshly initialised ReLU-MLP embeddings are strongly correlated
(pairwise cosines ~0.3-0.98, median ~0.8), so on the very first step many exp terms and
every row's summed denominator are inf in half precision; inf / inf gives NaN and the loss
is NaN.  In float32 the same values are ordinary (~1e6) and training is normal.

ORIGIN: ``head.2`` - the projection head's output layer produces the embeddings whose
scaled similarities overflow (the overflowing exp is in the loss, on its output).

Fix: compute the similarity logits and the loss in float32 (embeddings cast with .float(),
autocast disabled inside the loss).  Same model, optimiser, data, steps and fp16 forward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "head.2"
SOURCE = ("SupCon (Khosla et al. 2020) reference loss uses logits - logits.max(); ports with "
          "plain exp(sim/0.07) overflow in float16 under AMP ('SupConLoss NaN with amp' "
          "reports)")


class SupConNet(nn.Module):
    def __init__(self, d_in, hid, emb):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, emb))

    def forward(self, xa, xb):
        z = self.head(self.encoder(torch.cat([xa, xb])))
        return F.normalize(z, dim=1)


def _supcon(z, labels, tau):
    labels = torch.cat([labels, labels])
    n = z.shape[0]
    self_mask = torch.eye(n, dtype=torch.bool)
    exp_sim = torch.exp(z @ z.T / tau).masked_fill(self_mask, 0)
    denom = exp_sim.sum(1, keepdim=True)
    pos = (labels[:, None] == labels[None, :]) & ~self_mask
    log_prob = torch.log(exp_sim / denom + 1e-12)
    return -((log_prob * pos).sum(1) / pos.sum(1)).mean()


def make_loss(tau, fp32):
    def loss_fn(z, labels):
        if fp32:
            with torch.autocast("cpu", enabled=False):
                return _supcon(z.float(), labels, tau)
        return _supcon(z, labels, tau)
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    hid = [128, 192, 160][seed % 3]
    emb = [64, 32, 48][seed % 3]
    bs = [48, 64, 40][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    steps = 150
    d_in, n_cls = 64, 32
    centers = torch.randn(n_cls, d_in, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = centers[y] + 1.0 * torch.randn(bs, d_in, generator=g)
        def view():
            return x * (torch.rand(bs, d_in, generator=g) > 0.2).float() \
                + 0.3 * torch.randn(bs, d_in, generator=g)
        batches.append(((view(), view()), y))
    model = SupConNet(d_in, hid, emb)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(0.07, fixed), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
