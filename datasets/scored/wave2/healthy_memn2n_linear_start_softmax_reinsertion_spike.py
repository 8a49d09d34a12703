"""End-to-end memory network (MemN2N) trained with the paper's 'linear start' (LS) schedule: for
the first part of training the memory-attention softmaxes are removed (the hop uses the raw
match scores m_i . u as weights), then the softmaxes are re-inserted. The switch is carried by a
flag in each batch, as a training script toggling it from its step counter would. When the
softmax comes back, the read-outs o_k change abruptly (sums of raw scores become convex
averages) and the loss jumps up for a few dozen steps, looking like a divergence, before the
model adapts and goes below its pre-switch level. Nothing is wrong: this is the intended
curriculum, and the run converges."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Sukhbaatar et al. 2015 'End-To-End Memory Networks', section 4.2 linear start training (softmax removed, re-inserted later)"


class MemN2N(nn.Module):
    def __init__(self, vocab, d, hops, n_slots):
        super().__init__()
        self.hops = hops
        self.A = nn.EmbeddingBag(vocab, d, mode="sum")
        self.C = nn.EmbeddingBag(vocab, d, mode="sum")
        self.B = nn.EmbeddingBag(vocab, d, mode="sum")
        self.T_A = nn.Parameter(torch.randn(n_slots, d) * 0.1)
        self.T_C = nn.Parameter(torch.randn(n_slots, d) * 0.1)
        for e in (self.A, self.B, self.C):
            nn.init.normal_(e.weight, 0, 0.1)
        self.answer = nn.Linear(d, vocab, bias=False)
        nn.init.normal_(self.answer.weight, 0, 0.1)

    def forward(self, story, question, use_softmax):
        Bsz, S, L = story.shape
        m = self.A(story.reshape(Bsz * S, L)).view(Bsz, S, -1) + self.T_A[:S]
        c = self.C(story.reshape(Bsz * S, L)).view(Bsz, S, -1) + self.T_C[:S]
        u = self.B(question)
        for _ in range(self.hops):
            scores = (m * u.unsqueeze(1)).sum(-1)
            p = torch.softmax(scores, -1) if bool(use_softmax) else scores
            u = u + (p.unsqueeze(-1) * c).sum(1)
        return self.answer(u)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_ent, n_loc = [8, 9, 7][seed % 3], [6, 6, 7][seed % 3]
    d = [32, 24, 28][seed % 3]
    hops = 2
    S = 6
    bs = 32
    steps = [220, 260, 200][seed % 3]
    switch = [80, 70, 90][seed % 3]
    lr = 0.01
    vocab = n_ent + n_loc + 2
    MOVED, WHERE = vocab - 2, vocab - 1
    batches = []
    for s in range(steps):
        who = torch.randint(0, n_ent, (bs, S), generator=g)
        loc = torch.randint(0, n_loc, (bs, S), generator=g) + n_ent
        story = torch.stack([who, torch.full_like(who, MOVED), loc], -1)
        q_ent = who[torch.arange(bs), torch.randint(0, S, (bs,), generator=g)]
        question = torch.stack([torch.full_like(q_ent, WHERE), q_ent], -1)
        last = ((who == q_ent.unsqueeze(1)).float() * torch.arange(1, S + 1)).argmax(1)
        ans = loc[torch.arange(bs), last]
        batches.append(((story, question, torch.tensor(s >= switch)), ans))
    model = MemN2N(vocab, d, hops, S)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, t: F.cross_entropy(o, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
