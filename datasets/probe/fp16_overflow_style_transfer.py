"""Fast neural style transfer (Johnson et al.) trained under float16 autocast: Gram matrix overflows.

Mechanism: a TransformerNet (conv + InstanceNorm + residual blocks + upsample) is trained with a
perceptual loss computed through a frozen loss network (standing in for VGG, whose relu features
are tens of units large). The style loss uses gram = f.bmm(f^T) / (c*h*w), as in
pytorch/examples fast_neural_style utils.gram_matrix: the bmm sums h*w products before the
division. Under float16 autocast the bmm output is float16; at step 0 the sums are ~1e4,
but as the generated image picks up the style's energy they pass 65504, the Gram becomes inf and
the loss inf/NaN a few steps in (step depends on seed). No GradScaler can help: the overflow is in
the forward pass. In float32 the same values are harmless.
ORIGIN: gram, the GramMatrix module whose float16 bmm overflows.
fixed=True: the Gram is computed in float32 (autocast disabled for that op); everything else
still runs under float16 autocast.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "fp16_overflow"
ORIGIN = "gram"
SOURCE = 'pytorch/examples fast_neural_style gram_matrix (bmm then divide) under AMP: fp16 overflow -> NaN style loss; fix is computing the Gram in fp32'

def conv_in(ci, co, k, s=1):
    return nn.Sequential(nn.Conv2d(ci, co, k, s, k // 2, padding_mode="reflect"), nn.InstanceNorm2d(co, affine=True), nn.ReLU())

class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, 1, 1, padding_mode="reflect"); self.n1 = nn.InstanceNorm2d(c, affine=True)
        self.c2 = nn.Conv2d(c, c, 3, 1, 1, padding_mode="reflect"); self.n2 = nn.InstanceNorm2d(c, affine=True)
    def forward(self, x):
        return x + self.n2(self.c2(F.relu(self.n1(self.c1(x)))))

class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(conv_in(3, 8, 5), conv_in(8, 16, 3, 2))
        self.res = nn.Sequential(ResBlock(16), ResBlock(16))
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), conv_in(16, 8, 3), nn.Conv2d(8, 3, 5, 1, 2, padding_mode="reflect"))
    def forward(self, x):
        return self.up(self.res(self.down(x)))

class LossNet(nn.Module):
    def __init__(self, gain):
        super().__init__()
        self.relu1 = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.ReLU())
        self.relu2 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU())
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu"); m.weight.data *= gain; nn.init.zeros_(m.bias)
        self.requires_grad_(False)
    def forward(self, x):
        f1 = self.relu1(x); f2 = self.relu2(f1)
        return f1, f2

class GramMatrix(nn.Module):
    def __init__(self, fp32):
        super().__init__()
        self.fp32 = fp32
    def forward(self, f):
        b, c, h, w = f.shape
        f = f.reshape(b, c, h * w)
        if self.fp32:
            with torch.autocast("cpu", enabled=False):
                f = f.float()
                return f.bmm(f.transpose(1, 2)) / (c * h * w)
        return f.bmm(f.transpose(1, 2)) / (c * h * w)

class StyleTransfer(nn.Module):
    def __init__(self, loss_net, fp32):
        super().__init__()
        self.transformer = TransformerNet()
        self.loss_net = loss_net
        self.gram = GramMatrix(fp32)
    def forward(self, x):
        y = self.transformer(x)
        f1, f2 = self.loss_net(y)
        return f2, self.gram(f1), self.gram(f2)

def build(seed, fixed=False, steps=100, lr=1e-3, gain=3.5, size=32, style_w=1.0):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    loss_net = LossNet(gain)
    B = 4
    style = torch.rand(1, 3, size // 4, size // 4, generator=g)
    style = F.interpolate(style, size=size, mode="nearest").clamp(0, 1)
    with torch.no_grad():
        s1, s2 = loss_net(style)
        def gram32(f):
            b, c, h, w = f.shape; f = f.reshape(b, c, h * w); return f.bmm(f.transpose(1, 2)) / (c * h * w)
        gs1, gs2 = gram32(s1), gram32(s2)
    batches = []
    for _ in range(steps):
        x = F.avg_pool2d(torch.rand(B, 3, size, size, generator=g), 5, 1, 2)
        x = (x - x.amin()) / (x.amax() - x.amin())
        with torch.no_grad():
            c2 = loss_net(x)[1]
        batches.append((x, (c2, gs1.expand(B, -1, -1), gs2.expand(B, -1, -1))))
    model = StyleTransfer(loss_net, fixed)
    def loss_fn(out, tgt):
        f2, g1, g2 = out; c2, t1, t2 = tgt
        return F.mse_loss(f2.float(), c2) + style_w * (F.mse_loss(g1.float(), t1) + F.mse_loss(g2.float(), t2))
    opt = torch.optim.Adam(model.transformer.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
