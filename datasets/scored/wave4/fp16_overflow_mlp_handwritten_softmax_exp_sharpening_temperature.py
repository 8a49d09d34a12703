"""A small MLP classifier computes its probabilities with a hand-written softmax
(`e = torch.exp(logits / T); p = e / e.sum(1)`) and a "sharpening" temperature T, then
NLL = -log p[y]. It is trained under fp16 autocast: the logits come out of the last Linear in
float16 and the exp is evaluated in half. Early on the logits are small and everything is fine, but
as the classifier becomes confident, logits/T exceed ~11.1, exp passes 65504 -> inf, inf/inf = NaN,
and the loss becomes NaN mid-run (step ~5-70 depending on the seed's setup). Fixed: the same hand-written softmax
evaluated in float32 (`logits.float()`)."""
import torch, torch.nn as nn
CAUSE = "fp16_overflow"
ORIGIN = None  # the overflowing exp is in the hand-written softmax inside the loss
SOURCE = "Known pattern: naive exp-normalise softmax under fp16 overflowing past 65504 (PyTorch AMP docs list exp/softmax among ops that need float32)"

class Net(nn.Module):
    def __init__(self, d, h, k):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.head = nn.Linear(h, k)
    def forward(self, x):
        return self.head(self.body(x))

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d = 16; h = [64, 48, 96][seed % 3]; k = [5, 4, 6][seed % 3]; T = [0.25, 0.3, 0.2][seed % 3]
    model = Net(d, h, k)
    centers = 3 * torch.randn(k, d, generator=g)
    steps = [120, 150, 100][seed % 3]; bs = [32, 48, 64][seed % 3]
    batches = []
    for _ in range(steps):
        y = torch.randint(0, k, (bs,), generator=g)
        batches.append((centers[y] + torch.randn(bs, d, generator=g), y))
    def loss_fn(logits, y):
        if fixed: logits = logits.float()
        e = torch.exp(logits / T)
        p = e / e.sum(1, keepdim=True)
        return -torch.log(p.gather(1, y[:, None]).float() + 1e-6).mean()
    opt = torch.optim.Adam(model.parameters(), lr=[3e-3, 2e-3, 4e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
