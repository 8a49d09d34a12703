"""Few-shot classification with a Prototypical Network (Conv-4-style encoder, Euclidean
distance to class prototypes, episodic 5-way 2-shot training with Adam). Images are decoded to
[0, 1], except one microscopy TIFF in the pool that was stored as raw 16-bit counts and was
never divided by 65535: in its episode (early in training) that support image carries values in
the tens of thousands. Its embedding is enormous, the episode loss spikes by orders of magnitude
and so do the gradients, which drops a huge g^2 into Adam's second-moment estimate of nearly
every weight. With beta2 = 0.999 that estimate decays with a ~700-step time constant, so for
the rest of the run the effective step size is thousands of times smaller: the loss silently
stops improving, no NaN anywhere. Filtering (rescaling) the corrupt image trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "encoder.0.0"
SOURCE = ("Prototypical Networks (Snell et al. 2017) episodic training; tifffile/PIL 16-bit image "
          "loaded without /65535; Adam second-moment 'freeze' after one huge-gradient batch")

WAY, SHOT, QUERY, HW = 5, 2, 3, 12


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))


class ProtoNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(conv_block(1, 16), conv_block(16, 16), conv_block(16, 16))

    def forward(self, support, query):
        # support: (WAY*SHOT, 1, H, W) ordered by class; query: (WAY*QUERY, 1, H, W)
        zs = self.encoder(support).flatten(1)
        zq = self.encoder(query).flatten(1)
        protos = zs.view(WAY, SHOT, -1).mean(1)
        return -((zq[:, None, :] - protos[None]) ** 2).sum(-1)      # logits = -squared distance


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ProtoNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n_classes = 20
    class_means = torch.rand(n_classes, 1, HW, HW, generator=g)
    steps = 200
    bad_step = 3 + seed % 2
    batches = []
    for s in range(steps):
        cls = torch.randperm(n_classes, generator=g)[:WAY]
        sup = class_means[cls].repeat_interleave(SHOT, 0) + 0.35 * torch.randn(WAY * SHOT, 1, HW, HW, generator=g)
        qry = class_means[cls].repeat_interleave(QUERY, 0) + 0.35 * torch.randn(WAY * QUERY, 1, HW, HW, generator=g)
        sup, qry = sup.clamp(0, 1), qry.clamp(0, 1)
        if s == bad_step and not fixed:
            sup[1] = sup[1] * 65535.0                 # raw uint16 TIFF, never rescaled
        y = torch.arange(WAY).repeat_interleave(QUERY)
        batches.append(((sup, qry), y))
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
