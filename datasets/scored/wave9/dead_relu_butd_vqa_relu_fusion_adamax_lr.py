"""Bottom-up/top-down style VQA model (Anderson et al. 2018; Teney et al. 'Tips and Tricks'): a
GRU question encoder, question-guided attention over pre-extracted region features, and the
fusion joint = relu(q_net(q)) * relu(v_net(v_att)) fed to an answer classifier. Region features
are pooled ResNet activations, i.e. non-negative with a mean of ~1. The model trains well with
Adamax at lr=1e-2 (the reference recipe uses 2e-3); here lr=0.1 was used ("Adamax is robust
to the lr"). The first Adamax
steps move every weight by ~lr; together with the non-negative, non-centred region features
this drives the pre-activations of the visual fusion layer v_net below zero for every image:
its ReLUs output exactly 0, the product with the question branch is 0 for every example, no
gradient returns through either branch, and the classifier can only fit the answer prior, so
the loss plateaus near log(K) without any non-finite value. Fixed: lr=1e-2, nothing else
changed."""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "v_net"
SOURCE = ("hengyuan-hu/bottom-up-attention-vqa (Adamax, lr 2e-3, relu FCNet fusion q_repr * v_repr); "
          "dying-ReLU reports when the optimiser step is far above the recipe rate")

V, E, H, R, FD, K, T, B = 50, 24, 32, 12, 32, 8, 8, 32


class BUTDVQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.q_rnn = nn.GRU(E, H, batch_first=True)
        self.att = nn.Linear(FD + H, 1)
        self.q_net = nn.Linear(H, H)
        self.v_net = nn.Linear(FD, H)
        self.classifier = nn.Sequential(nn.Linear(H, 2 * H), nn.ReLU(), nn.Linear(2 * H, K))

    def forward(self, q_ids, regions):
        _, hq = self.q_rnn(self.embed(q_ids))
        q = hq[-1]
        a = self.att(torch.cat([regions, q.unsqueeze(1).expand(-1, regions.shape[1], -1)], -1))
        v_att = (torch.softmax(a, 1) * regions).sum(1)
        joint = torch.relu(self.q_net(q)) * torch.relu(self.v_net(v_att))
        return self.classifier(joint)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 8)
    model = BUTDVQA()
    obj_protos = torch.rand(K, FD, generator=g) * 2.0
    n_batches = 25
    data = []
    for _ in range(n_batches):
        y = torch.randint(0, K, (B,), generator=g)         # answer = object class named in the question
        regions = torch.rand(B, R, FD, generator=g)        # background regions, non-negative
        slot = torch.randint(0, R, (B,), generator=g)
        regions[torch.arange(B), slot] = obj_protos[y] + 0.3 * torch.rand(B, FD, generator=g)
        q_ids = torch.randint(K, V, (B, T), generator=g)   # question words; answer not given away
        data.append(((q_ids, regions), y))
    steps = 150
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.Adamax(model.parameters(), lr=1e-2 if fixed else 0.1)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
