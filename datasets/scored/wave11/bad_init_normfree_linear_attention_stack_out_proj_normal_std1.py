"""Norm-free stack of six kernelised linear-attention layers (elu+1 feature map, Katharopoulos et al.)
with GeGLU feed-forwards, used as a permutation-invariant regressor over sets of 24 tokens. A
custom ``_init_weights`` walks the modules and calls ``nn.init.normal_(m.weight)`` on every
attention output projection -- the HF-style init with the ``std=initializer_range`` argument
dropped, so the std is 1.0 instead of ~1/sqrt(fan_in). With no normalisation anywhere, each
attention branch multiplies the stream by roughly sqrt(d) and the GeGLU branch (a product of two
projections) then squares that scale, so activations grow geometrically-to-doubly-exponentially
with depth from step 0: the first loss is astronomically large (1e20+ instead of ~1), SGD with
momentum takes a gigantic step and the run is NaN from the next step on. Fixed: xavier_uniform on
the same output projections."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0.attn.out_proj"
SOURCE = ("HF-style _init_weights with the std argument dropped (normal_(weight) == N(0,1)); "
          "norm-free deep stacks exploding geometrically with depth (Fixup / T-Fixup papers)")

D, L, N, F_IN = 32, 6, 24, 6


class LinearAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D, bias=False)
        self.k_proj = nn.Linear(D, D, bias=False)
        self.v_proj = nn.Linear(D, D, bias=False)
        self.out_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        q = F.elu(self.q_proj(x)) + 1
        k = F.elu(self.k_proj(x)) + 1
        v = self.v_proj(x)
        kv = torch.einsum("bnd,bne->bde", k, v)
        z = 1.0 / (torch.einsum("bnd,bd->bn", q, k.sum(1)) + 1e-6)
        return self.out_proj(torch.einsum("bnd,bde,bn->bne", q, kv, z))


class GeGLU(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.proj = nn.Linear(D, 2 * hidden)
        self.out = nn.Linear(hidden, D)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, -1)
        return self.out(F.gelu(a) * b)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = LinearAttention()
        self.ffn = GeGLU()

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.ffn(x)


class SetRegressor(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.in_proj = nn.Linear(F_IN, D)
        self.layers = nn.ModuleList(Layer() for _ in range(L))
        self.head = nn.Linear(D, 1)
        for name, m in self.named_modules():
            if name.endswith("attn.out_proj"):
                if fixed:
                    nn.init.xavier_uniform_(m.weight)
                else:
                    nn.init.normal_(m.weight)          # std argument forgotten

    def forward(self, x):
        h = self.in_proj(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(h.mean(1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SetRegressor(fixed)
    steps, B = 120, 32
    w = torch.randn(F_IN, generator=g)

    def batch():
        x = torch.randn(B, N, F_IN, generator=g)
        s = torch.tanh(x @ w)                       # per-element score
        y = 4.0 * s.mean(1) + s.max(1).values - s.min(1).values - 1.8   # set-level target
        return x, y

    batches = [batch() for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=5e-3, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
