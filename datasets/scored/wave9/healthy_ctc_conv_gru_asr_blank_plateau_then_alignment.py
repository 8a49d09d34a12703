"""Small CTC speech recogniser (Conv1d front-end with stride-2 subsampling -> bidirectional GRU ->
per-frame log-softmax over blank + characters) on synthetic filterbank-like utterances with
variable-length transcripts and frame counts, trained with Adam on F.ctc_loss (reduction='mean':
each utterance's summed NLL divided by its transcript length). It looks alarming: the loss starts
high and after a fast first drop CTC sits on its well-known blank plateau, where the network
emits blank on almost every frame (peaky all-blank posteriors) and the loss moves only slowly for
a few dozen steps; batches with different transcript lengths also give jumpy per-step values.
Then the alignments emerge and the loss falls steadily to a small value. Nothing is wrong."""
import torch, torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Graves et al. 2006 CTC; the well-known CTC 'blank plateau' before alignment (e.g. DeepSpeech / "
          "ESPnet training logs, Distill 'Sequence Modeling with CTC')")

F, C, H, B = 16, 8, 32, 16          # features, characters (blank = 0), hidden, batch
FRAMES_PER_CHAR = 6


class ConvGRUCTC(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = nn.Conv1d(F, H, 5, stride=2, padding=2)
        self.rnn = nn.GRU(H, H, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(2 * H, C + 1)

    def forward(self, feats, feat_lens):
        x = torch.relu(self.frontend(feats.transpose(1, 2))).transpose(1, 2)
        h, _ = self.rnn(x)
        out_lens = (feat_lens + 1) // 2
        return self.classifier(h).log_softmax(-1), out_lens


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 100)
    model = ConvGRUCTC()
    protos = torch.randn(C + 1, F, generator=g) * 1.5
    n_batches = 25
    data = []
    for _ in range(n_batches):
        lens = torch.randint(3, 7, (B,), generator=g)
        S = int(lens.max())
        targets = torch.randint(1, C + 1, (B, S), generator=g)
        Tmax = S * (FRAMES_PER_CHAR + 1) + 4
        feats = torch.randn(B, Tmax, F, generator=g) * 0.5 + protos[0]
        feat_lens = torch.empty(B, dtype=torch.long)
        for i in range(B):
            t = 2
            for j in range(int(lens[i])):
                d = int(torch.randint(3, FRAMES_PER_CHAR + 1, (1,), generator=g))
                feats[i, t:t + d] += protos[targets[i, j]]
                t += d + int(torch.randint(0, 2, (1,), generator=g))
            feat_lens[i] = t + 2
        data.append(((feats, feat_lens), (targets, lens)))
    steps = 200
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    def loss_fn(out, y):
        logp, out_lens = out
        targets, tlens = y
        return nn.functional.ctc_loss(logp.transpose(0, 1), targets, out_lens, tlens, blank=0)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
