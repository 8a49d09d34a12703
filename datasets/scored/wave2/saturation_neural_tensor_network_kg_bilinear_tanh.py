"""Neural Tensor Network (Socher et al. 2013) for knowledge-base completion: a triple (h, r, t) is
scored as u_r . tanh(e_h^T W_r[1:k] e_t + V_r [e_h; e_t] + b_r), trained with SGD+momentum as
triple classification against tail-corrupted negatives. The entity vectors come straight from
nn.Embedding (N(0,1), norm ~sqrt(d)), and the bilinear tensor slices use a fan-in style N(0, 1/d)
init, so the bilinear pre-activation has a standard deviation of about sqrt(d) (~5-6): from the
first step 60-70% of the tanh units in the tensor layer sit beyond |tanh| > 0.99. The gradients
into the entity embeddings and the tensor are crushed by tanh', the readout u_r only sees
near-binary random features, and the BCE stays near log 2 (no NaN). The fixed run only
L2-normalises the entity vectors before the tensor layer (smaller pre-activations), as the
original NTN code constrained entity norms."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "tensor_layer"
SOURCE = "Socher et al. 2013 'Reasoning With Neural Tensor Networks'; reimplementations whose NTN tanh layer saturates with unnormalised entity embeddings"


class TensorLayer(nn.Module):
    def __init__(self, n_rel, d, k):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_rel, k, d, d) / d ** 0.5)
        self.V = nn.Parameter(torch.randn(n_rel, k, 2 * d) / (2 * d) ** 0.5)
        self.b = nn.Parameter(torch.zeros(n_rel, k))

    def forward(self, eh, r, et):
        bil = torch.einsum("bi,bkij,bj->bk", eh, self.W[r], et)
        lin = torch.einsum("bkd,bd->bk", self.V[r], torch.cat([eh, et], -1))
        return bil + lin + self.b[r]


class NTN(nn.Module):
    def __init__(self, n_ent, n_rel, d, k, normalise):
        super().__init__()
        self.normalise = normalise
        self.entity = nn.Embedding(n_ent, d)
        self.tensor_layer = TensorLayer(n_rel, d, k)
        self.act = nn.Tanh()
        self.u = nn.Embedding(n_rel, k)
        nn.init.normal_(self.u.weight, 0.0, 0.1)

    def forward(self, h, r, t):
        eh, et = self.entity(h), self.entity(t)
        if self.normalise:
            eh, et = F.normalize(eh, dim=-1), F.normalize(et, dim=-1)
        z = self.act(self.tensor_layer(eh, r, et))
        return (self.u(r) * z).sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_ent = [120, 150, 100][seed % 3]
    n_rel = [3, 4, 2][seed % 3]
    d = [32, 24, 40][seed % 3]
    k = [4, 3, 4][seed % 3]
    bs = [128, 96, 128][seed % 3]
    steps = [250, 300, 220][seed % 3]
    lr = [0.5, 2.0, 2.0][seed % 3]
    # latent clusters decide which (h, r, t) are true
    cl = torch.randint(0, 6, (n_ent,), generator=g)
    rule = torch.randint(0, 6, (n_rel, 6), generator=g)   # relation r maps cluster c -> cluster rule[r,c]
    members = [torch.nonzero(cl == c).flatten() for c in range(6)]
    batches = []
    for s in range(steps):
        h = torch.randint(0, n_ent, (bs,), generator=g)
        r = torch.randint(0, n_rel, (bs,), generator=g)
        t = torch.randint(0, n_ent, (bs,), generator=g)          # corrupted tails
        want = rule[r, cl[h]]
        pos = torch.rand(bs, generator=g) < 0.5                 # half of the batch: true tails
        t_pos = torch.stack([members[c][torch.randint(0, len(members[c]), (1,), generator=g)][0] for c in want.tolist()])
        t = torch.where(pos, t_pos, t)
        y = (cl[t] == rule[r, cl[h]]).float()
        batches.append(((h, r, t), y))
    model = NTN(n_ent, n_rel, d, k, normalise=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt,
                loss_fn=lambda o, y: F.binary_cross_entropy_with_logits(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
