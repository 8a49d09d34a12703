"""Network-in-Network (Lin et al. 2013) written as in course notebooks (d2l "nin_block"): every mlpconv
block ends in ReLU, including the last one whose channels are the class maps fed to global average
pooling. Here it is used for multi-label tagging with one-vs-rest BCE: each class is absent from most
images, so early updates push every class map down; once a map is negative at every position for every
image its ReLU outputs 0, the logit is 0 (p=0.5) and no gradient comes back. All class maps die within the
first steps and the loss sits at ln 2 for the rest of the run.
fixed=True: the activation on the class maps (last one of the last block) is LeakyReLU(0.1); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "net.3.5"
SOURCE = ("d2l.ai 'Network in Network (NiN)' nin_block (ReLU after the class-map 1x1 conv before global "
          "average pooling) reused for multi-label BCE; forum threads on GAP heads whose ReLU'd class maps "
          "give all-zero logits and a loss stuck at 0.693; Lin et al. 2013")


def nin_block(c_in, c_out, k, s, p, last_act=None):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, k, s, p), nn.ReLU(),
        nn.Conv2d(c_out, c_out, 1), nn.ReLU(),
        nn.Conv2d(c_out, c_out, 1), last_act if last_act is not None else nn.ReLU())


class NiN(nn.Module):
    def __init__(self, n_cls, fixed):
        super().__init__()
        self.net = nn.Sequential(
            nin_block(3, 32, 5, 1, 2), nn.MaxPool2d(3, 2, 1),
            nn.Dropout(0.3),
            nin_block(32, n_cls, 3, 1, 1, last_act=nn.LeakyReLU(0.1) if fixed else None),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        for m in self.modules():                     # d2l train_ch6: xavier_uniform_ on every conv
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n_cls, H, bs, steps = 8, 12, 32, 150
    colour = torch.randn(n_cls, 3, generator=g)
    colour = colour / colour.norm(dim=1, keepdim=True) * 2
    yy, xx = torch.meshgrid(torch.arange(H).float(), torch.arange(H).float(), indexing="ij")

    def sample(n):
        # each image holds 1-2 coloured 4x4 "objects" at random places; target is multi-hot
        x = 0.3 * torch.randn(n, 3, H, H, generator=g)
        y = torch.zeros(n, n_cls)
        for i in range(n):
            k = int(torch.randint(1, 3, (1,), generator=g))
            for c in torch.randperm(n_cls, generator=g)[:k].tolist():
                r, q = torch.randint(0, H - 4, (2,), generator=g).tolist()
                x[i, :, r:r + 4, q:q + 4] += colour[c].view(3, 1, 1)
                y[i, c] = 1
        return x, y

    batches = [sample(bs) for _ in range(steps)]
    model = NiN(n_cls, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
