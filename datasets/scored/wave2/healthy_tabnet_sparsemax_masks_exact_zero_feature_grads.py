"""Compact TabNet-style classifier (Arik & Pfister 2019): at each decision step an attentive
transformer produces a feature-selection mask with sparsemax (scaled by a prior that discourages
re-using features), the masked features go through a shared GLU feature transformer, and the ReLU
outputs of all steps are summed into the decision embedding. Sparsemax returns exact zeros (about
80% of the mask entries here), so for each row most mask logits and most masked-feature inputs get
exactly zero gradient, and many ReLU decision units are off per step: statistics that look like
dead units or a broken graph. This is
the intended sparse feature selection; the loss falls steadily and nothing is non-finite."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Arik & Pfister 2019 'TabNet: Attentive Interpretable Tabular Learning' (sparsemax masks, prior scales); dreamquark-ai/tabnet"


def sparsemax(z):
    zs, _ = torch.sort(z, dim=-1, descending=True)
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cs = zs.cumsum(-1)
    support = (1 + k * zs) > cs
    k_z = support.sum(-1, keepdim=True)
    tau = (cs.gather(-1, k_z - 1) - 1) / k_z.to(z.dtype)
    return torch.clamp(z - tau, min=0.0)


class GLUBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, 2 * d_out)
        self.bn = nn.BatchNorm1d(2 * d_out)

    def forward(self, x):
        return F.glu(self.bn(self.fc(x)), dim=-1)


class TabNetLite(nn.Module):
    def __init__(self, n_feat, n_d, n_steps, n_classes, gamma=1.3):
        super().__init__()
        self.n_steps, self.n_d, self.gamma = n_steps, n_d, gamma
        self.input_bn = nn.BatchNorm1d(n_feat)
        self.shared = GLUBlock(n_feat, 2 * n_d)
        self.step_blocks = nn.ModuleList([GLUBlock(2 * n_d, 2 * n_d) for _ in range(n_steps + 1)])
        self.attentive = nn.ModuleList([nn.Linear(n_d, n_feat) for _ in range(n_steps)])
        self.att_bn = nn.ModuleList([nn.BatchNorm1d(n_feat) for _ in range(n_steps)])
        self.head = nn.Linear(n_d, n_classes)

    def feat(self, x, i):
        h = self.shared(x)
        return (h + self.step_blocks[i](h)) * 0.7071

    def forward(self, x):
        x = self.input_bn(x)
        prior = torch.ones_like(x)
        a = self.feat(x, 0)[:, self.n_d:]
        out = 0.0
        for i in range(self.n_steps):
            mask = sparsemax(self.att_bn[i](self.attentive[i](a)) * prior)
            prior = prior * (self.gamma - mask)
            h = self.feat(mask * x, i + 1)
            out = out + F.relu(h[:, :self.n_d])
            a = h[:, self.n_d:]
        return self.head(out)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_feat = [16, 20, 12][seed % 3]
    n_d = [8, 12, 8][seed % 3]
    n_steps = [3, 2, 4][seed % 3]
    n_classes = [3, 4, 3][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = [120, 150, 100][seed % 3]
    lr = [2e-2, 1.5e-2, 2e-2][seed % 3]
    W = torch.zeros(n_feat, n_classes)
    informative = torch.randperm(n_feat, generator=g)[:4]
    W[informative] = torch.randn(4, n_classes, generator=g) * 2.0
    batches = []
    for s in range(steps):
        x = torch.randn(bs, n_feat, generator=g)
        logits = x @ W + 1.5 * (x[:, informative[0]] * x[:, informative[1]]).unsqueeze(1) * torch.arange(n_classes)
        y = torch.multinomial(torch.softmax(logits, -1), 1, generator=g).squeeze(1)
        batches.append((x, y))
    model = TabNetLite(n_feat, n_d, n_steps, n_classes)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, t: F.cross_entropy(o, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
