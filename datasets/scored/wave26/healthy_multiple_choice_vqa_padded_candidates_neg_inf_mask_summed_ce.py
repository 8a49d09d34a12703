"""Multiple-choice VQA (Visual7W / VQA-MC style): every question comes with a variable number of
candidate answers (2-6, padded to 6).  The model fuses the image feature, the question GRU state and
each candidate's answer embedding into one score per candidate; padded candidate slots are filled
with -inf before the cross-entropy over candidates, which is summed over the batch
(reduction="sum"); Adam.

Why it looks alarming but is healthy: the model output contains -inf in every row with fewer than 6
candidates, and the loss is a batch *sum* (tens of nats at the start).  Neither is a fault: the
target index always points at a real candidate, each row has at least two finite logits, so
log-softmax over the row is finite at the target; masked_fill passes exactly zero gradient to the
padded slots and softmax gives them probability 0.  The -inf never reaches the loss value or a
gradient, and Adam is invariant to the sum-vs-mean scale.  The loss falls steadily.

ORIGIN: None -- healthy run.

Fix: none needed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Zhu et al. 2016 'Visual7W' multiple-choice QA and Jabri et al. 2016 'Revisiting Visual "
          "Question Answering Baselines' (score each (image, question, answer) triplet, softmax over "
          "candidates); masked_fill(-inf) padding of variable-size candidate sets")


class MCVQA(nn.Module):
    def __init__(self, d_img, vocab, n_answers, h):
        super().__init__()
        self.q_emb = nn.Embedding(vocab, 32)
        self.gru = nn.GRU(32, h, batch_first=True)
        self.a_emb = nn.Embedding(n_answers, h)
        self.img = nn.Linear(d_img, h)
        self.score = nn.Sequential(nn.Linear(3 * h, h), nn.ReLU(), nn.Linear(h, 1))

    def forward(self, img, q, cands, cand_mask):
        _, hq = self.gru(self.q_emb(q))
        C = cands.shape[1]
        ctx = torch.cat([torch.relu(self.img(img)), hq[-1]], -1)[:, None, :].expand(-1, C, -1)
        s = self.score(torch.cat([ctx, self.a_emb(cands)], -1)).squeeze(-1)      # (B, C)
        return s.masked_fill(~cand_mask, float("-inf"))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [64, 96, 48][seed % 3]
    bs = [32, 48, 64][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    C, d_img, vocab, n_attr, n_val, steps = 6, 32, 16, 3, 6, 200
    n_answers = n_attr * n_val
    val_vec = torch.randn(n_attr, n_val, d_img, generator=g)
    batches = []
    for _ in range(steps):
        vals = torch.randint(0, n_val, (bs, n_attr), generator=g)
        img = sum(val_vec[a][vals[:, a]] for a in range(n_attr)) + 0.5 * torch.randn(bs, d_img, generator=g)
        attr = torch.randint(0, n_attr, (bs,), generator=g)
        q = torch.randint(n_attr, vocab, (bs, 5), generator=g)
        q[:, 1] = attr
        correct = attr * n_val + vals[torch.arange(bs), attr]
        n_c = torch.randint(2, C + 1, (bs,), generator=g)
        cands = torch.randint(0, n_answers, (bs, C), generator=g)
        cands = torch.where(cands == correct[:, None], (cands + 1) % n_answers, cands)
        pos = (torch.rand(bs, generator=g) * n_c).long()
        cands[torch.arange(bs), pos] = correct
        mask = torch.arange(C)[None, :] < n_c[:, None]
        cands = torch.where(mask, cands, torch.zeros_like(cands))               # pad id 0
        batches.append(((img, q, cands, mask), pos))
    torch.manual_seed(seed)
    model = MCVQA(d_img, vocab, n_answers, h)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = lambda logits, y: F.cross_entropy(logits, y, reduction="sum")
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
