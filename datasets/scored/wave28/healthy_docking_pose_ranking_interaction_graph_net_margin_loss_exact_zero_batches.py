"""Healthy: pose-ranking scoring function for protein-ligand docking (a learned re-scorer in
the spirit of GNINA / DeepDock): each pose is a bipartite interaction graph of ligand-atom /
pocket-atom contacts within 6 A; a hand-written edge network embeds (RBF(distance), ligand
type, pocket type) per contact, sums messages into ligand atoms, updates them and sums to a
pose score. Training pairs a near-native pose (RMSD < 2 A) with a decoy of the same complex;
loss = mean(relu(margin - (s_native - s_decoy))) (margin ranking loss), SGD with momentum.

Why it is tricky but healthy: the hinge is exactly zero for every pair that is already
ranked by more than the margin. After the first few dozen steps most batches contain only
such pairs, so many steps have a loss of exactly 0.0 and all gradients exactly 0 (the
optimizer step is a pure momentum step), interleaved with steps that carry a loss from a
few hard decoys. A monitor that treats zero loss / zero gradients as a dead network would
flag it; the model is in fact ranking nearly all poses correctly.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Pose-ranking objectives for learned docking scoring functions (e.g. GNINA pose "
          "classification, DeepDock; nn.MarginRankingLoss); exact-zero hinge losses once "
          "pairs satisfy the margin")

N_LIG_T = 5
N_POC_T = 6
N_RBF = 16


class EdgeNet(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.lig_emb = nn.Embedding(N_LIG_T, hid)
        self.poc_emb = nn.Embedding(N_POC_T, hid)
        self.edge = nn.Sequential(nn.Linear(N_RBF + 2 * hid, hid), nn.SiLU(), nn.Linear(hid, hid))
        self.update = nn.Sequential(nn.Linear(2 * hid, hid), nn.SiLU())
        self.score = nn.Linear(hid, 1)
        self.register_buffer("centers", torch.linspace(2.0, 6.0, N_RBF))

    def pose_score(self, lt, pt, dist, emask):
        # lt (B, A) ligand types; pt (B, A, K) pocket types of the K contacts of each atom;
        # dist (B, A, K) contact distances; emask (B, A, K) valid contacts
        rbf = torch.exp(-4.0 * (dist[..., None] - self.centers) ** 2)
        hl = self.lig_emb(lt)
        e_in = torch.cat([rbf, hl[:, :, None].expand(-1, -1, dist.shape[-1], -1),
                          self.poc_emb(pt)], -1)
        msg = (self.edge(e_in) * emask[..., None]).sum(2)
        h = self.update(torch.cat([hl, msg], -1))
        return self.score(h).sum((1, 2))

    def forward(self, native, decoy):
        return torch.stack([self.pose_score(*native), self.pose_score(*decoy)], 1)


def _poses(g, n, A=12, K=8, decoy=False):
    lt = torch.randint(0, N_LIG_T, (n, A), generator=g)
    pt = torch.randint(0, N_POC_T, (n, A, K), generator=g)
    # complementary pairs (donor-acceptor, hydrophobic-hydrophobic) prefer ~3 A in the native
    compat = torch.tensor([[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1],
                           [1, 0, 0, 0, 0, 1], [0, 1, 1, 0, 0, 0]], dtype=torch.bool)
    good = compat[lt[:, :, None].expand(-1, -1, K), pt]
    if decoy:
        dist = 2.4 + 3.4 * torch.rand(n, A, K, generator=g)
        clash = torch.rand(n, A, K, generator=g) < 0.08
        dist = torch.where(clash, 1.6 + 0.6 * torch.rand(n, A, K, generator=g), dist)
    else:
        dist = torch.where(good, 2.8 + 0.5 * torch.rand(n, A, K, generator=g),
                           3.6 + 2.2 * torch.rand(n, A, K, generator=g))
    emask = (torch.rand(n, A, K, generator=g) < 0.8).float()
    return lt, pt, dist, emask


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(18000 + seed)
    hid = [32, 48, 24][seed % 3]
    bs = [16, 24, 32][seed % 3]
    lr = [1e-2, 5e-3, 8e-3][seed % 3]
    margin = 1.0
    steps = 150

    model = EdgeNet(hid)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def loss_fn(scores, _unused):
        return F.relu(margin - (scores[:, 0] - scores[:, 1])).mean()

    batches = []
    for _ in range(steps):
        nat = _poses(g, bs)
        lt, pt = nat[0], nat[1]
        dec = _poses(g, bs, decoy=True)
        # same ligand / pocket, different pose; ~10% are near-native decoys (RMSD 2-3 A)
        near = (torch.rand(bs, generator=g) < 0.1)[:, None, None]
        d_near = (nat[2] + 0.5 * torch.randn(nat[2].shape, generator=g)).clamp_min(1.8)
        dec = (lt, pt, torch.where(near, d_near, dec[2]), dec[3])
        batches.append(((nat, dec), torch.zeros(bs)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
