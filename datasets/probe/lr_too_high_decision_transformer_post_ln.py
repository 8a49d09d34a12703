"""Decision Transformer (interleaved return-to-go / state / action tokens, causal self-attention,
continuous action regression through a tanh head, GPT-2 style N(0, 0.02) init) built from
POST-LayerNorm blocks (the nn.TransformerEncoderLayer default, norm_first=False), trained with
AdamW at a constant lr of 2e-2..3e-2 (an lr copied from an MLP behaviour-cloning baseline)
from step 0 -- instead of ~1e-4..1e-3 (the DT recipe uses 1e-4 with a long warmup).

Mechanism. In a Post-LN transformer the gradients of the parameters near the output are large
at initialisation and every residual branch is renormalised after the add (Xiong et al. 2020,
Liu et al. 2020). Adam's first steps move every weight by ~lr regardless of gradient size: with
N(0, 0.02) weights and lr 2e-2 the update/weight ratio is ~1 per step (far above ~1e-3). After a
few such steps the block outputs are dominated by the freshly-perturbed sublayers, the LayerNorm
after each residual add rescales that noise back to unit size, attention patterns lose the
state -> action mapping, and the model drops into the "predict the average action" solution:
the action MSE climbs back to ~E[a^2] and stays there (loss plateaus above its early minimum).

ORIGIN = "blocks.0.mlp": the feed-forward branch of the first Post-LN block. Measured: its output
RMS goes 0.03 -> ~1.5 by step 2 and ~50 by step 30 while the residual stream it is added to has
RMS 1, so from step 2 on the LayerNorm after the add hands the rest of the network mostly the
freshly-perturbed FFN output instead of the embedded (return, state, action) tokens. The other
blocks' branches inflate the same way (the lr is global), but this is the first point in the
forward pass where the signal is drowned.

Fix (only the root cause): lr 1e-3 (constant). Same model, same init, same batches.

Seed changes: state/action dims, context length, batch, the oversized lr, the data.
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = "blocks.0.mlp"
SOURCE = ("Xiong et al. 2020 'On Layer Normalization in the Transformer Architecture' and Liu et al. "
          "2020 'Understanding the Difficulty of Training Transformers': Post-LN transformers diverge/"
          "plateau without warmup at large lr; Chen et al. 2021 Decision Transformer uses lr 1e-4 + warmup.")


class PostLNBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x, mask):
        x = self.ln1(x + self.attn(x, x, x, attn_mask=mask, need_weights=False)[0])
        return self.ln2(x + self.mlp(x))


class DecisionTransformer(nn.Module):
    def __init__(self, S, A, d, n_layer, heads, max_t):
        super().__init__()
        self.embed_return = nn.Linear(1, d)
        self.embed_state = nn.Linear(S, d)
        self.embed_action = nn.Linear(A, d)
        self.embed_timestep = nn.Embedding(max_t, d)
        self.embed_ln = nn.LayerNorm(d)
        self.blocks = nn.ModuleList([PostLNBlock(d, heads) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.predict_action = nn.Sequential(nn.Linear(d, A), nn.Tanh())
        for m in self.modules():  # GPT-2 style init, as in the DT reference code
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, rtg, states, actions, timesteps):
        B, K, _ = states.shape
        te = self.embed_timestep(timesteps)
        r = self.embed_return(rtg) + te
        s = self.embed_state(states) + te
        a = self.embed_action(actions) + te
        x = self.embed_ln(torch.stack([r, s, a], 2).reshape(B, 3 * K, -1))
        n = 3 * K
        mask = torch.triu(torch.full((n, n), float("-inf")), 1)  # a_t only visible to later tokens
        for blk in self.blocks:
            x = blk(x, mask)
        x = self.ln_f(x).reshape(B, K, 3, -1)
        return self.predict_action(x[:, :, 1])  # predict a_t from the s_t token


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    S = [6, 5, 7][seed % 3]
    A = [3, 2][seed % 2]
    K = [10, 8][(seed // 2) % 2]
    d, n_layer, heads = 64, 4, 4
    batch = [24, 32][(seed + 1) % 2]
    bad_lr = [2e-2, 2.5e-2, 3e-2][seed % 3]
    steps = 200
    ep_len = 40
    n_traj = 512

    model = DecisionTransformer(S, A, d, n_layer, heads, ep_len)

    M = torch.linalg.qr(torch.randn(S, S, generator=g))[0] * 0.95
    Bm = torch.randn(S, A, generator=g) / math.sqrt(A)
    Kp = torch.randn(A, S, generator=g) / math.sqrt(S) * 2.0
    s = torch.randn(n_traj, S, generator=g)
    ss, aa, rr = [], [], []
    for _ in range(ep_len):  # near-expert behaviour policy with a little noise
        a = torch.tanh(-(s @ Kp.T) + 0.1 * torch.randn(n_traj, A, generator=g))
        ss.append(s); aa.append(a); rr.append(-(s.pow(2).sum(-1)) / S)
        s = s @ M.T + 0.5 * a @ Bm.T + 0.1 * torch.randn(n_traj, S, generator=g)
    ss, aa, rr = torch.stack(ss, 1), torch.stack(aa, 1), torch.stack(rr, 1)
    rtg = rr.flip(1).cumsum(1).flip(1) / 20.0

    batches = []
    for _ in range(steps):
        i = torch.randint(0, n_traj, (batch,), generator=g)
        t0 = torch.randint(0, ep_len - K + 1, (batch,), generator=g)
        idx = t0[:, None] + torch.arange(K)
        st, ac, rt = ss[i[:, None], idx], aa[i[:, None], idx], rtg[i[:, None], idx][..., None]
        batches.append(((rt, st, ac, idx), ac))

    def loss_fn(pred, target):
        return (pred - target).pow(2).mean()

    opt = torch.optim.AdamW(model.parameters(), lr=1e-3 if fixed else bad_lr, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
