"""Matrix-factorisation rating model (user and item nn.Embedding(sparse=True) factors plus sparse
user/item bias embeddings and a global mean, MSE on 1-5 star ratings) trained with
torch.optim.SparseAdam. Every gradient is a sparse COO tensor touching only the rows in the batch,
most embedding rows get no update at all on a given step, the per-row update magnitudes vary
wildly between popular and cold items and the dense-gradient norm is undefined: all of this looks
alarming to tooling that expects dense gradients, but it is the intended way to train large
embedding tables and the loss falls steadily."""
import torch, torch.nn as nn
CAUSE = "healthy"
ORIGIN = None
SOURCE = "torch.optim.SparseAdam + nn.Embedding(sparse=True) recipes for MovieLens MF"

class MF(nn.Module):
    def __init__(self, nu, ni, k, mu):
        super().__init__()
        self.user = nn.Embedding(nu, k, sparse=True); self.item = nn.Embedding(ni, k, sparse=True)
        self.user_bias = nn.Embedding(nu, 1, sparse=True); self.item_bias = nn.Embedding(ni, 1, sparse=True)
        for e in (self.user, self.item): nn.init.normal_(e.weight, std=0.1)
        for e in (self.user_bias, self.item_bias): nn.init.zeros_(e.weight)
        self.mu = mu
    def forward(self, u, i):
        return self.mu + (self.user(u) * self.item(i)).sum(-1) + self.user_bias(u).squeeze(-1) + self.item_bias(i).squeeze(-1)

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    nu, ni = [300, 200, 400][seed % 3], [200, 300, 150][seed % 3]; k = [8, 16, 12][seed % 3]
    steps = [200, 150, 250][seed % 3]; bs = [256, 512, 256][seed % 3]
    U = torch.randn(nu, 4, generator=g); I = torch.randn(ni, 4, generator=g)
    ib = 0.8 * torch.randn(ni, generator=g); ub = 0.5 * torch.randn(nu, generator=g)
    pop = torch.distributions.Categorical(probs=torch.softmax(1.5 * torch.randn(ni, generator=g), 0))
    def make():
        u = torch.randint(0, nu, (bs,), generator=g)
        i = torch.multinomial(pop.probs, bs, replacement=True, generator=g)
        r = 3.5 + ub[u] + ib[i] + 0.5 * (U[u] * I[i]).sum(-1) + 0.3 * torch.randn(bs, generator=g)
        return (u, i), r.clamp(1, 5)
    batches = [make() for _ in range(steps)]
    model = MF(nu, ni, k, 3.5)
    opt = torch.optim.SparseAdam(list(model.parameters()), lr=2e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
