"""NetTCR-style TCR-peptide binding CNN initialised with Keras' RandomNormal(stddev=0.05).

Mechanism: two 1D-CNN branches (CDR3beta and peptide, one-hot encoded), each
three or four conv layers deep, are max-pooled, concatenated and classified by a small dense head
(binder / non-binder, balanced). Every conv/dense weight is drawn from N(0, 0.05^2) -- the
``kernel_initializer="random_normal"`` of the Keras original, kept in the port. With fan-in
60-200, each layer scales the activations by 0.05*sqrt(fan_in/2) ~ 0.3-0.5, so after 5-6 layers
the logit is ~1e-3 of its proper scale and the backward signal shrinks the same way. Plain SGD
cannot move such a network: the loss sits at log(2).

ORIGIN: ``cdr3.0`` -- the first convolution of the CDR3 branch, where the geometric shrinking of
the activation scale starts.

Fix: Kaiming-normal (ReLU gain) initialisation for conv and dense weights; same optimiser,
lr and data.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "cdr3.0"
SOURCE = ("NetTCR-2.0 (Montemurro et al. 2021) / ERGO-style CDR3-peptide CNNs re-implemented with "
          "Keras RandomNormal(stddev=0.05) weights; reports of the loss staying at 0.693 "
          "(AUC 0.5) with SGD.")

AA = 20


def branch(c, depth, k):
    layers, cin = [], AA
    for _ in range(depth):
        layers += [nn.Conv1d(cin, c, k, padding=k // 2), nn.ReLU()]
        cin = c
    return nn.Sequential(*layers)


class NetTCR(nn.Module):
    def __init__(self, c, depth):
        super().__init__()
        self.cdr3 = branch(c, depth, 3)
        self.peptide = branch(c, depth, 3)
        self.head = nn.Sequential(nn.Linear(2 * c, c), nn.ReLU(), nn.Linear(c, 1))

    def forward(self, cdr3, pep):
        a = self.cdr3(cdr3).amax(-1)
        b = self.peptide(pep).amax(-1)
        return self.head(torch.cat([a, b], 1)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [32, 48, 40][seed % 3]
    depth = [4, 3, 3][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bsz = [64, 48, 64][seed % 3]
    steps = 250
    L_cdr3, L_pep = 15, 9
    n_epi = 4
    epitopes = torch.randint(0, AA, (n_epi, L_pep), generator=g)
    motifs = torch.randint(0, AA, (n_epi, 3), generator=g)  # CDR3 motif recognising each epitope

    def onehot(t):
        return torch.nn.functional.one_hot(t, AA).float().transpose(1, 2)

    def make_batch():
        y = (torch.randperm(bsz, generator=g) < bsz // 2).float()
        e = torch.randint(0, n_epi, (bsz,), generator=g)
        pep = epitopes[e].clone()
        mut = torch.rand(bsz, L_pep, generator=g) < 0.15
        pep[mut] = torch.randint(0, AA, (int(mut.sum()),), generator=g)
        cdr3 = torch.randint(0, AA, (bsz, L_cdr3), generator=g)
        pos = torch.randint(3, L_cdr3 - 6, (bsz,), generator=g)
        wrong = (e + torch.randint(1, n_epi, (bsz,), generator=g)) % n_epi
        m = torch.where(y[:, None] > 0, motifs[e], motifs[wrong])  # negatives carry another epitope's motif
        for b in range(bsz):
            cdr3[b, pos[b]:pos[b] + 3] = m[b]
        return (onehot(cdr3), onehot(pep)), y

    batches = [make_batch() for _ in range(steps)]
    model = NetTCR(c, depth)
    for mod in model.modules():
        if isinstance(mod, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else:
                nn.init.normal_(mod.weight, mean=0.0, std=0.05)
            nn.init.zeros_(mod.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
