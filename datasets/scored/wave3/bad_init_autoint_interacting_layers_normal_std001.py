"""AutoInt CTR model: field embeddings go through a stack of multi-head self-attention 'interacting
layers' (Q/K/V projections plus a residual projection W_res, ReLU on the sum), then a linear logit.
The interacting layers' projection matrices were initialised with normal(std=0.01), the
random_normal_initializer(stddev=0.01) of many TF1 CTR code bases, instead of Xavier.  Each layer
multiplies the activation scale by ~0.01*sqrt(d) (~0.04), so after the stack the features reaching the
output layer are ~1e-4 or smaller from step 0: the logit is just the bias, the gradients to every
layer below vanish geometrically and SGD sits at the label-entropy plateau (a silent stall, all
finite).  Fixed: xavier_uniform_ for the interacting layers."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "interacting.0"
SOURCE = "AutoInt (Song et al. 2019) ports with TF1 random_normal_initializer(stddev=0.01) for the attention weights"


class InteractingLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.w_q = nn.Linear(d, d, bias=False)
        self.w_k = nn.Linear(d, d, bias=False)
        self.w_v = nn.Linear(d, d, bias=False)
        self.w_res = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, f, d = x.shape
        sh = lambda t: t.view(b, f, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = sh(self.w_q(x)), sh(self.w_k(x)), sh(self.w_v(x))
        a = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        o = (a @ v).transpose(1, 2).reshape(b, f, d)
        return F.relu(o + self.w_res(x))


class AutoInt(nn.Module):
    def __init__(self, cards, d, depth, heads, good_init):
        super().__init__()
        self.cards = cards
        self.embedding = nn.Embedding(sum(cards), d)
        nn.init.normal_(self.embedding.weight, std=0.1)
        self.interacting = nn.ModuleList([InteractingLayer(d, heads) for _ in range(depth)])
        for layer in self.interacting:
            for lin in (layer.w_q, layer.w_k, layer.w_v, layer.w_res):
                nn.init.xavier_uniform_(lin.weight) if good_init else nn.init.normal_(lin.weight, std=0.01)
        self.out = nn.Linear(d * len(cards), 1)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))

    def forward(self, fields):
        x = self.embedding(fields + self.offsets)
        for layer in self.interacting:
            x = layer(x)
        return self.out(x.flatten(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d, depth, heads, bs, steps = [(16, 3, 2, 128, 120), (24, 2, 2, 96, 150), (16, 4, 4, 128, 100)][seed % 3]
    cards = [10, 20, 8, 15, 30, 12]
    model = AutoInt(cards, d, depth, heads, good_init=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tabs = [torch.randn(c, generator=g) for c in cards]
    batches = []
    for _ in range(steps):
        f = torch.stack([torch.randint(0, c, (bs,), generator=g) for c in cards], 1)
        z = sum(tabs[i][f[:, i]] for i in range(len(cards))) + 1.5 * tabs[0][f[:, 0]] * tabs[1][f[:, 1]]
        y = (torch.rand(bs, generator=g) < torch.sigmoid(z)).float()
        batches.append((f, y))
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.binary_cross_entropy_with_logits(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
