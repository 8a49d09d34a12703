"""Radar object-list classifier (car / truck / pedestrian / cyclist / clutter) from per-object
radar features (RCS, range, range-rate, azimuth spread, micro-Doppler moments), a deep ReLU MLP.

Mechanism: the team ported a TF1 recipe and re-initialised every Linear with
``nn.init.normal_(w, 0.0, 1.0)`` (tf.random_normal default stddev=1.0) and zero biases.  For a
ReLU stack of width W the activation scale is multiplied by about sqrt(W/2) per layer, so after
6-9 layers the logits are ~1e5-1e8 from step 0.  Cross-entropy on such logits is enormous, the
first SGD step is gigantic and the loss turns non-finite within a few steps.

ORIGIN: ``net.0`` - the first Linear is where the geometric growth starts (every subsequent layer
amplifies it by the same factor); no later layer is more "the" start than the first one.

Fix: Kaiming-normal (fan_in, relu) init for the hidden layers (the PyTorch default style for ReLU
nets); everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Known pattern: porting TF1 code with tf.random_normal(stddev=1.0) weight init into a deep "
          "ReLU MLP (He et al. 2015 analysis of activation variance growing by fan_in*var/2 per layer); "
          "radar object-list classification as in RadarScenes-style object classifiers")


class RadarObjectMLP(nn.Module):
    def __init__(self, n_feat, width, depth, n_cls):
        super().__init__()
        layers, d = [], n_feat
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers += [nn.Linear(d, n_cls)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [6, 8, 7][seed % 3]
    width = [96, 128, 112][seed % 3]
    lr = [0.02, 0.01, 0.015][seed % 3]
    bs = [64, 96, 128][seed % 3]
    steps = 120
    n_feat, n_cls = 12, 5

    model = RadarObjectMLP(n_feat, width, depth, n_cls)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)

    # class prototypes in standardised radar feature space
    protos = torch.randn(n_cls, n_feat, generator=g) * 1.2
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = protos[y] + 0.8 * torch.randn(bs, n_feat, generator=g)
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
