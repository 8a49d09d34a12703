"""Arbitrary style transfer with AdaIN (Huang & Belongie 2017): a frozen encoder (stand-in for the
pretrained VGG, reflection padding as in the reference code), an AdaIN layer that re-normalises the
content features to the style's channel mean/std, and a trainable decoder trained with the content
+ mean/std style loss.  This re-implementation computes the channel statistics as
``feat.std(dim=2)`` with no epsilon (the reference ``calc_mean_std`` adds eps=1e-5 to the variance).
Training is calm until step 50, where the content batch contains a blank frame (a fade-to-black
video frame / solid-colour crop): every encoder channel is exactly constant, its std is exactly 0,
and (f - mu)/std = 0/0 turns the ``adain`` output into NaN, so the loss and the decoder weights
become NaN.  The fix is the epsilon inside the std (sqrt(var + 1e-5))."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "adain"
SOURCE = ("Huang & Belongie 2017 AdaIN; naoto0804/pytorch-AdaIN calc_mean_std (eps=1e-5 added to the "
          "variance); 'NaN loss on some content images' reports for re-implementations without eps")


def calc_mean_std(feat, eps):
    n, c = feat.shape[:2]
    flat = feat.reshape(n, c, -1)
    mean = flat.mean(2).reshape(n, c, 1, 1)
    if eps is None:
        std = flat.std(2).reshape(n, c, 1, 1)
    else:
        std = (flat.var(2) + eps).sqrt().reshape(n, c, 1, 1)
    return mean, std


class AdaIN(nn.Module):
    def __init__(self, eps=None):
        super().__init__()
        self.eps = eps

    def forward(self, content, style):
        cm, cs = calc_mean_std(content, self.eps)
        sm, ss = calc_mean_std(style, self.eps)
        return (content - cm) / cs * ss + sm


class StyleNet(nn.Module):
    def __init__(self, c=16, eps=None):
        super().__init__()
        self.eps = eps
        self.encoder = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1, padding_mode="reflect"), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1, padding_mode="reflect"))
        for p in self.encoder.parameters():
            p.requires_grad_(False)                       # frozen "pretrained" encoder
        self.adain = AdaIN(eps)
        self.decoder = nn.Sequential(
            nn.Conv2d(c, c, 3, padding=1, padding_mode="reflect"), nn.ReLU(),
            nn.Conv2d(c, 3, 3, padding=1, padding_mode="reflect"))

    def forward(self, content, style):
        fc, fs = self.encoder(content), self.encoder(style)
        t = self.adain(fc, fs)
        out = self.decoder(t)
        return {"t": t, "f_out": self.encoder(out), "f_style": fs}


def _images(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s).float(), torch.arange(s).float(), indexing="ij")
    out = []
    for _ in range(n):
        k = (0.3 + 0.9 * torch.rand(3, 2, generator=g)) * torch.randn(3, 2, generator=g).sign()
        ph = 6.28 * torch.rand(3, generator=g)
        col = torch.rand(3, 1, 1, generator=g)
        out.append(col * (0.5 + 0.5 * torch.sin(k[:, 0, None, None] * xs + k[:, 1, None, None] * ys + ph[:, None, None])))
    return torch.stack(out)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    eps = 1e-5 if fixed else None
    model = StyleNet(eps=eps)
    pool = [(_images(g, 6), _images(g, 6)) for _ in range(10)]
    steps = 100
    batches = []
    for i in range(steps):
        content, style = pool[i % len(pool)]
        if i == 50:
            content = content.clone(); content[2] = 0.0        # blank (fade-to-black) frame
        batches.append(((content, style), torch.zeros(())))

    def loss_fn(out, _):
        content_loss = F.mse_loss(out["f_out"], out["t"])
        om, os_ = calc_mean_std(out["f_out"], eps); sm, ss = calc_mean_std(out["f_style"], eps)
        style_loss = F.mse_loss(om, sm) + F.mse_loss(os_, ss)
        return content_loss + 2.0 * style_loss

    opt = torch.optim.Adam(model.decoder.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
