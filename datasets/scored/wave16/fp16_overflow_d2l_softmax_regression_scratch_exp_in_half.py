"""d2l.ai softmax regression -- the concise chapter's ``nn.Linear`` combined with the scratch
chapter's hand-written ``softmax`` and ``cross_entropy`` -- run under
``torch.autocast(dtype=torch.float16)``: ``X.exp() / X.exp().sum(1)`` overflows float16 as soon
as a logit exceeds ~11.

Mechanism
---------
The chapter's ``softmax(X)`` is ``X_exp = torch.exp(X); partition = X_exp.sum(1, keepdims=True);
return X_exp / partition`` -- the text itself warns that it takes no precaution against large
arguments.  The student wanted to try mixed precision and wrapped the forward pass in CPU
autocast with float16.  ``nn.Linear`` is autocast to half, so the logits are float16 and the
hand-written exp runs in half: exp(11.1) = 65504 is the largest finite float16.  The data loader
was created with ``d2l.load_data_fashion_mnist(batch_size, resize=64)`` (left over from the
AlexNet/VGG cells), so each image has 4000-5000 pixel features and the first SGD steps (d2l's
lr~0.1) already move the logits of the clearest images past 11 while the classifier becomes
confident (in float32 the loss drops from 2.3 to ~0.4 in one or two steps; in float16 the
forward pass overflows right there).  ``exp`` then returns inf, ``inf / inf`` is NaN, and d2l's ``-log(y_hat[range(n), y])``
is NaN (or -log(0) = inf when the correct-class exp underflows).  In float32/bfloat16 the same
logits (~12..16) are harmless and the run converges.

ORIGIN
------
"softmax" -- the module holding the hand-written exp/normalise softmax, the op that produces the
first inf.

Fix
---
fixed=True runs the same code under autocast with bfloat16 (same exponent range as float32), so
exp never overflows; model, data, lr and loss are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "softmax"
SOURCE = ("d2l.ai 4.4 Softmax Regression Implementation from Scratch (naive softmax) combined "
          "with torch.autocast float16; PyTorch forum 'NaN with autocast and custom softmax'")


class ScratchSoftmax(nn.Module):
    def forward(self, X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdims=True)
        return X_exp / partition          # the broadcasting mechanism is applied here


class SoftmaxRegression(nn.Module):
    """The concise chapter's nn.Linear, combined with the scratch chapter's softmax."""
    def __init__(self, num_inputs, num_outputs, sigma=0.01):
        super().__init__()
        self.flatten = nn.Flatten()
        self.net = nn.Linear(num_inputs, num_outputs)
        nn.init.normal_(self.net.weight, std=sigma)
        nn.init.zeros_(self.net.bias)
        self.softmax = ScratchSoftmax()

    def forward(self, X):
        return self.softmax(self.net(self.flatten(X)))


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[list(range(len(y_hat))), y]).mean()


def _fashion_like(g, n_batches, bs, side, n_cls):
    base = torch.randn(n_cls, 1, side // 4, side // 4, generator=g)
    templ = nn.functional.interpolate(base, size=(side, side), mode="bilinear", align_corners=False)
    templ = (templ > 0.25).float() * 0.85
    out = []
    for _ in range(n_batches):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = templ[y] * (0.7 + 0.5 * torch.rand(bs, 1, 1, 1, generator=g))
        x = (x + 0.2 * torch.rand(bs, 1, side, side, generator=g)).clamp(0, 1)
        out.append((x, y))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(44 + seed)
    bs = [256, 128, 200][seed % 3]
    lr = [0.1, 0.12, 0.08][seed % 3]
    side = [64, 64, 72][seed % 3]          # resize=64 / 72 in the data loader
    n_cls, steps = 10, 100

    model = SoftmaxRegression(side * side, n_cls)
    batches = _fashion_like(g, steps, bs, side, n_cls)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=cross_entropy, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16)
