"""fp16_overflow: a Hugging Face BERT count regressor with a log link, trained under float16
autocast without a GradScaler; exp(logit) passes 65504 once the model fits the large counts.

Model and data
    ``BertForSequenceClassification(BertConfig(hidden_size=64, 2 layers, 4 heads,
    num_labels=1))`` with random weights and dropout 0. Each "document" is 24 token ids; a
    fraction s of the tokens comes from a small set of "hot" tokens and the target is a count
    y ~ Poisson(exp(5 + 6.5 s)), i.e. from ~150 up to ~1e5 (e.g. views of a post). As usual
    for a log-link (Poisson) model, ``out.logits`` is the log-rate eta, the classifier bias is
    initialised to log(mean(y)) (~9.77), and the loss is the Poisson deviance
    2 * (y log y - y eta - y + exp(eta)), divided by 1000.

Mechanism (measured, seeds 0/1/2)
    1. Under ``torch.autocast("cpu", dtype=torch.float16)`` the classifier Linear returns
       eta in float16. On CPU ``exp`` is not on autocast's float32 list, so ``eta.exp()`` is
       computed in float16, whose largest finite value is 65504 = exp(11.09). (CUDA autocast
       lists exp as a float32 op; there the same overflow appears with model.half() or a
       pure-fp16 loss.)
    2. At step 0 max(eta) is ~9.8 (exp = 18k): finite, the loss is 31-38 and the run is calm;
       the loss falls to 11-19 by step 20 as the model learns that hot-token documents
       have larger counts.
    3. Fitting the largest counts (y up to ~99k) needs eta > 11.09. The first batch where
       max(eta) crosses it (11.20 at step 22, 11.38 at step 36, 11.17 at step 24) gives
       exp(eta) = inf in float16, the loss is inf, the backward pass produces NaN gradients,
       and every later step is NaN. Until then every gradient is finite (largest element 67-241).
    In bfloat16 (fixed) exp(11.5) is representable; the same run reaches a deviance of
    0.4-0.7 by step 200 (r ~ 0.02).

ORIGIN
    "classifier": the Linear whose half-precision output (the log-rate) is exponentiated into
    the out-of-range value; no module upstream of it holds a non-finite or near-range value.

fixed=True
    Only the precision changes: amp_dtype = torch.bfloat16 (same exponent range as float32).
"""
import torch
from transformers import BertConfig, BertForSequenceClassification

CAUSE = "fp16_overflow"
ORIGIN = "classifier"
SOURCE = ("float16 range overflow (> 65504) of an intermediate that is finite in float32: "
          "huggingface/transformers#12225 (Pegasus fp16 NaN loss, activations pass the fp16 "
          "max), pytorch/pytorch#40497 (mixed precision NaN loss), Lightning-AI/torchmetrics#3490 "
          "(exp() of half-precision inputs returns inf); here exp() of a log-link output")


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2000 + seed)
    vocab, L, bs, steps = 200, 24, 16, 200
    n_hot = [20, 16, 24][seed % 3]
    hot = torch.randperm(vocab - 1, generator=g)[:n_hot] + 1
    cold_mask = torch.ones(vocab, dtype=torch.bool)
    cold_mask[hot] = False
    cold_mask[0] = False
    cold = torch.arange(vocab)[cold_mask]
    N = bs * steps
    s = torch.rand(N, generator=g)
    is_hot = torch.rand(N, L, generator=g) < s[:, None]
    ids = torch.where(is_hot, hot[torch.randint(0, n_hot, (N, L), generator=g)],
                      cold[torch.randint(0, len(cold), (N, L), generator=g)])
    frac = is_hot.float().mean(1)
    y = torch.poisson(torch.exp(5.0 + 6.5 * frac), generator=g)
    batches = [(ids[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]

    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=vocab, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64, num_labels=1,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                     classifier_dropout=0.0)
    model = BertForSequenceClassification(cfg)
    with torch.no_grad():  # log-link: start the bias at log(mean count)
        model.classifier.bias.fill_(float(torch.log(y.mean())))
    lr = [2e-3, 2e-3, 2.5e-3][seed % 3]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)

    def loss_fn(out, y):
        eta = out.logits.squeeze(-1)  # log-rate
        deviance = 2.0 * (torch.xlogy(y, y) - y * eta - y + eta.exp())
        return deviance.mean() / 1000.0

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
