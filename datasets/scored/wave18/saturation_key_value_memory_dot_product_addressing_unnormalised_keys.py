"""Key-value memory read head (NTM / KV-MemNN style content addressing) for
associative recall: each example carries a memory of N (key, value) slots and a
noisy cue of one of the keys; a controller maps the cue to a read key, the head
addresses memory with softmax over key similarities and returns the weighted
sum of values, which is the prediction (MSE against the cued slot's value).

Mechanism: the user implemented content addressing as a raw dot product
softmax(k . K_j) instead of the NTM's cosine similarity with a key strength
beta.  The memory keys are un-normalised feature vectors (raw summed
embeddings, norm ~100-200), so the similarity logits have a spread of hundreds:
the softmax is one-hot on whichever slot happens to have the largest dot
product (usually the wrong one), its Jacobian is ~0, and no gradient reaches
the controller (SGD has no per-parameter rescaling that could amplify the
vanishing gradient).  The read returns a
random slot's value; the loss sits at ~2 x var(value) and does not move.

ORIGIN: ``read_head.softmax`` -- the addressing softmax is the unit that
saturates.

Fix: NTM-style addressing: cosine similarity between the read key and the
memory keys, sharpened by a learned key strength beta = softplus(.) (init ~5);
same data, controller, optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "read_head.softmax"
SOURCE = ("Graves et al. 2014 'Neural Turing Machines' content addressing (cosine + key "
          "strength); Miller et al. 2016 'Key-Value Memory Networks'; dot-product addressing "
          "over un-normalised memory -> one-hot attention, no gradient to the controller")


class ReadHead(nn.Module):
    def __init__(self, cosine):
        super().__init__()
        self.cosine = cosine
        self.beta_raw = nn.Parameter(torch.tensor(5.0)) if cosine else None
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, k, keys, values):         # k (B, dk), keys (B, N, dk), values (B, N, dv)
        if self.cosine:
            sim = F.cosine_similarity(k.unsqueeze(1), keys, dim=-1, eps=1e-8)
            logits = F.softplus(self.beta_raw) * sim
        else:
            logits = (k.unsqueeze(1) * keys).sum(-1)      # raw dot product
        w = self.softmax(logits)
        return (w.unsqueeze(-1) * values).sum(1)


class AssociativeRecall(nn.Module):
    def __init__(self, dk, hidden, cosine):
        super().__init__()
        self.controller = nn.Sequential(nn.Linear(dk, hidden), nn.Tanh(), nn.Linear(hidden, dk))
        self.read_head = ReadHead(cosine)

    def forward(self, cue, keys, values):
        return self.read_head(self.controller(cue), keys, values)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(dk=32, dv=16, n_slots=16, hidden=64, key_scale=25.0, bsz=64, lr=0.2, steps=150),
        dict(dk=48, dv=24, n_slots=24, hidden=96, key_scale=20.0, bsz=48, lr=0.3, steps=170),
        dict(dk=24, dv=12, n_slots=12, hidden=48, key_scale=40.0, bsz=96, lr=0.2, steps=140),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(123 + seed)
    model = AssociativeRecall(cfg["dk"], cfg["hidden"], cosine=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    # a fixed random "scrambling" between cue space and key space the controller must undo
    mix = torch.linalg.qr(torch.randn(cfg["dk"], cfg["dk"], generator=g))[0]
    batches = []
    B, N = cfg["bsz"], cfg["n_slots"]
    for _ in range(cfg["steps"]):
        keys = cfg["key_scale"] * torch.randn(B, N, cfg["dk"], generator=g)
        values = torch.randn(B, N, cfg["dv"], generator=g)
        idx = torch.randint(0, N, (B,), generator=g)
        target_key = keys[torch.arange(B), idx]
        cue = (target_key + 0.3 * cfg["key_scale"] * torch.randn(B, cfg["dk"], generator=g)) @ mix
        cue = cue / cfg["key_scale"]
        batches.append(((cue, keys, values), values[torch.arange(B), idx]))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
