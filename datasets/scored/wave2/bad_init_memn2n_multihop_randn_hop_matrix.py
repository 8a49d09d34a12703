"""End-to-end memory network (MemN2N, Sukhbaatar et al. 2015) for bAbI-like single-supporting-fact
QA, with K hops and the 'layer-wise' (RNN-like) weight tying in which the controller state is
updated as u_{k+1} = H u_k + o_k. The hop matrix H was created as nn.Parameter(torch.randn(d, d))
(std 1) instead of the paper's N(0, 0.1) / a near-identity init, so every hop multiplies the
controller norm by ~sqrt(d): after K hops the state, the memory-attention logits and the answer
logits are tens to hundreds of times too large from step 0. The attention softmaxes are one-hot, the answer
softmax is saturated, and with SGD+momentum the gradients through the K-fold product of H blow
the weights up within a few steps (huge loss, then inf/NaN). The fixed
run only initialises H with std 0.1 as in the paper."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "hop"
SOURCE = "Sukhbaatar et al. 2015 MemN2N (layer-wise tying, H matrix, N(0,0.1) init); reimplementations initialising H with torch.randn"


class Hop(nn.Module):
    def __init__(self, d, std):
        super().__init__()
        self.H = nn.Parameter(torch.randn(d, d) * std)

    def forward(self, u):
        return u @ self.H.t()


class MemN2N(nn.Module):
    def __init__(self, vocab, d, hops, n_slots, h_std):
        super().__init__()
        self.hops = hops
        self.A = nn.EmbeddingBag(vocab, d, mode="sum")
        self.C = nn.EmbeddingBag(vocab, d, mode="sum")
        self.B = nn.EmbeddingBag(vocab, d, mode="sum")
        self.T_A = nn.Parameter(torch.randn(n_slots, d) * 0.1)   # temporal encoding
        self.T_C = nn.Parameter(torch.randn(n_slots, d) * 0.1)
        for e in (self.A, self.B, self.C):
            nn.init.normal_(e.weight, 0, 0.1)
        self.hop = Hop(d, h_std)
        self.answer = nn.Linear(d, vocab, bias=False)
        nn.init.normal_(self.answer.weight, 0, 0.1)

    def forward(self, story, question):
        Bsz, S, L = story.shape
        m = self.A(story.reshape(Bsz * S, L)).view(Bsz, S, -1) + self.T_A[:S]
        c = self.C(story.reshape(Bsz * S, L)).view(Bsz, S, -1) + self.T_C[:S]
        u = self.B(question)
        for _ in range(self.hops):
            p = torch.softmax((m * u.unsqueeze(1)).sum(-1), -1)
            o = (p.unsqueeze(-1) * c).sum(1)
            u = self.hop(u) + o
        return self.answer(u)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_ent, n_loc = [8, 10, 6][seed % 3], [6, 5, 8][seed % 3]
    d = [32, 48, 40][seed % 3]
    hops = [3, 4, 3][seed % 3]
    S = [8, 10, 6][seed % 3]
    bs = [32, 48, 64][seed % 3]
    steps = [150, 120, 180][seed % 3]
    lr = 0.05
    vocab = n_ent + n_loc + 2            # entities, locations, "moved", "where"
    MOVED, WHERE = vocab - 2, vocab - 1
    batches = []
    for s in range(steps):
        who = torch.randint(0, n_ent, (bs, S), generator=g)
        loc = torch.randint(0, n_loc, (bs, S), generator=g) + n_ent
        story = torch.stack([who, torch.full_like(who, MOVED), loc], -1)   # "who moved loc"
        q_ent = who[torch.arange(bs), torch.randint(0, S, (bs,), generator=g)]
        question = torch.stack([torch.full_like(q_ent, WHERE), q_ent], -1)
        # answer: last location of q_ent
        match = (who == q_ent.unsqueeze(1)).float() * torch.arange(1, S + 1)
        last = match.argmax(1)
        ans = loc[torch.arange(bs), last]
        batches.append(((story, question), ans))
    model = MemN2N(vocab, d, hops, S, 0.1 if fixed else 1.0)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=lambda o, t: F.cross_entropy(o, t),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
