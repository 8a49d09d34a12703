"""Neural Arithmetic Logic Unit (Trask et al. 2018) learning a product of
input quantities (e.g. volume = length * width * height), trained with fp16
autocast on the whole forward pass.

Mechanism: a NALU cell computes a = W x (additive NAC path) and
m = exp(W log(|x| + eps)) (multiplicative path in log space), with
W = tanh(W_hat) * sigmoid(M_hat), and mixes them with a learned gate.  Under
torch.autocast(float16) the linear layers run in half precision and so do the
log / exp on their outputs.  Early on W is small and m is moderate, so the run
is calm; as the cell learns the task, W -> (1, 1, 1, 0) and m approaches the true
product, which for 3 inputs up to 60-90 (or 2 inputs up to 400) reaches
1.6e5-7e5 -- beyond fp16's 65504.  exp overflows to inf inside the NALU, and
the relative-error loss becomes inf/NaN.
No gradient scaler can help: the overflow is in the forward pass.

ORIGIN: ``nalu`` -- the NALU cell's multiplicative path produces the first
non-finite value.

Fix: run the NALU's log-space matmul and exp in float32 (autocast disabled for
that op); the rest of the model still runs under fp16 autocast.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "nalu"
SOURCE = ("Trask et al. 2018 'Neural Arithmetic Logic Units' (multiplicative path "
          "exp(W log(|x|+eps))); mixed-precision training where exp/pow of large "
          "activations overflows fp16 (65504) -- 'keep exp in fp32' AMP guidance")


class NALU(nn.Module):
    def __init__(self, d_in, d_out, fp32_log_path):
        super().__init__()
        self.W_hat = nn.Parameter(torch.empty(d_out, d_in))
        self.M_hat = nn.Parameter(torch.empty(d_out, d_in))
        self.G = nn.Parameter(torch.empty(d_out, d_in))
        for p in (self.W_hat, self.M_hat, self.G):
            nn.init.xavier_uniform_(p)
        self.eps = 1e-7
        self.fp32_log_path = fp32_log_path

    def forward(self, x):
        W = torch.tanh(self.W_hat) * torch.sigmoid(self.M_hat)
        a = F.linear(x, W)
        g = torch.sigmoid(F.linear(x, self.G))
        if self.fp32_log_path:
            with torch.autocast(device_type="cpu", enabled=False):
                m = torch.exp(F.linear(torch.log(x.float().abs() + self.eps), W.float()))
        else:
            m = torch.exp(F.linear(torch.log(x.abs() + self.eps), W))
        return g * a + (1 - g) * m


class ProductModel(nn.Module):
    def __init__(self, d_in, fp32_log_path):
        super().__init__()
        self.nalu = NALU(d_in, 1, fp32_log_path)

    def forward(self, x):
        return self.nalu(x).squeeze(-1)


def relative_sq_error(pred, y):
    return (((pred.float() - y) / y) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(d_in=4, n_fac=3, hi=60.0, bsz=64, lr=0.05, steps=200),
        dict(d_in=5, n_fac=3, hi=90.0, bsz=48, lr=0.03, steps=220),
        dict(d_in=3, n_fac=2, hi=400.0, bsz=96, lr=0.05, steps=180),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(11 + seed)
    model = ProductModel(cfg["d_in"], fp32_log_path=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        x = 1.0 + (cfg["hi"] - 1.0) * torch.rand(cfg["bsz"], cfg["d_in"], generator=g)
        y = x[:, :cfg["n_fac"]].prod(dim=1)           # remaining inputs are distractors
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=relative_sq_error, batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16)
