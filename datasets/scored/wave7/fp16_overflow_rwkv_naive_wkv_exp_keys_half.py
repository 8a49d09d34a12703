"""A one-block RWKV-4 style language model (token shift, time-mix with the WKV operator, squared-ReLU
channel mix) trained on an associative-recall token stream under float16 autocast. The WKV is
computed in "GPT mode" straight from the paper's formula, wkv_t = (sum_i e^{-(t-1-i)w + k_i} v_i +
e^{u+k_t} v_t) / (sum_i e^{-(t-1-i)w + k_i} + e^{u+k_t}), without the running-max exponent trick of
the official kernel. Under autocast the key/value projections return float16, so exp(k) and the
decayed sums over the 64-token context are float16 too. The run is calm at first, but as the model
learns to focus on the informative tokens their keys grow (to ~8), the slowly-decaying channels'
sums of exp(k) * v pass 65504, numerator and denominator become inf, inf/inf = NaN, and the loss
is NaN from then on. Computing the WKV in float32 (autocast disabled for that op only, the rest of the
model still float16) keeps the same naive formula finite and the run trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "block.att"
SOURCE = ("BlinkDL/RWKV-LM: the WKV kernel keeps a running max exponent ('pp') because exp(k) overflows "
          "in fp16; ChatRWKV notes fp16 overflow and runs/rescales WKV in fp32")

V, D, T = 16, 32, 64


def wkv_naive(w, u, k, v):
    # "GPT mode" WKV straight from the paper's formula, w, u: (D,), k, v: (B, T, D)
    #   wkv_t = (sum_{i<t} e^{-(t-1-i)w + k_i} v_i + e^{u + k_t} v_t) / (sum_{i<t} e^{-(t-1-i)w + k_i} + e^{u + k_t})
    L = k.shape[1]
    t = torch.arange(L, dtype=torch.float32)
    lag = (t.view(L, 1) - 1 - t.view(1, L))                                # t-1-i
    W = torch.exp(-lag.clamp_min(0).unsqueeze(-1) * torch.exp(w)) * (lag >= 0).float().unsqueeze(-1)
    W = W.to(k.dtype)                                                      # (T, T, D)
    ek = torch.exp(k)
    euk = torch.exp(u.to(k.dtype) + k)
    a = torch.einsum("tid,bid->btd", W, ek * v)
    b = torch.einsum("tid,bid->btd", W, ek)
    return (a + euk * v) / (b + euk)


class TimeMix(nn.Module):
    def __init__(self, d, wkv_fp32):
        super().__init__()
        self.time_decay = nn.Parameter(torch.linspace(-6.0, 1.0, d))     # w (log-log decay)
        self.time_first = nn.Parameter(torch.full((d,), 0.5))             # u (bonus)
        self.mix_k = nn.Parameter(torch.full((d,), 0.5))
        self.mix_v = nn.Parameter(torch.full((d,), 0.5))
        self.mix_r = nn.Parameter(torch.full((d,), 0.5))
        self.key, self.value, self.receptance = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.output = nn.Linear(d, d, bias=False)
        self.wkv_fp32 = wkv_fp32

    def forward(self, x):
        xx = F.pad(x, (0, 0, 1, -1))                                      # token shift
        k = self.key(x * self.mix_k + xx * (1 - self.mix_k))
        v = self.value(x * self.mix_v + xx * (1 - self.mix_v))
        r = torch.sigmoid(self.receptance(x * self.mix_r + xx * (1 - self.mix_r)))
        if self.wkv_fp32:
            with torch.autocast("cpu", enabled=False):
                y = wkv_naive(self.time_decay.float(), self.time_first.float(), k.float(), v.float())
        else:
            y = wkv_naive(self.time_decay, self.time_first, k, v)
        return self.output(r * y)


class ChannelMix(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mix_k = nn.Parameter(torch.full((d,), 0.5))
        self.key, self.value = nn.Linear(d, 2 * d, bias=False), nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        xx = F.pad(x, (0, 0, 1, -1))
        return self.value(torch.relu(self.key(x * self.mix_k + xx * (1 - self.mix_k))) ** 2)


class Block(nn.Module):
    def __init__(self, d, wkv_fp32):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.att, self.ffn = TimeMix(d, wkv_fp32), ChannelMix(d)

    def forward(self, x):
        x = x + self.att(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class RWKV(nn.Module):
    def __init__(self, wkv_fp32):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.ln0 = nn.LayerNorm(D)
        self.block = Block(D, wkv_fp32)
        self.ln_out = nn.LayerNorm(D)
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, ids):
        return self.head(self.ln_out(self.block(self.ln0(self.emb(ids)))))


def make_batch(g, bs):
    # associative recall stream: every 4th token is a "key" (0..3) followed by its per-sequence value
    # token (8..15), the rest are fillers (4..7); the model predicts the next token
    ids = torch.randint(4, 8, (bs, T + 1), generator=g)
    table = torch.randint(8, 16, (bs, 4), generator=g)
    keys = torch.randint(0, 4, (bs, T // 4), generator=g)
    ids[:, 0:T:4] = keys
    ids[:, 1:T:4] = table.gather(1, keys)
    return ids[:, :T], ids[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RWKV(wkv_fp32=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    steps = 150
    batches = [make_batch(g, 8) for _ in range(steps)]
    loss_fn = lambda out, y: F.cross_entropy(out.reshape(-1, V).float(), y.reshape(-1))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
