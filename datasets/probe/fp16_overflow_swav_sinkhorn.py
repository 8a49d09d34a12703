"""SwAV (Caron et al. 2020) on two augmented views under float16 autocast. Sinkhorn-Knopp codes
are computed as in the reference code, Q = exp(scores/0.05) then sum-normalised, on the fp16
prototype scores. While features are random the scores stay < ~0.4 and Q fits in fp16; as the
prototypes align with the clusters exp(score/eps) and sum(Q) pass 65504 -> inf, inf/inf gives
NaN codes and a NaN loss around step 30-40. fixed=True: the Sinkhorn step runs in fp32.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None  # the overflowing exp/sum is in the loss (Sinkhorn-Knopp), outside any module
SOURCE = ("facebookresearch/swav main_swav.py distributed_sinkhorn: Q = exp(out/epsilon), "
          "epsilon=0.05; swav issue #67 'sinkhorn produces NaN caused by the sum of Q which "
          "become inf'; dinov2 PR #583 (exp(teacher_output/temp) overflow in Sinkhorn-Knopp)")

STEPS = 200
BATCH = 32
IN_DIM = 32
N_CLUSTERS = 12
N_PROTO = 32
EPS = 0.05
CENTER_SCALE = 1.5
NOISE = 1.5
LR = 0.01
TEMP = 0.1


class SwAVNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Linear(IN_DIM, 128), nn.BatchNorm1d(128), nn.ReLU(),
            nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU(),
                                       nn.Linear(128, 64))
        self.prototypes = nn.Linear(64, N_PROTO, bias=False)

    def _scores(self, x):
        z = F.normalize(self.projector(self.backbone(x)), dim=1)
        w = F.normalize(self.prototypes.weight, dim=1)
        return z @ w.t()  # cosine similarities in [-1, 1]

    def forward(self, v1, v2):
        return self._scores(v1), self._scores(v2)


def _sinkhorn(scores, n_iters=3):
    # reference implementation (non-log domain)
    Q = torch.exp(scores / EPS).t()  # K x B
    K, B = Q.shape
    Q = Q / torch.sum(Q)
    for _ in range(n_iters):
        Q = Q / torch.sum(Q, dim=1, keepdim=True)
        Q = Q / K
        Q = Q / torch.sum(Q, dim=0, keepdim=True)
        Q = Q / B
    return (Q * B).t()


def make_loss(fp32_sinkhorn: bool):
    def swav_loss(out, _target):
        s1, s2 = out
        with torch.no_grad():
            if fp32_sinkhorn:
                with torch.autocast("cpu", enabled=False):
                    q1, q2 = _sinkhorn(s1.float()), _sinkhorn(s2.float())
            else:
                q1, q2 = _sinkhorn(s1), _sinkhorn(s2)
        p1 = F.log_softmax(s1.float() / TEMP, dim=1)
        p2 = F.log_softmax(s2.float() / TEMP, dim=1)
        return -0.5 * ((q1 * p2).sum(1).mean() + (q2 * p1).sum(1).mean())
    return swav_loss


def _augment(x, g):
    keep = (torch.rand(x.shape, generator=g) > 0.2).float()
    return (x + 0.3 * torch.randn(x.shape, generator=g)) * keep


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    centers = torch.randn(N_CLUSTERS, IN_DIM, generator=g) * CENTER_SCALE
    batches = []
    for _ in range(STEPS):
        lab = torch.randint(N_CLUSTERS, (BATCH,), generator=g)
        x = centers[lab] + NOISE * torch.randn(BATCH, IN_DIM, generator=g)
        batches.append(((_augment(x, g), _augment(x, g)), lab))
    model = SwAVNet()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, weight_decay=1e-6)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fp32_sinkhorn=fixed), batches=batches,
                steps=STEPS, amp_dtype=torch.float16, scaler=None)
