"""Actor-critic policy with invalid-action masking (grid logistics env) trained on a fixed buffer
of (state, action, advantage, return, legal-mask). The head masks by multiplying the softmax by the
legal mask and renormalising, then takes probs.log() for the log-probs and entropy. Most states
have every action legal; when a batch contains a state next to a wall (a legal situation), a
masked action has probability exactly 0, log(0) = -inf and the entropy term 0 * -inf = NaN.
ORIGIN: policy_head (produces the -inf/NaN log-probs). Fix: mask logits with a large negative
value and use log_softmax (finite log-probs, p*logp = 0 for masked actions)."""
import torch, torch.nn as nn
CAUSE = "unsafe_op"
ORIGIN = "policy_head"
SOURCE = "invalid action masking in PPO/A2C (Huang & Ontanon 2020); NaN entropy with renormalised masked probs"
class PolicyHead(nn.Module):
    def __init__(s, h, a, safe):
        super().__init__(); s.lin = nn.Linear(h, a); s.safe = safe
    def forward(s, z, mask):
        logits = s.lin(z)
        if s.safe: return torch.log_softmax(logits.masked_fill(mask == 0, -1e9), -1)
        p = torch.softmax(logits, -1) * mask; p = p / p.sum(-1, keepdim=True)
        return p.log()
class AC(nn.Module):
    def __init__(s, d, h, a, safe):
        super().__init__(); s.body = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh())
        s.policy_head = PolicyHead(h, a, safe); s.value_head = nn.Linear(h, 1)
    def forward(s, x, mask):
        z = s.body(x); return torch.cat([s.policy_head(z, mask), s.value_head(z)], -1)
def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    d, h, a, bs, steps, lr, bad = [(10, 64, 5, 64, 80, 3e-3, 35), (16, 48, 4, 32, 100, 2e-3, 70), (8, 96, 6, 128, 60, 5e-3, 15)][seed]
    model = AC(d, h, a, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    def loss_fn(out, y):
        logp, v = out[:, :-1], out[:, -1]
        act, adv, ret = y[:, 0].long(), y[:, 1], y[:, 2]
        ent = -(logp.exp() * logp).sum(-1).mean()
        return -(logp.gather(1, act[:, None]).squeeze(1) * adv).mean() + 0.5 * ((v - ret) ** 2).mean() - 0.01 * ent
    Wp = torch.randn(d, a, generator=g); wv = torch.randn(d, generator=g)
    batches = []
    for i in range(steps):
        x = torch.randn(bs, d, generator=g); mask = torch.ones(bs, a)
        if i == bad: mask[:4, 0] = 0
        act = torch.multinomial(torch.softmax(torch.randn(bs, a, generator=g) + mask.log().clamp_min(-30), -1), 1, generator=g).squeeze(1)
        good = (x @ Wp).argmax(-1); adv = (act == good).float() - 0.3; ret = torch.tanh(x @ wv / d ** .5) * 2
        batches.append(((x, mask), torch.stack([act.float(), adv, ret], 1)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
