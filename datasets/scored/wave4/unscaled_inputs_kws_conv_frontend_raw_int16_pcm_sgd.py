"""Keyword-spotting model with a learnable strided Conv1d front end over raw waveform (frame conv
-> ReLU -> conv -> ReLU -> global pool -> linear over 5 keywords), trained with SGD+momentum. The data
loader read the WAV files with a library that returns int16 PCM and the samples were cast to float
without dividing by 32768, so the input amplitude is ~1e4. The first conv's activations are ~1e5, the
logits ~1e6, the cross-entropy is astronomically large from step 0 and the weight gradients (input x
delta) are ~1e4 times too big: the first SGD steps blow the weights up and the loss goes to inf/NaN
or freezes at a huge value. Scaling the waveform to [-1, 1] fixes it."""
import torch, torch.nn as nn, math
CAUSE = "unscaled_inputs"
ORIGIN = "frontend.0"
SOURCE = "scipy.io.wavfile.read returns int16 PCM; 'loss is huge / nan with raw audio' KWS forum threads"

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    C = 5; T = [800, 1000, 800][seed % 3]; ch = [16, 24, 32][seed % 3]
    steps = [150, 120, 180][seed % 3]; bs = [16, 24, 16][seed % 3]; lr = [0.1, 0.15, 0.2][seed % 3]
    model = nn.Sequential()
    model.add_module("frontend", nn.Sequential(nn.Conv1d(1, ch, 40, stride=10), nn.ReLU(), nn.Conv1d(ch, ch, 5, padding=2), nn.ReLU()))
    model.add_module("pool", nn.AdaptiveAvgPool1d(1)); model.add_module("flat", nn.Flatten())
    model.add_module("classifier", nn.Linear(ch, C))
    f0 = torch.tensor([220.0, 330.0, 440.0, 660.0, 880.0]) / 8000.0
    t = torch.arange(T, dtype=torch.float32)
    def make():
        y = torch.randint(0, C, (bs,), generator=g)
        env = torch.exp(-((t - T / 2) / (T / 4)) ** 2)
        x = env * torch.sin(2 * math.pi * f0[y].view(bs, 1) * t + 6.28 * torch.rand(bs, 1, generator=g))
        x = x * (0.5 + 0.5 * torch.rand(bs, 1, generator=g)) + 0.05 * torch.randn(bs, T, generator=g)
        pcm = torch.round(x.clamp(-1, 1) * 32767)        # int16 PCM as read from disk
        return (pcm / 32768.0 if fixed else pcm).unsqueeze(1), y
    batches = [make() for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
