"""Keyboard next-word suggestion: a small causal Transformer language model (token + position
embeddings, pre-LN encoder layers with a causal mask, an untied output projection over a
1-2k word on-device vocabulary) predicts the next word at every position of typed sentences.
Cross-entropy, AdamW.

Mechanism: the model ends with an `nn.Softmax(dim=-1)` layer, added so that the exported model
hands probabilities straight to the suggestion strip, and the same model is trained with
`nn.CrossEntropyLoss`, which applies its own log-softmax. The network's outputs p are squashed
into [0, 1] and sum to 1; the loss sees them as logits, so the best it could ever reach is
-log(e / (e + V - 1)), and its gradient w.r.t. the real logits passes through the Jacobian of
the inner softmax, p_k(δ_kj - p_j) ~ 1/V ~ 1e-3: the softmax units sit in their flat region and
the gradient reaching the Transformer is ~V times smaller than it should be. The loss stays at
~ln V for the whole run (a stall, finite values).

ORIGIN: "probs", the extra Softmax layer whose squashed outputs starve the gradient.

Fix: return the logits (drop the Softmax from the training graph; apply it only at export);
model, data, lr and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "probs"
SOURCE = ("PyTorch forums / StackOverflow 'loss not decreasing: nn.Softmax before "
          "nn.CrossEntropyLoss' (CrossEntropyLoss expects raw logits); on-device keyboard LMs "
          "export probabilities for the suggestion strip (Hard et al. 2018 'Federated learning "
          "for mobile keyboard prediction')")


class NextWordLM(nn.Module):
    def __init__(self, vocab, d, n_layers, t_len, softmax_out):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(t_len, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab)
        self.probs = nn.Softmax(dim=-1) if softmax_out else nn.Identity()
        self.register_buffer("causal", torch.triu(torch.full((t_len, t_len), float("-inf")), 1))

    def forward(self, ids):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))
        h = self.encoder(h, mask=self.causal[:t, :t], is_causal=True)
        return self.probs(self.lm_head(self.norm(h))).flatten(0, 1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab = [1000, 1500, 2000][seed % 3]
    d = [64, 48, 64][seed % 3]
    n_layers = [2, 1, 2][seed % 3]
    bs = [32, 24, 16][seed % 3]
    lr = [2e-3, 3e-3, 2e-3][seed % 3]
    t_len = 16
    steps = 120
    # Zipfian unigram + sparse bigram successors, like typed chat text
    zipf = 1.0 / torch.arange(1, vocab + 1).float()
    succ = torch.multinomial(zipf.expand(vocab, vocab), 8, replacement=False, generator=g)
    w = torch.tensor([0.3, 0.2, 0.12, 0.08, 0.05, 0.04, 0.03, 0.03])
    seqs = torch.zeros(steps * bs, t_len + 1, dtype=torch.long)
    seqs[:, 0] = torch.multinomial(zipf, steps * bs, replacement=True, generator=g)
    for t in range(1, t_len + 1):
        prev = seqs[:, t - 1]
        use_bigram = torch.rand(steps * bs, generator=g) < 0.85
        k = torch.multinomial(w, steps * bs, replacement=True, generator=g)
        nxt_b = succ[prev, k]
        nxt_u = torch.multinomial(zipf, steps * bs, replacement=True, generator=g)
        seqs[:, t] = torch.where(use_bigram, nxt_b, nxt_u)
    torch.manual_seed(seed)
    model = NextWordLM(vocab, d, n_layers, t_len, softmax_out=not fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    batches = [(seqs[i * bs:(i + 1) * bs, :-1], seqs[i * bs:(i + 1) * bs, 1:].flatten())
               for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.CrossEntropyLoss(), "batches": batches,
            "steps": steps}
