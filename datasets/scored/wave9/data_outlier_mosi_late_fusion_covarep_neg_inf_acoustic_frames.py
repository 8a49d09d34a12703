"""Multimodal sentiment regression in the style of CMU-MOSI baselines: a GRU over word ids and a
GRU over frame-level COVAREP acoustic descriptors are late-fused to predict a sentiment score in
[-3, 3] with an L1 loss (AdamW). The released COVAREP features contain -inf for a few frames of
some clips (log of a zero energy/ratio on silent or unvoiced frames); reference code does
`audio[audio == -np.inf] = 0` while loading, which this pipeline forgot. Training is calm until
the shuffled order reaches the batch holding such a clip: the -inf enters the acoustic input
projection, -inf*w + inf*w' gives NaN, the loss is NaN from that step and the NaN gradients
poison every weight. Fixed: the same batch with its -inf frames replaced by 0 (the reference
sanitising), nothing else changed."""
import torch, torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "audio_proj"
SOURCE = ("CMU-MultimodalSDK / MulT (Tsai et al. 2019) data loaders: 'audio[audio == -np.inf] = 0' "
          "because COVAREP features in MOSI/MOSEI contain -inf values")

V, E, A, H, T, TA, B = 80, 24, 20, 24, 10, 16, 16


class LateFusionSentiment(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E, padding_idx=0)
        self.text_rnn = nn.GRU(E, H, batch_first=True)
        self.audio_proj = nn.Linear(A, H)
        self.audio_rnn = nn.GRU(H, H, batch_first=True)
        self.fusion = nn.Sequential(nn.Linear(2 * H, H), nn.GELU(), nn.Linear(H, 1))

    def forward(self, ids, audio):
        _, ht = self.text_rnn(self.embed(ids))
        _, ha = self.audio_rnn(torch.relu(self.audio_proj(audio)))
        return self.fusion(torch.cat([ht[-1], ha[-1]], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 2024)
    model = LateFusionSentiment()
    word_pol = torch.randn(V, generator=g) * (torch.rand(V, generator=g) < 0.3)
    word_pol[0] = 0
    proj = torch.randn(A, generator=g) / A ** 0.5
    n_batches = 30
    data = []
    for _ in range(n_batches):
        ids = torch.randint(1, V, (B, T), generator=g)
        pitch = torch.randn(B, generator=g)
        audio = torch.randn(B, TA, A, generator=g) * 0.7 + pitch.view(B, 1, 1) * proj
        y = (word_pol[ids].sum(1) * 0.6 + pitch * 1.0).clamp(-3, 3)
        data.append((ids, audio, y))
    # the clip with silent frames: COVAREP log-energy-type descriptors are -inf there
    ids, audio, y = data[17]
    audio = audio.clone()
    audio[3, 5:9, [0, 7]] = float("-inf")
    audio[11, 0:2, 7] = float("-inf")
    if fixed:
        audio[audio == float("-inf")] = 0.0
    data[17] = (ids, audio, y)
    steps = 150
    batches = [((d[0], d[1]), d[2]) for d in (data[i % n_batches] for i in range(steps))]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
