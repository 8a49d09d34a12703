"""lr_too_high: a tiny Hugging Face GPT-2 (random weights) trained with AdamW at lr 0.15-0.25.

Model and data
    ``GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=4))`` with random weights
    (initializer_range 0.02, dropout 0), trained as a next-token LM on a synthetic language:
    a Markov chain in which each token has three successors with probabilities 0.6/0.3/0.1.
    The successor tables are permutations, so every token is equally frequent: a model that
    only learns unigram statistics sits at ln(V) (4.56-4.85 nats), while the bigram entropy
    is 0.90 nats.

Mechanism (measured, seeds 0/1/2)
    1. The user copies ``lr=0.15..0.25`` from an SGD recipe into ``AdamW`` and uses no warmup.
       Adam's first step moves every weight element by about lr whatever the gradient size,
       and the GPT-2 init std is 0.02, so the step-0 update/weight ratio is 7.5 / 10.0 / 12.6
       (median over weight matrices; c_attn ~7.5-12.4) instead of ~1e-3.
    2. After that step the attention, MLP and tied embedding/LM-head matrices are dominated by
       +-lr sign noise: the loss overshoots from ln(V) to 7.0 / 8.0 / 10.1 within steps 1-4
       (seeds 0/1/2), and every later step is again an lr-sized move (update/weight ratio
       still 0.4-0.7 at steps 1-2).
    3. The loss only falls back to the unigram level and never below it: it sits at ln(V)
       (4.58-4.90) until step 200; mean of the last 10% / min of the first 5 = 1.00 -> stall.
    With lr=1e-3 (fixed) the same model and batches reach 1.1-1.2 nats (r ~ 0.27).

ORIGIN
    None: the fault is the optimizer hyper-parameter, not a module; every parameter gets the
    oversized update at the same step.

fixed=True
    Only the learning rate changes: AdamW lr = 1e-3 (everything else identical).
"""
import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Adam with an SGD-sized learning rate on a language model: "
          "rajveermalviya/language-modeling#3 (Adam lr 1.0, loss never goes down; lr 1e-3 fixes "
          "it), OpenNMT/OpenNMT-tf#744 (GPT2Small config with lr 2 instead of 2.5e-4 diverges), "
          "karpathy/nanoGPT#468 (loss curve stuck with a too-high lr)")


def _corpus(g, vocab, n_seq, seq_len):
    # Markov chain: each token has 3 successors (0.6 / 0.3 / 0.1); permutation tables keep
    # the marginal token distribution uniform.
    succ = torch.stack([torch.randperm(vocab, generator=g) for _ in range(3)], 1)
    probs = torch.tensor([0.6, 0.3, 0.1])
    seqs = torch.empty(n_seq, seq_len + 1, dtype=torch.long)
    seqs[:, 0] = torch.randint(0, vocab, (n_seq,), generator=g)
    for t in range(seq_len):
        k = torch.multinomial(probs.expand(n_seq, 3), 1, generator=g).squeeze(1)
        seqs[:, t + 1] = succ[seqs[:, t], k]
    return seqs


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(1000 + seed)
    vocab = [96, 128, 112][seed % 3]
    seq_len, bs, steps = 32, 16, 200
    seqs = _corpus(g, vocab, bs * steps, seq_len)
    batches = [(seqs[i * bs:(i + 1) * bs, :-1], seqs[i * bs:(i + 1) * bs, 1:]) for i in range(steps)]

    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=vocab, n_positions=64, n_embd=64, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                     bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg)
    lr = 1e-3 if fixed else [0.15, 0.2, 0.25][seed % 3]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def loss_fn(out, y):
        logits = out.logits
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
