"""A tutorial dense autoencoder for anomaly detection on multichannel sensor snapshots is fed the
raw 12-bit ADC counts (values ~500-3500) as both input and reconstruction target, because "the
network will learn the scale". The first Linear layer sees inputs thousands of times larger than
it was initialised for, the MSE is ~1e6-1e7 from step 0 and its gradients are enormous; SGD
(momentum) overshoots on the first steps and the run blows up to inf/NaN. Fixed: inputs and targets
standardised per channel (counts - 2048) / 1024, everything else identical."""
import torch, torch.nn as nn
CAUSE = "unscaled_inputs"
ORIGIN = "encoder.0"
SOURCE = "Known pattern: raw ADC counts / unnormalised sensor values fed to an MLP autoencoder (Keras/PyTorch anomaly-detection tutorials that skip StandardScaler)"

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    C = [24, 32, 16][seed % 3]; h = [16, 24, 12][seed % 3]; z = [4, 6, 3][seed % 3]
    model = nn.Sequential()
    model.add_module("encoder", nn.Sequential(nn.Linear(C, h), nn.ReLU(), nn.Linear(h, z)))
    model.add_module("decoder", nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, C)))
    mix = torch.randn(z, C, generator=g)
    steps = [150, 120, 180][seed % 3]; bs = [32, 64, 16][seed % 3]
    batches = []
    for _ in range(steps):
        lat = torch.randn(bs, z, generator=g)
        counts = (2048 + 400 * (lat @ mix) + 20 * torch.randn(bs, C, generator=g)).round().clamp(0, 4095)
        x = (counts - 2048) / 1024 if fixed else counts
        batches.append((x, x))
    opt = torch.optim.SGD(model.parameters(), lr=[0.05, 0.04, 0.06][seed % 3], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
