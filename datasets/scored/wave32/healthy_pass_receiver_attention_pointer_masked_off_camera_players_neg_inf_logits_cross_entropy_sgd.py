"""Pass-receiver prediction from broadcast tracking: the passer's embedding attends over the
team-mates visible in the frame (a pointer-network style dot-product score per candidate);
candidates that are off-camera (not detected in this frame) are padding and their scores are
set to -inf with masked_fill before the cross-entropy over candidates; SGD with momentum.

Why it looks alarming but is healthy: the logits tensor holds -inf in 20-50% of its entries at
every step, and the masked score entries (and the padded candidates' encodings) get exactly zero
gradient; a monitor that scans activations for non-finite values, or flags exact-zero gradients,
would fire.  But
the true receiver is always a visible player, log_softmax assigns the masked entries -inf
log-probability and probability 0, the NLL only reads the target's entry, and its backward
multiplies by softmax = 0 there: the loss and all gradients are finite and the model learns.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Pointer networks (Vinyals et al. 2015) and pass-receiver models on tracking data "
          "(e.g. Power et al. 2017 'Not all passes are created equal'); the standard "
          "masked_fill(-inf) idiom of attention masks with cross-entropy.")


class ReceiverPointer(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.cand = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.passer = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.scale = hidden ** -0.5

    def forward(self, passer, cands, visible):
        q = self.passer(passer)                                    # (B, H)
        k = self.cand(cands)                                       # (B, N, H)
        scores = torch.einsum("bh,bnh->bn", q, k) * self.scale
        return scores.masked_fill(~visible, float("-inf"))


def _data(g, n, N=10):
    passer = torch.randn(n, 6, generator=g)
    cands = torch.randn(n, N, 6, generator=g)
    # camera view: 50-80% of team-mates visible, passer's nearby team-mates more likely
    visible = torch.rand(n, N, generator=g) < 0.5 + 0.3 * torch.rand(n, 1, generator=g)
    visible[:, 0] |= ~visible.any(1)
    # receiver utility: openness (feature 0), distance to passer along passer's facing, ...
    util = 1.5 * cands[..., 0] - (cands[..., 1:3] - passer[:, None, :2]).pow(2).sum(-1) * 0.5 \
        + cands[..., 3] * passer[:, None, 3]
    util = util + 0.3 * torch.randn(n, N, generator=g)
    y = util.masked_fill(~visible, float("-inf")).argmax(1)
    return passer, cands, visible, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(16000 + seed)
    hidden = [64, 32, 48][seed % 3]
    lr = [0.05, 0.08, 0.03][seed % 3]
    bs = [32, 48, 64][seed % 3]
    steps = 200
    model = ReceiverPointer(6, hidden)
    passer, cands, visible, y = _data(g, bs * steps)
    batches = [((passer[i * bs:(i + 1) * bs], cands[i * bs:(i + 1) * bs],
                 visible[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
