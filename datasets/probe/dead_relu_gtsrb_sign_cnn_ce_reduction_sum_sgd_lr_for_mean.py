"""Traffic-sign classifier (GTSRB-style BN-free conv-relu-pool CNN + FC head), SGD.

Mechanism: the recipe's SGD lr (tuned for the batch-mean cross-entropy) is kept, but the loss is
nn.CrossEntropyLoss(reduction="sum") (copied from an evaluation loop that sums per-sample
losses). The gradient is batch_size times larger, so the SGD+momentum steps are tens of times too big; the loss jumps
to hundreds, and within ~20 steps the overshooting updates throw the second conv's filters/biases
into the negative region: every unit of its ReLU stops firing for every input (it is the first
layer found fully dead; the FC ReLU follows). From then on only the output bias learns: the
logits are constant, the loss flattens at the class-prior level (after the jump).
ORIGIN: features.4, the ReLU of the second conv, the first to be completely dead.
Fix: reduction="mean" (same lr).
"""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = "GTSRB PyTorch tutorials (small BN-free CNN, SGD); 'loss stuck, all ReLU outputs zero' reports after CrossEntropyLoss(reduction='sum') with a mean-tuned lr"


class SignCNN(nn.Module):
    def __init__(self, w, hid, ncls):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * w * 16, hid), nn.ReLU(inplace=True),
                                        nn.Linear(hid, ncls))

    def forward(self, x):
        return self.classifier(self.features(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, hid, bs, lr, steps = [(12, 64, 32, 0.01, 80), (16, 48, 48, 0.01, 70), (8, 96, 24, 0.012, 90)][seed % 3]
    ncls, S = 6, 16
    templ = torch.rand(ncls, 3, S, S, generator=g)
    mean = torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1)
    model = SignCNN(w, hid, ncls)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss(reduction="mean" if fixed else "sum")
    batches = []
    for _ in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        img = (0.6 * templ[y] + 0.4 * torch.rand(bs, 3, S, S, generator=g)).clamp(0, 1)
        batches.append(((img - mean) / 0.25, y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
