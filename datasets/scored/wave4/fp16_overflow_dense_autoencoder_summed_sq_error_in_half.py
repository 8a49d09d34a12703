"""A beginner turns on fp16 autocast for a dense denoising autoencoder on flattened 16x16
synthetic images and writes the loss by hand as the total squared error over the batch
(`((out - y) ** 2).sum()`, "like the equations in the book"). Under autocast the decoder output is
float16 and the cached targets are float16 too, so the squared-error sum over tens of thousands of pixels is accumulated in half: it
passes 65504 and the loss is inf from the very first step; its backward fills every gradient with
inf/NaN. Fixed: the same loss computed in float32 (`out.float()`), i.e. fp32 for the reduction
(the fp16-cached targets are unchanged)."""
import torch, torch.nn as nn
CAUSE = "fp16_overflow"
ORIGIN = None  # born in the hand-written loss reduction, not in a module
SOURCE = "Known pattern: sum-reduced losses under fp16 autocast overflowing 65504 (PyTorch AMP docs: reductions such as sum should run in float32)"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    D = 256; h = [32, 16, 24][seed % 3]; z = [16, 8, 12][seed % 3]
    model = nn.Sequential()
    model.add_module("enc", nn.Sequential(nn.Linear(D, h), nn.ReLU(), nn.Linear(h, z), nn.ReLU()))
    model.add_module("dec", nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, D)))
    steps = [60, 80, 50][seed % 3]; bs = [384, 320, 448][seed % 3]
    basis = torch.randn(10, D, generator=g)
    batches = []
    for _ in range(steps):
        clean = torch.randn(bs, 10, generator=g) @ basis / 3.0
        noisy = clean + 0.3 * torch.randn(bs, D, generator=g)
        batches.append((noisy, clean.half()))  # targets cached in fp16 to save memory
    def loss_fn(out, y):
        if fixed: out = out.float()
        return ((out - y) ** 2).sum() / 1000.0
    opt = torch.optim.Adam(model.parameters(), lr=[1e-3, 2e-3, 1.5e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
