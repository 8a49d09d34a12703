"""Deep pairwise entity-matching classifier (DeepMatcher-style "hybrid" comparison MLP).

Model: two product records are embedded (pre-computed 32-48 d attribute summaries); the pair is
represented as [|u - v|, u * v] and a deep ReLU MLP (`net`, 6-8 Linear layers) outputs a match
logit. Loss: BCEWithLogitsLoss on balanced match / non-match pairs; optimiser: SGD with momentum.

Mechanism: the model was ported from a TensorFlow 1 script whose layers used
`tf.truncated_normal(stddev=0.01)`; the port applies `nn.init.normal_(w, std=0.01)` to every
Linear layer. With fan-in 64-192 each layer multiplies the activation scale by about
0.01 * sqrt(fan_in / 2) ~ 0.06-0.1, so after 6-8 layers the logit is ~1e-7 of the input scale:
the output is the (zero) bias for every pair, the loss sits at log 2, and the backward signal
shrinks by the same factor per layer, so the early layers receive ~1e-9 gradients. Nothing
moves and the loss stays flat at its starting value.

ORIGIN: `net.0` -- the first Linear layer is where the activation scale starts to shrink; the
same init repeats the shrinkage at every later layer, so the collapse compounds with depth.

Fix: Kaiming-normal (fan-in, ReLU) init for every Linear layer; same model, optimiser, data and
steps.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("DeepMatcher (Mudgal et al. 2018) hybrid comparison MLP; TF1 -> PyTorch ports keeping "
          "truncated_normal(stddev=0.01) for every layer of a deep ReLU MLP (vanishing "
          "activations, loss stuck at log 2)")


class PairMLP(nn.Module):
    def __init__(self, d, width, depth, good_init):
        super().__init__()
        layers, fin = [], 2 * d
        for _ in range(depth - 1):
            layers += [nn.Linear(fin, width), nn.ReLU()]
            fin = width
        layers.append(nn.Linear(fin, 1))
        self.net = nn.Sequential(*layers)
        for m in self.net:
            if isinstance(m, nn.Linear):
                if good_init:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, u, v):
        return self.net(torch.cat([(u - v).abs(), u * v], dim=-1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    d = [32, 48, 40][seed % 3]
    width = [96, 64, 128][seed % 3]
    depth = [7, 6, 8][seed % 3]
    batch = [64, 96, 48][seed % 3]
    steps = [150, 130, 170][seed % 3]
    lr = [0.02, 0.03, 0.01][seed % 3]

    n_ent = 500
    ent = torch.randn(n_ent, d, generator=g)
    batches = []
    for _ in range(steps):
        a = torch.randint(0, n_ent, (batch,), generator=g)
        match = torch.rand(batch, generator=g) < 0.5
        other = torch.randint(0, n_ent, (batch,), generator=g)
        b = torch.where(match, a, other)
        u = ent[a] + 0.7 * torch.randn(batch, d, generator=g)        # two noisy records
        v = ent[b] + 0.7 * torch.randn(batch, d, generator=g)
        batches.append(((u, v), match.float()))

    model = PairMLP(d, width, depth, good_init=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
