"""FastSpeech-style post-LN transformer acoustic model trained with Adam at lr ~1e-2, no warmup.

Mechanism: a non-autoregressive TTS acoustic model (phoneme embedding + sinusoidal positions ->
2-4 post-LN ``nn.TransformerEncoderLayer`` blocks -> length regulator with known durations ->
Linear to 40-bin log-mel frames, L1 loss) is trained with Adam at a constant lr of 1-3e-2,
copied from a convolutional model's config; the original recipe uses a Noam warmup to a peak
near 1e-3.  Post-LN transformers are known not to survive large early steps: the first updates
blow up the attention/FFN weights, the residual stream is renormalised by LayerNorm after every
block, and the network falls into a state where all positions produce (nearly) the same frame.
The L1 loss drops once (the output bias learns the average mel) and then stays there for the
rest of the run -- a stall with no non-finite value; update/weight ratios stay far above 1e-3.

ORIGIN: None -- an optimiser setting, not a module, is the cause.

Fix: lr 1e-3 (the recipe's peak value), same model, data and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Xiong et al. 2020, 'On layer normalization in the transformer architecture' (post-LN "
          "needs warmup); Ren et al. 2019, FastSpeech (Noam schedule, peak ~1e-3); TTS forum "
          "reports of 'mel output is the same frame everywhere' after raising the lr")


class FastSpeechLite(nn.Module):
    def __init__(self, n_phones, d, n_layers, n_mels, dur):
        super().__init__()
        self.dur = dur
        self.emb = nn.Embedding(n_phones, d)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.decoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True), 1,
            enable_nested_tensor=False)
        self.proj = nn.Linear(d, n_mels)
        pos = torch.arange(256).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(256, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, phones):
        h = self.emb(phones) + self.pe[:phones.shape[1]]
        h = self.encoder(h)
        h = h.repeat_interleave(self.dur, dim=1)             # length regulator (fixed durations)
        h = self.decoder(h + self.pe[:h.shape[1]])
        return self.proj(h)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(8000 + seed)
    n_layers = [2, 3, 4][seed % 3]
    d = [96, 80, 64][seed % 3]
    bs = [16, 12, 20][seed % 3]
    lr = 1e-3 if fixed else [2e-2, 1.5e-2, 3e-2][seed % 3]
    n_phones, n_mels, L, dur, steps = 40, 40, 16, 3, 120

    tmpl = torch.randn(n_phones, n_mels, generator=g)
    tmpl = torch.nn.functional.avg_pool1d(tmpl.unsqueeze(1), 5, 1, 2).squeeze(1) * 2.0
    batches = []
    for _ in range(steps):
        ph = torch.randint(0, n_phones, (bs, L), generator=g)
        mel = tmpl[ph].repeat_interleave(dur, dim=1)                    # (B, L*dur, n_mels)
        # coarticulation: each frame leans towards the next phoneme's template
        nxt = tmpl[ph.roll(-1, 1)].repeat_interleave(dur, dim=1)
        w = torch.arange(dur).float().repeat(L).view(1, -1, 1) / (2 * dur)
        mel = 2.5 * ((1 - w) * mel + w * nxt) + 0.5 * torch.randn(mel.shape, generator=g)
        batches.append((ph, mel))

    torch.manual_seed(seed)
    model = FastSpeechLite(n_phones, d, n_layers, n_mels, dur)
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps)
