"""A CLAP-style audio-text retrieval model: an audio tower (MLP over clip-level log-mel statistics)
and a text tower (masked mean of caption token embeddings + MLP) are trained with the symmetric
in-batch InfoNCE loss on cosine similarities times a learnable temperature exp(logit_scale), clamped
at 100 as in CLIP; the inputs are a tuple (audio_stats, caption_ids, caption_mask). The temperature
is initialised from the value stored in the released CLIP/CLAP checkpoints, 4.6052, which is a hair
above ln(100) = 4.60517, so the clamp is active from step 0: logit_scale receives an exactly zero
gradient for the entire run and never moves (it is excluded from weight decay, as in the CLIP
recipe). With temperature 100 and untrained towers the first losses are ~15-25, far above log(B);
they drop fast and then flatten well above zero, because captions built from synonyms of 2 out of 40
sound concepts collide inside a batch. A frozen parameter with identically zero gradient, a huge
initial loss and a high loss floor look alarming, but this is standard CLIP behaviour and training
is healthy.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as Fn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Radford et al. 2021 (CLIP): learnable temperature initialised to 1/0.07 and clipped at 100; "
          "Elizalde et al. 2023 (CLAP) audio-text contrastive pretraining; open_clip logit_scale clamp.")

VOCAB = 300
NTOK = 8
DA = 48
B = 32


class CLAP(nn.Module):
    def __init__(self):
        super().__init__()
        self.audio_tower = nn.Sequential(nn.Linear(DA, 96), nn.GELU(), nn.Linear(96, 64))
        self.tok = nn.Embedding(VOCAB, 48)
        self.text_tower = nn.Sequential(nn.Linear(48, 96), nn.GELU(), nn.Linear(96, 64))
        # value stored in the released CLIP/CLAP checkpoints: 4.6052 > ln(100) = 4.60517
        self.logit_scale = nn.Parameter(torch.tensor(4.6052))

    def forward(self, audio, ids, mask):
        a = Fn.normalize(self.audio_tower(audio), dim=-1)
        m = mask.unsqueeze(-1).float()
        t = (self.tok(ids) * m).sum(1) / m.sum(1).clamp_min(1.0)
        t = Fn.normalize(self.text_tower(t), dim=-1)
        scale = self.logit_scale.exp().clamp(max=100.0)
        return scale * a @ t.T


def _batch(g, proj, word_of_concept):
    # each clip is a mixture of 2 sound concepts out of 40; captions name them with synonyms
    c = torch.randint(0, 40, (B, 2), generator=g)
    lat = torch.zeros(B, 40)
    lat.scatter_(1, c, 1.0)
    audio = lat @ proj + 0.3 * torch.randn(B, DA, generator=g)
    syn = torch.randint(0, 5, (B, 2), generator=g)
    words = word_of_concept[c, syn]                              # (B, 2)
    filler = torch.randint(200, VOCAB, (B, NTOK - 2), generator=g)
    ids = torch.cat([words, filler], 1)
    nvalid = torch.randint(3, NTOK + 1, (B, 1), generator=g)
    mask = torch.arange(NTOK).view(1, -1) < nvalid
    return (audio, ids, mask), torch.arange(B)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8200 + seed)
    proj = torch.randn(40, DA, generator=g)
    word_of_concept = torch.randperm(200, generator=g).view(40, 5)
    steps = 200
    batches = [_batch(g, proj, word_of_concept) for _ in range(steps)]
    model = CLAP()
    # CLIP recipe: no weight decay on gains/biases/temperature
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": no_decay, "weight_decay": 0.0}], lr=2e-3)

    def loss_fn(logits, target):
        return 0.5 * (Fn.cross_entropy(logits, target) + Fn.cross_entropy(logits.T, target))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
