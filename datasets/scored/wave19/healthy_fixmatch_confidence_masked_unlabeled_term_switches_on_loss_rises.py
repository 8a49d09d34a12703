"""HEALTHY: FixMatch semi-supervised training (Sohn et al. 2020) of a small MLP classifier on
wearable-sensor features: few labels, many unlabeled windows with weak/strong augmentation.

Why it looks alarming but is fine: loss = CE(labelled) + lambda_u * mean(mask * CE(strong,
pseudo-label)), with mask = max softmax of the weak view >= 0.95.  For the first steps no
unlabeled sample is confident, the unlabeled term is an exact 0 and most of the batch
contributes no gradient; the total loss is just the labelled CE and falls fast.  Once the
model becomes confident, the mask switches on, the strongly augmented (masked, jittered,
rescaled) views are much harder than the weak ones, and the total loss jumps up and stays
noisy for a while as the masked fraction grows -- then falls again as the strong-view
predictions become consistent.  The unlabeled term is averaged over the whole unlabeled
batch (as in the official code), never divided by the number of confident samples, so there
is no 0/0 when the mask is empty.  Nothing is broken; the run converges.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Sohn et al. 2020 'FixMatch' (confidence threshold 0.95, lambda_u = 1, mu = 7, "
          "unlabeled loss averaged over the full unlabeled batch); kekmodel/FixMatch-pytorch "
          "training curves where the total loss rises when the mask activates")


class MLP(nn.Module):
    def __init__(self, d_in, hidden, n_cls):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_cls))

    def forward(self, x_l, x_weak, x_strong):
        n_l, n_u = x_l.shape[0], x_weak.shape[0]
        logits = self.net(torch.cat([x_l, x_weak, x_strong]))
        return logits[:n_l], logits[n_l:n_l + n_u], logits[n_l + n_u:]


def make_fixmatch_loss(tau=0.95, lambda_u=1.0):
    def loss_fn(out, y_l):
        logit_l, logit_w, logit_s = out
        sup = F.cross_entropy(logit_l, y_l)
        probs = logit_w.detach().softmax(-1)
        conf, pseudo = probs.max(-1)
        mask = (conf >= tau).float()
        unsup = (F.cross_entropy(logit_s, pseudo, reduction="none") * mask).mean()
        return sup + lambda_u * unsup
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(hidden=128, B=32, mu=5, lr=0.03, steps=200),
           dict(hidden=96, B=24, mu=7, lr=0.03, steps=180),
           dict(hidden=160, B=32, mu=4, lr=0.02, steps=220)][seed % 3]
    g = torch.Generator().manual_seed(777 + seed)
    d_in, n_cls = 30, 6
    centers = torch.randn(n_cls, d_in, generator=g) * 0.9
    n_lab = 240                                                   # 40 labels per class
    y_lab = torch.arange(n_cls).repeat(n_lab // n_cls)
    x_lab = centers[y_lab] + torch.randn(n_lab, d_in, generator=g)

    def weak(x):
        return x + 0.1 * torch.randn(x.shape, generator=g)

    def strong(x):
        keep = (torch.rand(x.shape, generator=g) > 0.3).float()     # sensor-channel dropout
        scale = 0.7 + 0.6 * torch.rand(x.shape[0], 1, generator=g)  # gain jitter
        return x * keep * scale + 0.6 * torch.randn(x.shape, generator=g)

    B, mu = cfg["B"], cfg["mu"]
    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n_lab, (B,), generator=g)
        yu = torch.randint(0, n_cls, (B * mu,), generator=g)
        xu = centers[yu] + torch.randn(B * mu, d_in, generator=g)
        batches.append(((weak(x_lab[idx]), weak(xu), strong(xu)), y_lab[idx]))

    torch.manual_seed(seed)
    model = MLP(d_in, cfg["hidden"], n_cls)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=make_fixmatch_loss(), batches=batches,
                steps=cfg["steps"])
