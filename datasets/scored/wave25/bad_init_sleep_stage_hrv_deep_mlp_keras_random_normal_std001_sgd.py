"""Sleep staging from wrist-wearable HRV / actigraphy epoch features with a deep plain MLP.

Mechanism: the model was ported from a Keras/TF1 notebook whose Dense layers used
`kernel_initializer=RandomNormal(stddev=0.01)`; the port re-creates that with
`nn.init.normal_(w, 0, 0.01)` on every Linear and zero biases. There is no normalisation
layer. Each layer multiplies the activation scale by about 0.01*sqrt(fan_in/2) ~ 0.06-0.08,
so after 6-8 ReLU layers the logits are ~1e-8 of the input scale from step 0: the output is
uniform over the four stages, backprop gradients shrink by the same factor layer by layer,
and plain SGD leaves the loss stuck at ln(4).

ORIGIN: "net.0", the first Linear, where the geometric shrinking starts (every Linear is
initialised the same way; the first one is where the activation scale first drops).

Fix: Kaiming (He) normal initialisation for the ReLU stack (fan_in, gain sqrt(2)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Keras/TF1 RandomNormal(stddev=0.01) dense init ported to PyTorch for deep MLP "
          "sleep staging on wearable HRV features; vanishing activations in deep nets "
          "without normalisation (Glorot & Bengio 2010; He et al. 2015)")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [6, 7, 8][seed % 3]
    width = [96, 128, 112][seed % 3]
    lr = [0.05, 0.04, 0.06][seed % 3]
    bs = [64, 48, 96][seed % 3]
    steps = 150
    n_feat, n_cls = 24, 4
    torch.manual_seed(seed)
    layers, d = [], n_feat
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, n_cls))
    model = nn.Sequential(*layers)
    for m in model:
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)

    class SleepMLP(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x)

    net = SleepMLP(model)
    # synthetic epochs: HRV (RMSSD, LF/HF, ...) + movement features, standardised
    W = torch.randn(n_feat, n_cls, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, n_feat, generator=g)
        logits = x @ W + 0.3 * torch.randn(bs, n_cls, generator=g)
        y = logits.argmax(1)
        batches.append((x, y))
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    return dict(model=net, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
