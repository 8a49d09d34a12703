"""DeepDTA-style drug-target affinity regression trained with an Adam lr that is far too high.

Mechanism: two 1D-CNN branches embed a ligand SMILES string and a protein sequence (token
embeddings -> 3 convs -> global max pool); the pooled features are concatenated and an MLP
regresses the standardised binding affinity (pKd). The Adam lr (5e-2 .. 1e-1) was copied from
a recipe that only fine-tuned a linear head; on the full network every step moves each
weight by ~lr (update/weight ratios of 0.1-1 instead of ~1e-3). The first updates overshoot,
the loss spikes by orders of magnitude, the ReLU stacks are thrown into a dead, constant
regime and the model ends up predicting the mean: the loss plateaus at the target variance.

ORIGIN: ``fc.0`` -- the first dense layer after the concatenation, where the overshooting
updates first blow up the activations.

Fix: Adam at lr 2e-3 (same optimiser, model and data).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = "fc.0"
SOURCE = ("DeepDTA (Ozturk et al. 2018) on Davis/KIBA-style pKd regression; re-implementation "
          "issues where the loss spikes then flat-lines at the target variance (constant "
          "prediction, CI = 0.5) with lr=0.01-0.1 instead of the paper's 1e-3.")


class Branch(nn.Module):
    def __init__(self, vocab, emb, c, k):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.convs = nn.Sequential(nn.Conv1d(emb, c, k), nn.ReLU(), nn.Conv1d(c, 2 * c, k), nn.ReLU(),
                                   nn.Conv1d(2 * c, 3 * c, k), nn.ReLU())

    def forward(self, tok):
        return self.convs(self.emb(tok).transpose(1, 2)).amax(-1)


class DeepDTA(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.drug = Branch(40, 32, c, 4)
        self.target = Branch(26, 32, c, 8)
        self.fc = nn.Sequential(nn.Linear(6 * c, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, smiles, protein):
        return self.fc(torch.cat([self.drug(smiles), self.target(protein)], 1)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 16][seed % 3]
    bad_lr = [5e-2, 1e-1, 8e-2][seed % 3]
    bsz = [32, 48, 40][seed % 3]
    Ld, Lp = 24, 48
    steps = 200
    # hidden affinity rule: binding motifs in the drug and pocket motifs in the protein interact
    n_motif = 4
    drug_motifs = torch.randint(1, 40, (n_motif, 3), generator=g)
    prot_motifs = torch.randint(1, 26, (n_motif, 4), generator=g)
    inter = torch.randn(n_motif, n_motif, generator=g)
    w_d = torch.randn(n_motif, generator=g)
    w_p = torch.randn(n_motif, generator=g)
    mu = 0.5 * (w_d.sum() + w_p.sum()) + 0.25 * 0.3 * inter.sum()
    sd = (0.25 * (w_d.pow(2).sum() + w_p.pow(2).sum()) + 0.05) ** 0.5

    def make_batch():
        smi = torch.randint(1, 40, (bsz, Ld), generator=g)
        pro = torch.randint(1, 26, (bsz, Lp), generator=g)
        dm = torch.rand(bsz, n_motif, generator=g) < 0.5
        pm = torch.rand(bsz, n_motif, generator=g) < 0.5
        for b in range(bsz):
            for m in range(n_motif):
                if dm[b, m]:
                    s = int(torch.randint(0, Ld - 3, (1,), generator=g)); smi[b, s:s + 3] = drug_motifs[m]
                if pm[b, m]:
                    s = int(torch.randint(0, Lp - 4, (1,), generator=g)); pro[b, s:s + 4] = prot_motifs[m]
        pkd = dm.float() @ w_d + pm.float() @ w_p + ((dm.float() @ inter) * pm.float()).sum(1) * 0.3
        pkd = pkd + 0.1 * torch.randn(bsz, generator=g)
        return (smi, pro), (pkd - mu) / sd

    batches = [make_batch() for _ in range(steps)]
    model = DeepDTA(c)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3 if fixed else bad_lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
