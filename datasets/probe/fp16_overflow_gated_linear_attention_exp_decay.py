"""Gated linear attention (GLA / RetNet-style data-dependent decay) in its naive parallel form:
G = cumsum(logsigmoid(gate)) over time, then (Q*exp(G)) @ (K*exp(-G))^T. Under float16 autocast
the gate projection, the cumsum and the exp all stay in half precision, and exp(-G) passes 65504
once -G > 11.1 (about 16 tokens into a 48-token sequence, log f ~ -0.7 at init), giving inf * 0 = NaN from step 0.
In float32 exp(-G) only overflows past -G = 88, far beyond this run.
fixed=True keeps the same fp16 autocast run but computes the gate/decay path in float32.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "layers.0.attn"
SOURCE = ("Yang et al. 2024 'Gated Linear Attention Transformers' sec. 4: computing Q*exp(B) and "
          "K*exp(-B) separately overflows in half precision; fla kernels keep gates in fp32")

VOCAB, DIM, HEADS, T, B = 32, 64, 4, 48, 12


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class GatedLinearAttention(nn.Module):
    def __init__(self, dim, heads, gate_fp32):
        super().__init__()
        self.h, self.hd = heads, dim // heads
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.gk_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.gate_fp32 = gate_fp32

    def forward(self, x):
        b, t, d = x.shape
        sh = lambda z: z.view(b, t, self.h, self.hd).transpose(1, 2)
        q, k, v = sh(self.q_proj(x)) * self.hd ** -0.5, sh(self.k_proj(x)), sh(self.v_proj(x))
        if self.gate_fp32:
            with torch.autocast("cpu", enabled=False):
                g = F.logsigmoid(F.linear(x.float(), self.gk_proj.weight, self.gk_proj.bias))
                G = sh(g).cumsum(dim=2)
                qg, kg = q.float() * G.exp(), k.float() * (-G).exp()
                a = (qg @ kg.transpose(-1, -2)).tril()
                o = a @ v.float()
        else:
            g = F.logsigmoid(self.gk_proj(x))
            G = sh(g).cumsum(dim=2)
            qg, kg = q * G.exp(), k * (-G).exp()
            a = (qg @ kg.transpose(-1, -2)).tril()
            o = a @ v
        return self.o_proj(o.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, gate_fp32):
        super().__init__()
        self.attn_norm = RMSNorm(DIM)
        self.attn = GatedLinearAttention(DIM, HEADS, gate_fp32)
        self.mlp_norm = RMSNorm(DIM)
        self.mlp = SwiGLU(DIM, 128)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class GLALM(nn.Module):
    def __init__(self, gate_fp32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList([Block(gate_fp32) for _ in range(2)])
        self.norm = RMSNorm(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = GLALM(gate_fp32=fixed)
    trans = torch.softmax(3.0 * torch.randn(VOCAB, VOCAB, generator=g), dim=-1)
    steps = 80
    batches = []
    for _ in range(steps):
        seq = torch.empty(B, T + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, VOCAB, (B,), generator=g)
        for t in range(1, T + 1):
            seq[:, t] = torch.multinomial(trans[seq[:, t - 1]], 1, generator=g).squeeze(1)
        batches.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))

    def loss_fn(out, y):
        return F.cross_entropy(out.reshape(-1, VOCAB).float(), y.reshape(-1))

    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
