"""Sound of Pixels (Zhao et al. 2018) mix-and-separate audio-visual source separation, small.

An audio net maps the log-magnitude spectrogram of a two-source mixture (plus a frequency
coordinate channel) to K sigmoid-activated feature maps a_k(f, t); a visual net maps a frame of the
video of source 1 to K sigmoid-activated feature maps that are spatially pooled into a vector v.  The synthesizer predicts a binary
time-frequency mask for source 1:
    mask(f, t) = sigmoid( sum_k s_k v_k a_k(f, t) + b )
trained with ``nn.BCELoss`` weighted by log(1 + |mixture|), against the ideal binary mask
(source 1 louder than source 2), as in the reference code (sigmoid output + BCE).

Mechanism: the visual features are pooled with ``feat.sum(dim=(2, 3))`` where the reference uses
spatial max-pooling (``img_pool = maxpool``).  Each v_k becomes a sum of H*W sigmoid outputs
(~18-32 instead of <= 1), and since both v_k and a_k are positive, every mask logit is a large
positive number (~100, >> 17) for every bin of every clip.  float32 sigmoid rounds to exactly 1.0,
so its gradient p(1 - p) is exactly 0 and BCELoss (clamped log) charges a constant ~100 per
"source 2" bin: the loss sits on a plateau and nothing below the sigmoid ever receives gradient.

ORIGIN: ``mask_act`` -- the output sigmoid of the synthesizer is the unit that saturates.

Fix: spatial max-pooling of the visual features (as in the reference), giving O(1) logits.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "mask_act"
SOURCE = ("The Sound of Pixels (Zhao et al., ECCV 2018) and hangzhaomit/Sound-of-Pixels code "
          "(sigmoid mask + weighted BCE, img_pool=maxpool); sum-pooling variant saturating the "
          "mask sigmoid")


class SoundOfPixels(nn.Module):
    def __init__(self, K, width, max_pool):
        super().__init__()
        self.max_pool = max_pool
        self.sound_net = nn.Sequential(                   # input: log-mix + frequency coordinate
            nn.Conv2d(2, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, K, 1), nn.Sigmoid())            # sound_activation = sigmoid
        self.frame_net = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, K, 3, padding=1), nn.Sigmoid())
        self.scale = nn.Parameter(torch.ones(K))
        self.bias = nn.Parameter(torch.zeros(1))
        self.mask_act = nn.Sigmoid()

    def forward(self, frame, log_mix):
        B, _, Fq, T = log_mix.shape
        coord = torch.linspace(-1, 1, Fq, device=log_mix.device)[None, None, :, None].expand(B, 1, Fq, T)
        a = self.sound_net(torch.cat([log_mix, coord], 1))   # [B, K, F, T]
        fmap = self.frame_net(frame)                      # [B, K, H, W]
        if self.max_pool:
            v = fmap.amax(dim=(2, 3))
        else:
            v = fmap.sum(dim=(2, 3))
        logits = torch.einsum("bk,bkft->bft", v * self.scale, a) + self.bias
        return self.mask_act(logits)


def weighted_bce(pred_and_w, gt):
    return F.binary_cross_entropy(pred_and_w, gt[0], weight=gt[1])


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(K=16, width=16, img=8, lr=2e-3, bs=16, steps=90),
           dict(K=12, width=24, img=8, lr=1e-3, bs=12, steps=100),
           dict(K=16, width=16, img=6, lr=3e-3, bs=20, steps=80)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5150 + seed)
    n_src, Fq, T, S = 6, 32, 16, cfg["img"]
    spec_tpl = torch.exp(1.5 * torch.randn(n_src, Fq, generator=g))     # instrument timbre
    img_tpl = torch.randn(n_src, 3, S, S, generator=g)

    model = SoundOfPixels(cfg["K"], cfg["width"], max_pool=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        c1 = torch.randint(0, n_src, (bs,), generator=g)
        c2 = (c1 + torch.randint(1, n_src, (bs,), generator=g)) % n_src
        env1 = 0.5 + torch.rand(bs, 1, T, generator=g)
        env2 = 0.5 + torch.rand(bs, 1, T, generator=g)
        s1 = spec_tpl[c1][:, :, None] * env1
        s2 = spec_tpl[c2][:, :, None] * env2
        mix = s1 + s2
        gt = (s1 > s2).float()
        weight = torch.log1p(mix).clamp(1e-3, 10.0)
        frame = img_tpl[c1] + 0.3 * torch.randn(bs, 3, S, S, generator=g)
        batches.append(((frame, torch.log(mix + 1e-3)[:, None]), (gt, weight)))
    return dict(model=model, optimizer=opt, loss_fn=weighted_bce, batches=batches, steps=cfg["steps"])
