"""lr_too_high: a HF DistilBERT (Post-LN transformer) sequence classifier trained with Adam at
lr=3e-2 and no warmup collapses to the uniform prediction and stays there.

Mechanism (Liu et al. 2020 "On the Difficulty of Training Transformers"; Xiong et al. 2020 "On
Layer Normalization in the Transformer Architecture"; many HF forum threads "BERT fine-tuning loss
stuck at ln(num_labels)"): Post-LN transformers amplify early updates through the residual/LayerNorm
stack. With a learning rate ~100x the usual 3e-4 and no warmup, the first Adam steps (each moving
every weight by ~lr regardless of gradient size) overshoot, the token representations collapse to
the same vector after the final LayerNorm, and the classifier can only output the class prior:
the cross-entropy sits at ln(4) = 1.386 for the rest of the run instead of descending. It is an
overshoot-then-collapse, not a numeric divergence: the loss stays finite.

Task: 4-way classification of a token sequence; the label is the marker token planted three times
(plus one distractor marker), so it needs attention to count, which is learnable at a sane lr.

ORIGIN = None: the overshoot is global (every parameter group gets update/weight ratios far above
1e-3 from step 1); no single layer starts it.

fixed=True: lr 3e-2 -> 3e-4 (the usual transformer lr). Nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import DistilBertConfig, DistilBertForSequenceClassification
from transformers.utils import logging as _hf_logging

_hf_logging.set_verbosity_error()

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Post-LN transformer (BERT/DistilBERT) trained without warmup at too high an lr collapses to "
          "loss = ln(num_labels) (Liu et al. 2020; Xiong et al. 2020; HF forum 'loss stuck at 0.69/1.38')")

N_CLASSES, VOCAB, SEQ = 4, 64, 16


class DistilBertClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = DistilBertConfig(vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                               max_position_embeddings=32, num_labels=N_CLASSES, dropout=0.0,
                               attention_dropout=0.0, seq_classif_dropout=0.0)
        self.bert = DistilBertForSequenceClassification(cfg)

    def forward(self, ids):
        return self.bert(input_ids=ids).logits


def _loss(logits, y):
    return F.cross_entropy(logits, y)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    B, steps = 32, 150
    batches = []
    for _ in range(steps):
        ids = torch.randint(8, VOCAB, (B, SEQ), generator=g)
        y = torch.randint(0, N_CLASSES, (B,), generator=g)
        for b in range(B):
            pos = torch.randperm(SEQ, generator=g)[:4]
            ids[b, pos[:3]] = 4 + y[b]                                       # the label's marker, 3x
            ids[b, pos[3]] = 4 + torch.randint(0, N_CLASSES, (1,), generator=g)  # one distractor
        batches.append((ids, y))
    model = DistilBertClassifier()
    lr = 3e-4 if fixed else 3e-2
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
