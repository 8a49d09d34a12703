"""A beginner's two-hidden-layer ReLU MLP classifies synthetic colour-histogram features (all
non-negative bins in [0, 1], as histograms are) with plain SGD at an lr taken from a logistic
regression baseline. Because every input is positive, each hidden unit's weight gradient has the
same sign across the whole batch; the first big SGD steps move whole rows of the first layer to
large negative values and its ReLUs output 0 for every input. With the first layer dead, nothing
below or above gets a useful gradient, the output collapses to the class prior and the
cross-entropy sits at ~ln(k) for the rest of the run (silent stall, no NaN). Fixed: a 10-20x smaller
lr, so the units are not pushed into the dead region."""
import torch, torch.nn as nn
CAUSE = "dead_relu"
ORIGIN = "fc1"
SOURCE = "Known pattern: dying ReLU from large SGD steps (CS231n 'as much as 40% of your network can be dead' with a too-high learning rate)"

class MLP(nn.Module):
    def __init__(self, d, h, k):
        super().__init__()
        self.fc1 = nn.Linear(d, h); self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(h, h); self.relu2 = nn.ReLU()
        self.out = nn.Linear(h, k)
    def forward(self, x):
        return self.out(self.relu2(self.fc2(self.relu1(self.fc1(x)))))

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = 32; h = [64, 32, 48][seed % 3]; k = [4, 5, 6][seed % 3]
    model = MLP(d, h, k)
    protos = torch.softmax(2 * torch.randn(k, d, generator=g), 1)
    steps = [120, 150, 100][seed % 3]; bs = [32, 64, 48][seed % 3]
    batches = []
    for _ in range(steps):
        y = torch.randint(0, k, (bs,), generator=g)
        hist = protos[y] * (0.5 + torch.rand(bs, d, generator=g))
        hist = hist / hist.amax(1, keepdim=True)
        batches.append((hist, y))
    lr = [0.1, 0.05, 0.08][seed % 3] if fixed else [2.0, 1.5, 2.5][seed % 3]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
