"""Symbolic-music event language model over a REMI-like vocabulary (Bar, Position_k, Pitch_p,
Duration_d tokens): token + position embeddings -> causal nn.TransformerEncoder -> vocabulary
logits; next-token cross-entropy; AdamW.

Healthy, but looks alarming to a naive monitor: the output logits are masked with -inf for every
token type the REMI grammar forbids after the current token (e.g. after a Pitch only a Duration
may follow), so most entries of every logit row are -inf, and the causal attention mask is a
float mask full of -inf as well. The ground-truth next token is always grammatical, so the -inf
entries never reach the loss: softmax gives them probability 0 and gradient 0, and the loss is
finite throughout. Masked logits also make the starting loss well below ln(V).

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("REMI tokenisation (Huang & Yang 2020 'Pop Music Transformer'); grammar/constrained "
          "decoding with -inf logit masks (e.g. MidiTok / constrained-generation practice); "
          "causal float -inf attention masks from nn.Transformer.generate_square_subsequent_mask.")

N_POS, N_PITCH, N_DUR = 16, 24, 8
BAR = 0
POS0 = 1
PITCH0 = POS0 + N_POS
DUR0 = PITCH0 + N_PITCH
V = DUR0 + N_DUR


def _type(tok):
    return torch.where(tok == BAR, 0, torch.where(tok < PITCH0, 1, torch.where(tok < DUR0, 2, 3)))


def grammar_mask(tokens):
    """allowed next types: Bar->Position; Position->Pitch; Pitch->Duration; Duration->Position|Bar"""
    t = _type(tokens)
    mask = torch.full(tokens.shape + (V,), float("-inf"))
    allow_pos = (t == 0) | (t == 3)
    mask[..., POS0:PITCH0] = torch.where(allow_pos[..., None], 0.0, float("-inf"))
    mask[..., PITCH0:DUR0] = torch.where((t == 1)[..., None], 0.0, float("-inf"))
    mask[..., DUR0:] = torch.where((t == 2)[..., None], 0.0, float("-inf"))
    mask[..., BAR] = torch.where(t == 3, 0.0, float("-inf"))
    return mask


class RemiLM(nn.Module):
    def __init__(self, d, layers, T):
        super().__init__()
        self.tok = nn.Embedding(V, d)
        self.pos = nn.Embedding(T, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(d, V)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(T))

    def forward(self, tokens, gmask):
        T = tokens.shape[1]
        h = self.tok(tokens) + self.pos(torch.arange(T))[None]
        h = self.encoder(h, mask=self.causal[:T, :T])
        return self.out(h) + gmask


def _songs(g, B, T):
    seqs = []
    for _ in range(B):
        key = int(torch.randint(0, 5, (1,), generator=g))
        s, pos = [BAR], 0
        while len(s) < T + 1:
            pos += int(torch.randint(1, 5, (1,), generator=g))
            if pos >= N_POS:
                s.append(BAR)
                pos = 0
                continue
            deg = int(torch.randint(0, 7, (1,), generator=g))
            pitch = key + [0, 2, 4, 5, 7, 9, 11][deg] + 12 * int(pos % 4 == 0)
            dur = min(N_DUR - 1, 1 + (pos % 4 == 0) * 2 + int(torch.randint(0, 2, (1,), generator=g)))
            s += [POS0 + pos, PITCH0 + min(pitch, N_PITCH - 1), DUR0 + dur]
        seqs.append(s[:T + 1])
    s = torch.tensor(seqs)
    x, y = s[:, :-1], s[:, 1:]
    return (x, grammar_mask(x)), y


def ce(logits, y):
    return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(18000 + seed)
    d = [64, 48, 96][seed % 3]
    layers = [2, 3, 2][seed % 3]
    B = [16, 12, 24][seed % 3]
    lr = [1e-3, 2e-3, 7e-4][seed % 3]
    T = 48
    steps = 120
    torch.manual_seed(seed)
    model = RemiLM(d, layers, T)
    batches = [_songs(g, B, T) for _ in range(steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return dict(model=model, optimizer=opt, loss_fn=ce, batches=batches, steps=steps)
