"""CTC speech recogniser (DeepSpeech2-style conv + BiLSTM) hit by one truncated utterance.

Mechanism. A small DeepSpeech2-like acoustic model (a 1-D convolution front end over log-mel
frames, GELU, a bidirectional LSTM, a linear layer to blank + phone classes, log_softmax) is
trained with ``F.ctc_loss`` on padded batches of utterances, each a sequence of phones rendered
as a few frames of a phone-specific spectral template plus noise. Everything is normalised and
trains smoothly.

What fails. At one step (seed-dependent) the batch holds a corrupt example, the classic cause
of "CTC loss is inf": an audio file truncated by a failed download / bad segmentation keeps
its full transcript. Its 4 remaining frames cannot carry a transcript of 6+ labels (CTC needs
at least as many frames as labels plus repeats), so no alignment exists; with PyTorch's default
``zero_infinity=False`` that sample's loss is +inf, the batch mean is inf, and its gradient is
non-finite. The data were fine on every other step and the model is calm until then.

ORIGIN = None: the corrupt example does not look extreme to any layer (its frames are ordinary
frames, just too few); the non-finite value is born in the CTC loss, outside the model.

fixed=True: the same model, data (the corrupt example included) and optimizer, with the robust
loss PyTorch provides for exactly this case, ``ctc_loss(..., zero_infinity=True)``, which drops
infeasible samples from the loss and gradient.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = (
    "PyTorch CTCLoss docs (zero_infinity: 'Infinite losses mainly occur when the inputs are too "
    "short to be aligned to the targets'); DeepSpeech2 / ESPnet 'CTC loss inf' reports traced "
    "to truncated audio with a full transcript"
)


class CTCRecognizer(nn.Module):
    def __init__(self, n_mels: int, hidden: int, n_labels: int):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, hidden, 5, padding=2)
        self.act = nn.GELU()
        self.rnn = nn.LSTM(hidden, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, n_labels)

    def forward(self, feats):                      # feats: (B, T, n_mels)
        h = self.act(self.conv(feats.transpose(1, 2))).transpose(1, 2)
        h, _ = self.rnn(h)
        return F.log_softmax(self.fc(h), dim=-1).transpose(0, 1)  # (T, B, C) for CTC


def make_ctc_loss(zero_infinity: bool):
    def loss_fn(log_probs, target):
        labels, input_lengths, target_lengths = target
        return F.ctc_loss(log_probs, labels, input_lengths, target_lengths, blank=0,
                          reduction="mean", zero_infinity=zero_infinity)
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(2024 + seed)
    n_phones, n_mels, max_frames = 8, 16, 40
    batch, steps = 12, 120
    bad_step = 45 + 20 * seed
    templates = torch.randn(n_phones + 1, n_mels, generator=g)
    batches = []
    for step in range(steps):
        feats = torch.zeros(batch, max_frames, n_mels)
        labels, in_lens, tgt_lens = [], [], []
        for b in range(batch):
            n_lab = int(torch.randint(3, 7, (1,), generator=g))
            lab = torch.randint(1, n_phones + 1, (n_lab,), generator=g)
            t = 0
            for p in lab.tolist():
                d = int(torch.randint(3, 6, (1,), generator=g))
                d = min(d, max_frames - t)
                feats[b, t:t + d] = templates[p] + 0.4 * torch.randn(d, n_mels, generator=g)
                t += d
            labels.append(lab)
            in_lens.append(t)
            tgt_lens.append(n_lab)
        if step == bad_step:
            # truncated recording, full transcript kept
            b = int(torch.randint(0, batch, (1,), generator=g))
            lab = torch.randint(1, n_phones + 1, (7,), generator=g)
            labels[b] = lab
            tgt_lens[b] = 7
            in_lens[b] = 4
            feats[b, 4:] = 0.0
        y = (torch.cat(labels), torch.tensor(in_lens), torch.tensor(tgt_lens))
        batches.append((feats, y))

    torch.manual_seed(seed)
    model = CTCRecognizer(n_mels, hidden=32, n_labels=n_phones + 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(
        model=model,
        optimizer=optimizer,
        loss_fn=make_ctc_loss(zero_infinity=fixed),
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
