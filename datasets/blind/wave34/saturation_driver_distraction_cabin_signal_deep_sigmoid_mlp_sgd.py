"""Driver-distraction classifier (attentive / visually distracted / manually distracted) from
per-window cabin and vehicle signals (gaze-off-road ratio, glance duration stats, head-yaw
variance, steering reversal rate, lane-position SD, throttle jitter, phone-detector score,
hands-on-wheel capacitance), a deep fully connected net with sigmoid hidden units, cross-entropy,
SGD with momentum.

Mechanism: the model keeps the "logistic units everywhere" design of the original (shallow)
prototype but is now 6-9 layers deep.  Every sigmoid passes back at most 0.25 of the gradient
(its derivative is at its maximum only at 0 and falls off on both flat sides), and since the
sigmoid outputs are all positive (~0.5) the deeper layers see nearly the same input for every
window: the representation collapses to a near-constant vector, the gradient that reaches the
lower layers vanishes geometrically and the loss stays at the class-prior cross-entropy for
the whole run (no inf/NaN - a stall).

ORIGIN: ``mlp.1`` - the first Sigmoid; the gradient of the first Linear must pass through every
sigmoid from here up, and the representation collapses from this layer on.

Fix: a non-saturating activation (ReLU) in the hidden layers with Kaiming init; same depth,
width, optimiser, lr, data, steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "mlp.1"
SOURCE = ("Known pattern: vanishing gradients through deep stacks of logistic units (Glorot & "
          "Bengio 2010, 'Understanding the difficulty of training deep feedforward networks'); "
          "driver-distraction detection from gaze and vehicle signals (e.g. SHRP2-style features)")


class DistractionNet(nn.Module):
    def __init__(self, n_in, width, depth, act):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), act()]
            d = width
        self.mlp = nn.Sequential(*layers)
        self.cls = nn.Linear(d, 3)

    def forward(self, x):
        return self.cls(self.mlp(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [7, 9, 8][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    bs = [64, 96, 48][seed % 3]
    steps = 200
    n_in = 8
    model = DistractionNet(n_in, width, depth, nn.ReLU if fixed else nn.Sigmoid)
    if fixed:
        for m in model.mlp:
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)

    centres = torch.randn(3, n_in, generator=g) * 1.0
    batches = []
    for _ in range(steps):
        y = torch.randint(0, 3, (bs,), generator=g)
        x = centres[y] + 0.9 * torch.randn(bs, n_in, generator=g)
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
