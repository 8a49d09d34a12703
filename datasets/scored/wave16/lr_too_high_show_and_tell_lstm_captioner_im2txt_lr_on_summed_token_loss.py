"""Show and Tell image captioner (Vinyals et al. 2015), PyTorch port of the im2txt recipe.

Pre-extracted CNN image features are linearly embedded and fed as the first LSTM input; the
caption words follow (teacher forcing) and a linear layer predicts the next word; the loss is the
token-level cross-entropy ignoring padding.  Plain SGD as in im2txt.

Mechanism: the port copied im2txt's ``initial_learning_rate = 2.0`` (1.0 for the wider model) but
(a) computes the caption loss with ``reduction="sum"`` over all tokens of the batch, where im2txt
averages over tokens, and (b) dropped im2txt's ``clip_gradients = 5.0``.  The gradient is therefore
~100-200x (the number of target tokens per batch) larger than the one the learning rate was tuned
for: the very first SGD step overshoots by two orders of magnitude, the output layer and LSTM
weights blow up and the summed loss jumps from a few hundred to tens of thousands, where it
stays (the saturated LSTM and huge logits give no useful gradient back).

ORIGIN: None -- the overshooting step size hits every parameter; there is no single origin module.

Fix: a learning rate matched to the summed loss (lr / ~100: 0.01..0.03); nothing else changes.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("tensorflow/models im2txt configuration (initial_learning_rate=2.0, clip_gradients=5.0, "
          "token-averaged loss) ported to PyTorch with a summed token loss and no clipping; "
          "Show and Tell (Vinyals et al. 2015)")

PAD, BOS, EOS = 0, 1, 2


class ShowAndTell(nn.Module):
    def __init__(self, feat_dim, vocab, emb, hidden):
        super().__init__()
        self.img_embed = nn.Linear(feat_dim, emb)
        self.word_embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.logits = nn.Linear(hidden, vocab)

    def forward(self, feats, caption_in):
        x = torch.cat([self.img_embed(feats)[:, None], self.word_embed(caption_in)], 1)
        h, _ = self.lstm(x)
        return self.logits(h[:, 1:])                  # predictions for each caption position


_ce = nn.CrossEntropyLoss(ignore_index=PAD, reduction="sum")   # summed over the batch's tokens


def caption_loss(logits, target):
    return _ce(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(emb=64, hidden=128, lr=2.0, fix_lr=0.02, bs=32, steps=100),
           dict(emb=48, hidden=96, lr=2.0, fix_lr=0.03, bs=24, steps=90),
           dict(emb=96, hidden=192, lr=1.0, fix_lr=0.01, bs=40, steps=110)][seed % 3]
    lr = cfg["fix_lr"] if fixed else cfg["lr"]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(606 + seed)
    n_obj, n_attr, n_verb, feat_dim, max_len = 8, 5, 4, 64, 7
    vocab = 3 + n_obj + n_attr + n_verb + 2                  # + "a", "the"
    A, THE = vocab - 2, vocab - 1
    obj_tpl = torch.randn(n_obj, feat_dim, generator=g)
    attr_tpl = torch.randn(n_attr, feat_dim, generator=g)
    verb_tpl = torch.randn(n_verb, feat_dim, generator=g)

    model = ShowAndTell(feat_dim, vocab, cfg["emb"], cfg["hidden"])
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    batches = []
    bs = cfg["bs"]
    for _ in range(cfg["steps"]):
        o = torch.randint(0, n_obj, (bs,), generator=g)
        a = torch.randint(0, n_attr, (bs,), generator=g)
        v = torch.randint(0, n_verb, (bs,), generator=g)
        feats = obj_tpl[o] + 0.7 * attr_tpl[a] + 0.7 * verb_tpl[v] + 0.3 * torch.randn(bs, feat_dim, generator=g)
        short = torch.rand(bs, generator=g) < 0.4               # "a dog" vs "the red dog runs"
        cap = torch.full((bs, max_len), PAD)
        cap[:, 0] = BOS
        det = torch.where(torch.rand(bs, generator=g) < 0.5, torch.full_like(o, A), torch.full_like(o, THE))
        cap[:, 1] = det
        cap[:, 2] = torch.where(short, 3 + o, 3 + n_obj + a)
        cap[:, 3] = torch.where(short, torch.full_like(o, EOS), 3 + o)
        cap[:, 4] = torch.where(short, torch.full_like(o, PAD), 3 + n_obj + n_attr + v)
        cap[:, 5] = torch.where(short, torch.full_like(o, PAD), torch.full_like(o, EOS))
        caption_in, target = cap[:, :-1], cap[:, 1:]
        batches.append(((feats, caption_in), target))
    return dict(model=model, optimizer=opt, loss_fn=caption_loss, batches=batches, steps=cfg["steps"])
