"""Evidential deep learning classifier (Sensoy et al. 2018): MLP trunk whose output logits go
through a ReLU "evidence" activation, alpha = evidence + 1 parameterises a Dirichlet, trained with
the expected-MSE evidential loss plus the annealed KL penalty on misleading evidence.

Mechanism: ReLU evidence has zero gradient wherever a logit is negative.  The KL term and the MSE
term both push the evidence of wrong classes to zero, i.e. push those logits below zero.  With the
Adam lr taken from a plain cross-entropy recipe, the first few steps drive the shared head bias /
weights so far negative that (almost) every logit of every input is < 0: the evidence is exactly
0, alpha is the uniform Dirichlet(1,...,1) for most samples, no gradient reaches the network
through them and the loss stays flat for the rest of the run.
ORIGIN: evidence - the ReLU evidence activation is the unit that dies.
Fix: an Adam lr suited to the evidential head (1e-2), everything else unchanged (Softplus
evidence is the other common cure)."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "evidence"
SOURCE = "Sensoy et al. 2018 EDL with ReLU evidence; reported 'zero-evidence region' / dead evidence (Pandey & Yu 2023, GitHub issues on EDL repos)"


class EvidentialMLP(nn.Module):
    def __init__(self, d_in, width, n_cls):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, width), nn.GELU(), nn.Linear(width, width), nn.GELU())
        self.head = nn.Linear(width, n_cls)
        self.evidence = nn.ReLU()

    def forward(self, x):
        return self.evidence(self.head(self.trunk(x))) + 1.0  # Dirichlet alpha


def make_loss(n_cls, anneal_steps):
    state = {"t": 0}

    def edl_loss(alpha, y):
        onehot = nn.functional.one_hot(y, n_cls).to(alpha.dtype)
        S = alpha.sum(1, keepdim=True)
        p = alpha / S
        mse = ((onehot - p) ** 2 + p * (1 - p) / (S + 1)).sum(1)
        at = onehot + (1 - onehot) * alpha
        St = at.sum(1, keepdim=True)
        kl = (torch.lgamma(St).squeeze(1) - torch.lgamma(torch.tensor(float(n_cls)))
              - torch.lgamma(at).sum(1)
              + ((at - 1) * (torch.digamma(at) - torch.digamma(St))).sum(1))
        coef = min(1.0, state["t"] / anneal_steps)
        state["t"] += 1
        return (mse + coef * kl).mean()

    return edl_loss


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_cls = [4, 5, 3][seed % 3]
    width = [64, 96, 48][seed % 3]
    lr = 0.01 if fixed else [0.3, 0.2, 0.4][seed % 3]  # bug: lr of a CE+label-smoothing recipe with warmup, used without warmup
    bs = [64, 32, 48][seed % 3]
    steps = 80
    d_in = 10
    model = EvidentialMLP(d_in, width, n_cls)
    centers = torch.randn(n_cls, d_in, generator=g) * 1.5
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = centers[y] + torch.randn(bs, d_in, generator=g)
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(n_cls, 10), batches=batches, steps=steps)
