"""Interaction network (Battaglia et al. 2016) for n-body force prediction: an edge MLP computes a
message per ordered particle pair from the concatenated states, messages are summed per receiver and a
node MLP predicts the acceleration. The deep edge MLP is initialised with N(0, 0.01) weights, so every
ReLU layer shrinks the signal by ~10x; messages and their gradients are ~1e-6 of normal and plain SGD
barely moves: the loss stays at the variance of the targets without any NaN. Fix: Kaiming init."""
import torch, torch.nn as nn
CAUSE = "bad_init"
ORIGIN = "edge_mlp.0"
SOURCE = "Interaction Networks (Battaglia et al. 2016); 'weights_initializer=tf.random_normal_initializer(stddev=0.01)' vanishing-signal pattern"
class IN(nn.Module):
    def __init__(s, d, h, depth):
        super().__init__()
        L = [nn.Linear(d + 2, h), nn.ReLU()]
        for _ in range(depth - 1): L += [nn.Linear(h, h), nn.ReLU()]
        L += [nn.Linear(h, h)]; s.edge_mlp = nn.Sequential(*L)
        s.node_mlp = nn.Sequential(nn.Linear(2 + h, h), nn.ReLU(), nn.Linear(h, 2))
    def forward(s, x):
        B, N, d = x.shape
        xi = x[:, :, None, :].expand(B, N, N, d); xj = x[:, None, :, :].expand(B, N, N, d)
        rel = torch.cat([xj[..., :2] - xi[..., :2], xj[..., 2:], xi[..., 2:]], -1)  # translation-invariant relation
        msg = s.edge_mlp(rel).sum(2)
        return s.node_mlp(torch.cat([x[..., 2:], msg], -1))
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    N, d, h, depth = 5 + seed, 4, 32 + 8 * seed, 4 + seed
    steps, bs = 150, 32
    model = IN(d, h, depth)
    for mod in model.edge_mlp:
        if isinstance(mod, nn.Linear):
            if fixed: nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else: nn.init.normal_(mod.weight, std=0.01)
            nn.init.zeros_(mod.bias)
    batches = []
    for _ in range(steps):
        pos = torch.randn(bs, N, 2, generator=g); vel = torch.randn(bs, N, 2, generator=g) * 0.3
        diff = pos[:, None, :, :] - pos[:, :, None, :]
        r2 = (diff ** 2).sum(-1, keepdim=True) + 0.5
        acc = (diff / r2 ** 1.5).sum(2)
        batches.append((torch.cat([pos, vel], -1), acc))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
