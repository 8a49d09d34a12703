"""A beginner implements their own `MyConv2d` layer (nn.Parameter(torch.randn(out, in, k, k)) and
F.conv2d) to "understand convolutions", and stacks four of them with ReLU in a tiny CNN for
synthetic shape images. torch.randn gives weight std 1 instead of ~sqrt(2/fan_in), so every layer
multiplies the activation scale by ~sqrt(fan_in/2) (5-8x): logits are ~1e3-1e4 at step 0, the
cross-entropy is huge, and SGD's first enormous update throws the network into a state where it
predicts one constant class distribution (loss stuck at ~ln 3, no NaN). Fixed: the
same layer with kaiming-normal init (std sqrt(2/fan_in))."""
import math, torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = "Known pattern: hand-written layers initialised with torch.randn (PyTorch forums 'loss is nan with custom conv layer'); He et al. 2015 on init variance"

class MyConv2d(nn.Module):
    def __init__(self, cin, cout, k, kaiming):
        super().__init__()
        w = torch.randn(cout, cin, k, k)
        if kaiming: w = w * math.sqrt(2.0 / (cin * k * k))
        self.weight = nn.Parameter(w); self.bias = nn.Parameter(torch.zeros(cout))
    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, padding=self.weight.shape[-1] // 2)

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [8, 12, 10][seed % 3]; depth = 4
    layers = []; cin = 1
    for i in range(depth):
        layers += [MyConv2d(cin, c, 3, fixed), nn.ReLU()]
        if i % 2 == 1: layers.append(nn.MaxPool2d(2))
        cin = c
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(*layers))
    model.add_module("pool", nn.AdaptiveAvgPool2d(1)); model.add_module("flat", nn.Flatten())
    model.add_module("fc", nn.Linear(c, 3))
    steps = [60, 100, 70][seed % 3]; bs = [16, 24, 32][seed % 3]
    yy, xx = torch.meshgrid(torch.arange(16.), torch.arange(16.), indexing="ij")
    batches = []
    for _ in range(steps):
        lab = torch.randint(0, 3, (bs,), generator=g)
        cx = 4 + 8 * torch.rand(bs, 1, 1, generator=g); cy = 4 + 8 * torch.rand(bs, 1, 1, generator=g)
        r = torch.sqrt((xx - cx) ** 2 + (yy - cy) ** 2); sq = torch.maximum((xx - cx).abs(), (yy - cy).abs())
        img = torch.where(lab.view(-1, 1, 1) == 0, (r < 3.5).float(), torch.where(lab.view(-1, 1, 1) == 1, (sq < 3).float(), ((xx - cx).abs() < 1).float()))
        img = img + 0.1 * torch.randn(bs, 16, 16, generator=g)
        batches.append((img.unsqueeze(1), lab))
    opt = torch.optim.SGD(model.parameters(), lr=[0.05, 0.04, 0.06][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
