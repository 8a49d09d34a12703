"""Tiny non-autoregressive TTS acoustic model (FastSpeech-like: phoneme embedding -> conv blocks
-> per-frame magnitude-mel head). The head ends in ReLU because mel magnitudes are non-negative,
and the model's LogCompress module turns them into log-mels for the L1 loss against log-mel
targets. HiFi-GAN/Tacotron code does torch.log(torch.clamp(x, min=1e-5)); here it is plain
torch.log(x). The head starts at a small weight and a positive bias, so every
bin is positive and the first steps are calm, but the quiet
(silence/high-frequency) bins have targets near log(1e-3); regression drives their ReLU
pre-activations toward 0, one overshoots below 0, the ReLU returns exactly 0.0 and log(0) = -inf
makes the L1 loss inf; its backward (1/0) fills the weights with NaN. Fixed: clamp_min(1e-5)
before the log, nothing else changed."""
import torch, torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "log_compress"
SOURCE = ("jik876/hifi-gan meldataset.dynamic_range_compression_torch: torch.log(torch.clamp(x, min=clip_val)); "
          "reports 'mel loss becomes -inf/nan' when the clamp is dropped")

P, E, M, T, B = 40, 32, 20, 24, 16


class LogCompress(nn.Module):
    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, mag):
        return torch.log(mag.clamp_min(self.clip)) if self.clip else torch.log(mag)


class TinyTTS(nn.Module):
    def __init__(self, clip):
        super().__init__()
        self.embed = nn.Embedding(P, E)
        self.conv1 = nn.Conv1d(E, E, 3, padding=1)
        self.conv2 = nn.Conv1d(E, E, 3, padding=1)
        self.mel_head = nn.Linear(E, M)
        self.log_compress = LogCompress(clip)
        nn.init.normal_(self.mel_head.weight, std=0.02)   # start every bin at a modest positive level
        nn.init.constant_(self.mel_head.bias, 1.0)

    def forward(self, phonemes):
        h = self.embed(phonemes).transpose(1, 2)
        h = h + torch.relu(self.conv1(h))
        h = h + torch.relu(self.conv2(h))
        mag = torch.relu(self.mel_head(h.transpose(1, 2)))
        return self.log_compress(mag)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 90)
    model = TinyTTS(1e-5 if fixed else None)
    # each phoneme has a characteristic spectral envelope; upper bins are near-silent
    env = torch.rand(P, M, generator=g) * torch.linspace(1.0, 0.02, M)
    env[0] = 1e-3                                         # silence / pause token
    n_batches = 20
    data = []
    for _ in range(n_batches):
        ph = torch.randint(0, P, (B, T), generator=g)
        ph[:, :3] = 0
        mel = env[ph] * (1 + 0.1 * torch.rand(B, T, M, generator=g)) + 1e-3
        data.append((ph, torch.log(mel)))
    steps = 200
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
