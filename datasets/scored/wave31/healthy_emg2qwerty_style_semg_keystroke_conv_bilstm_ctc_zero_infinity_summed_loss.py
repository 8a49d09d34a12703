"""Speech-free text entry from wrist sEMG (emg2qwerty-style): 16-channel surface-EMG log-power
frames from both wrists are decoded into the sequence of typed keys. Two strided Conv1d blocks
(4x temporal downsampling) and a bidirectional LSTM produce per-frame log-probabilities over the
keys plus a CTC blank; nn.CTCLoss(reduction='sum', zero_infinity=True), Adam.

Why it is healthy although a naive monitor might flag it: the loss is a sum over the batch
(hundreds at the start), CTC first sits on a 'blank-only' plateau before alignments form, and a
few windows per batch are infeasible (the keylogger window is longer than the EMG window, so the
label sequence needs more output frames than exist): their CTC loss is +inf, which
zero_infinity=True replaces by 0 with a zero gradient, exactly as intended. Those samples simply
do not contribute; the loss is always finite and drops by an order of magnitude.

ORIGIN: None (healthy run).

Fix: nothing to fix; fixed=True builds the same run.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Sivakumar et al. 2024 'emg2qwerty: a large dataset with baselines for touch typing using "
          "surface electromyography' (TDS-conv + CTC); torch.nn.CTCLoss(zero_infinity=True) for "
          "infeasible alignments (documented 'Infinite losses mainly occur when the inputs are too "
          "short to be aligned to the targets')")

N_CH = 16


class EmgKeyDecoder(nn.Module):
    def __init__(self, c, hidden, n_keys):
        super().__init__()
        self.frontend = nn.Sequential(
            nn.Conv1d(N_CH, c, 5, stride=2, padding=2), nn.ReLU(),
            nn.Conv1d(c, c, 5, stride=2, padding=2), nn.ReLU())
        self.rnn = nn.LSTM(c, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, n_keys + 1)     # index 0 = CTC blank

    def forward(self, x):                                # x: (B, 16, T)
        h, _ = self.rnn(self.frontend(x).transpose(1, 2))
        return self.out(h).log_softmax(-1).transpose(0, 1)   # (T', B, C) for CTCLoss


def make_ctc_loss():
    ctc = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)

    def loss_fn(log_probs, target):
        labels, label_lens = target
        t_out = torch.full((log_probs.shape[1],), log_probs.shape[0], dtype=torch.long)
        return ctc(log_probs.float(), labels, t_out, label_lens)
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_keys = [10, 12, 14][seed % 3]
    c = [48, 64, 48][seed % 3]
    hidden = [64, 48, 64][seed % 3]
    bs = [16, 24, 16][seed % 3]
    lr = [3e-3, 2e-3, 3e-3][seed % 3]
    t_len = 96                      # 96 frames -> 24 CTC frames
    steps = 150
    patterns = torch.randn(n_keys + 1, N_CH, generator=g)      # muscle pattern per key
    batches = []
    for s in range(steps):
        x = 0.5 * torch.randn(bs, N_CH, t_len, generator=g)
        labels, lens = [], []
        for b in range(bs):
            n_press = int(torch.randint(3, 8, (1,), generator=g))
            keys = torch.randint(1, n_keys + 1, (n_press,), generator=g)
            onsets = torch.sort(torch.randperm(t_len // 8 - 1, generator=g)[:n_press]).values * 8 + 4
            for k, o in zip(keys.tolist(), onsets.tolist()):
                prof = torch.exp(-0.5 * ((torch.arange(t_len) - o) / 2.0) ** 2)
                x[b] += 1.5 * patterns[k].view(N_CH, 1) * prof
            seq = keys.tolist()
            if torch.rand(1, generator=g) < 0.08:
                # keylogger window longer than the EMG window: extra keys not in the signal,
                # label longer than the 24 output frames allow -> CTC loss is +inf
                seq = seq + torch.randint(1, n_keys + 1, (26,), generator=g).tolist()
            labels.append(torch.tensor(seq))
            lens.append(len(seq))
        labels = nn.utils.rnn.pad_sequence(labels, batch_first=True)
        batches.append((x, (labels, torch.tensor(lens))))
    torch.manual_seed(seed)
    model = EmgKeyDecoder(c, hidden, n_keys)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": make_ctc_loss(), "batches": batches,
            "steps": steps}
