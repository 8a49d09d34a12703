"""Deep Cross-Modal Hashing (DCMH, Jiang & Li, CVPR 2017) trained under float16 autocast.

An image network (MLP over pre-extracted CNN features) and a text network (MLP over bag-of-words
vectors) output real-valued hash codes F and G of length c.  The loss is DCMH's negative
log-likelihood of the cross-modal similarity matrix plus the quantisation and bit-balance terms:
    Theta = 0.5 * F G^T
    L = -sum(S * Theta - log(1 + exp(Theta))) + gamma ||B - F||^2 + gamma ||B - G||^2
        + eta (||F^T 1||^2 + ||G^T 1||^2),      B = sign(F + G)
with the likelihood term written exactly as in the official code, ``torch.log(1 + torch.exp(theta))``.

Mechanism: the run uses ``torch.autocast(dtype=torch.float16)`` to speed up training.  The code
product Theta comes out of a matmul in float16 and ``torch.exp`` stays in float16.  As training
succeeds, the codes of similar image/text pairs align and approach +-1 on all c bits, so Theta for
those pairs grows towards c/2 = 16..24.  exp(Theta) exceeds the float16 maximum 65504 as soon as
Theta > ~11.1: exp returns inf, log(1 + inf) = inf and the loss becomes inf/NaN mid-run, after a
perfectly healthy start.

ORIGIN: None -- the overflowing exp lives in the loss computation, not in a module of the model.

Fix: autocast in bfloat16 (float32 exponent range) instead of float16; nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("DCMH official PyTorch code (jiangqy/DCMH-CVPR2017) NLL term "
          "torch.log(1.0 + torch.exp(theta)); NaN/inf reports when training it in half precision")


class DCMH(nn.Module):
    def __init__(self, img_dim, txt_dim, hidden, bits):
        super().__init__()
        self.img_net = nn.Sequential(nn.Linear(img_dim, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, bits))
        self.txt_net = nn.Sequential(nn.Linear(txt_dim, hidden), nn.ReLU(), nn.Linear(hidden, bits))

    def forward(self, img, txt):
        return self.img_net(img), self.txt_net(txt)


def make_loss(gamma, eta):
    def dcmh_loss(out, labels):
        F_, G_ = out
        S = (labels @ labels.t() > 0).to(F_.dtype)
        theta = 0.5 * F_ @ G_.t()
        nll = -torch.sum(S * theta - torch.log(1.0 + torch.exp(theta)))
        B = torch.sign(F_ + G_).detach()
        quant = gamma * (((B - F_) ** 2).sum() + ((B - G_) ** 2).sum())
        balance = eta * ((F_.sum(0) ** 2).sum() + (G_.sum(0) ** 2).sum())
        n = F_.shape[0]
        return (nll + quant + balance) / (n * n)
    return dcmh_loss


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(bits=32, hidden=128, lr=3e-3, bs=32, steps=100),
           dict(bits=48, hidden=192, lr=2e-3, bs=24, steps=90),
           dict(bits=40, hidden=96, lr=6e-3, bs=40, steps=110)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4400 + seed)
    n_lab, img_dim, txt_dim = 6, 64, 120
    img_proto = torch.randn(n_lab, img_dim, generator=g)
    word_prob = torch.rand(n_lab, txt_dim, generator=g) ** 4        # label-specific vocabulary

    model = DCMH(img_dim, txt_dim, cfg["hidden"], cfg["bits"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = make_loss(gamma=1.0, eta=1.0)

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        labels = torch.zeros(bs, n_lab)
        labels[torch.arange(bs), torch.randint(0, n_lab, (bs,), generator=g)] = 1.0
        extra = torch.rand(bs, generator=g) < 0.3
        labels[extra, torch.randint(0, n_lab, (int(extra.sum()),), generator=g)] = 1.0
        img = labels @ img_proto + 0.5 * torch.randn(bs, img_dim, generator=g)
        p = (labels @ word_prob).clamp(max=1.0)
        txt = (torch.rand(bs, txt_dim, generator=g) < p).float()
        batches.append(((img, txt), labels))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"],
                amp_dtype=torch.bfloat16 if fixed else torch.float16)
