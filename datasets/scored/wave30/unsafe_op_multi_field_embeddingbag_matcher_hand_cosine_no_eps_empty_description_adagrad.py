"""Multi-field entity matcher: per-attribute bag-of-tokens embeddings compared by cosine.

Model: each record has F text fields (title, brand, model number, category, description). Every
field is embedded as a sum of token embeddings (`bags`, nn.EmbeddingBag with padding_idx=0, so
padded positions do not count). For a candidate pair the model computes one cosine similarity
per field, written by hand as (a . b) / (|a| |b|), and a Linear `combine` turns the F cosines
into a match logit. Loss: BCEWithLogitsLoss; optimiser Adagrad.

Mechanism: some vendors leave a field empty (no description, no category). An empty field is a
bag of padding only, so its embedding is exactly the zero vector; the hand-written cosine then
computes 0 / 0 = NaN for that field. The run is calm until the first batch that contains such a
record (a different step per seed); the NaN goes through `combine` into the logit and the loss
is NaN.

ORIGIN: None -- the unsafe division is a functional op in the model's forward between `bags`
and `combine`, not a module; `bags` is healthy (a zero vector is the right embedding of an empty
field) and `combine` only receives the NaN.

Fix: guard the denominator -- divide by (|a| |b|).clamp_min(1e-8) (what F.cosine_similarity's
eps does), so an empty field gives cosine 0. Same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Hand-written cosine similarity without eps in entity-matching code; PyTorch forum "
          "'NaN loss with cosine similarity when an input is all zeros' and EmbeddingBag "
          "returning zeros for empty bags (documented behaviour)")


class FieldMatcher(nn.Module):
    def __init__(self, vocab, d, n_fields, safe):
        super().__init__()
        self.bags = nn.EmbeddingBag(vocab, d, mode="sum", padding_idx=0)
        self.combine = nn.Linear(n_fields, 1)
        self.safe = safe

    def forward(self, a, b):
        # a, b: B x F x L token ids (0 = padding)
        B, F, L = a.shape
        ea = self.bags(a.reshape(B * F, L)).view(B, F, -1)
        eb = self.bags(b.reshape(B * F, L)).view(B, F, -1)
        denom = ea.norm(dim=-1) * eb.norm(dim=-1)
        if self.safe:
            denom = denom.clamp_min(1e-8)
        cos = (ea * eb).sum(-1) / denom
        return self.combine(cos).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    vocab = 800
    n_fields = [5, 4, 6][seed % 3]
    L = [6, 8, 5][seed % 3]
    d = [32, 48, 24][seed % 3]
    batch = [64, 48, 80][seed % 3]
    steps = [120, 140, 100][seed % 3]
    lr = [0.1, 0.05, 0.2][seed % 3]
    first_vendor_step = [35, 62, 48][seed % 3]   # first batch from a vendor without descriptions

    n_ent = 400
    ent = torch.randint(1, vocab, (n_ent, n_fields, L), generator=g)

    def record(ids, n_empty=0):
        t = ent[ids].clone()
        noise = torch.rand(t.shape, generator=g) < 0.35
        t[noise] = torch.randint(1, vocab, (int(noise.sum()),), generator=g)
        drop = torch.rand(t.shape, generator=g) < 0.2
        t[drop] = 0                                               # shorter fields
        t[:, :, 0] = torch.where(t[:, :, 0] == 0, ent[ids][:, :, 0], t[:, :, 0])
        if n_empty:
            rows = torch.randperm(t.shape[0], generator=g)[:n_empty]
            t[rows, -1] = 0                                       # empty description field
        return t

    batches = []
    for step in range(steps):
        a = torch.randint(0, n_ent, (batch,), generator=g)
        match = torch.rand(batch, generator=g) < 0.5
        b = torch.where(match, a, torch.randint(0, n_ent, (batch,), generator=g))
        n_empty = 3 if step >= first_vendor_step and step % 4 == first_vendor_step % 4 else 0
        batches.append(((record(a), record(b, n_empty)), match.float()))

    model = FieldMatcher(vocab, d, n_fields, safe=fixed)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
