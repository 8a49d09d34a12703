"""Embedding+MLP CTR model (the DNN tower of the DeepFM/xDeepFM family, without the FM/CIN part):
12 categorical fields with 8-d embeddings feeding two ReLU layers, trained with Adagrad. The learning rate 1.0 was
carried over from the FTRL/Adagrad logistic-regression baseline, where it is a sensible value for
sparse linear weights. Adagrad's first update is lr * g/|g|, i.e. every dense weight of the tower
moves by a full 1.0 on the first steps, which shoves the pre-activations of most first-layer ReLUs
(and many of the second layer) far negative for every input: 50-90% of the units never fire again,
the few survivors cannot carry the field interactions, the tower output is nearly constant, and
because the labels are balanced the BCE stays at ~log 2 for the rest of the run. Nothing goes
non-finite. The fix is the lower learning rate (0.05) with everything else equal."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "dnn.1"
SOURCE = "Common report: Adagrad lr copied from FTRL/LR CTR baseline kills the ReLU DNN tower of DeepFM/xDeepFM (all-zero hidden activations, constant CTR prediction)"

N_FIELDS, VOCAB, EMB, STEPS, BATCH = 12, 50, 8, 160, 256


class DeepCTR(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(N_FIELDS * VOCAB, EMB)
        nn.init.normal_(self.emb.weight, std=0.05)
        self.dnn = nn.Sequential(nn.Linear(N_FIELDS * EMB, 64), nn.ReLU(),
                                 nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
        self.register_buffer("offsets", torch.arange(N_FIELDS) * VOCAB)

    def forward(self, ids):
        ids = ids + self.offsets
        e = self.emb(ids).flatten(1)
        return self.dnn(e).squeeze(-1)


def _data(g, n):
    ids = torch.randint(0, VOCAB, (n, N_FIELDS), generator=g)
    tab = torch.randn(N_FIELDS, VOCAB, generator=g) * 0.6
    pair = torch.randn(VOCAB, VOCAB, generator=g) * 1.2
    logit = tab.gather(1, ids.t()).t().sum(1) * 0.4 + pair[ids[:, 0], ids[:, 1]] + pair[ids[:, 2], ids[:, 3]]
    logit = 2.5 * (logit - logit.median())
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return ids, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    model = DeepCTR()
    lr = 0.05 if fixed else 1.0
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    x, y = _data(g, 40 * BATCH)
    batches = [(x[(i % 40) * BATCH:(i % 40 + 1) * BATCH], y[(i % 40) * BATCH:(i % 40 + 1) * BATCH]) for i in range(STEPS)]

    def loss_fn(out, target):
        return F.binary_cross_entropy_with_logits(out, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
