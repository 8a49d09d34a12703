"""Deep Packet style 1D-CNN traffic classifier, every weight drawn from N(0, 1).

Mechanism: the model follows Lotfollahi et al. "Deep Packet" (two Conv1d layers over the
first bytes of a packet, max-pool, then a tall stack of fully connected layers). The
user ported a Keras/TF1 snippet whose `weights_init` calls `nn.init.normal_(w, 0.0, 1.0)`
(TF `random_normal` default stddev=1.0) on every Conv1d/Linear. With unit-variance weights
each layer multiplies the activation scale by about sqrt(fan_in / 2) (5 .. 20 per layer),
so the logits are ~1e5-1e7 at step 0, the cross-entropy is astronomical and the first SGD
steps throw the weights to inf/NaN.

ORIGIN: `conv.0`, the first layer of the stack: the activation scale already grows there
and is compounded geometrically by every later layer; no single data or lr issue.

Fix: Kaiming-normal (fan_in, relu) weights and zero biases; everything else identical.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "conv.0"
SOURCE = ("Lotfollahi et al. 2019 'Deep Packet: a novel approach for encrypted traffic "
          "classification' 1D-CNN; TF1 random_normal(stddev=1.0) init ported as "
          "nn.init.normal_(w, 0, 1) (common forum report: loss inf/nan at first epoch)")


class DeepPacketCNN(nn.Module):
    def __init__(self, n_bytes, n_classes, ch, fc_widths):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(1, ch, kernel_size=5, stride=1),
            nn.ReLU(),
            nn.Conv1d(ch, ch, kernel_size=5, stride=1),
            nn.ReLU(),
            nn.MaxPool1d(2),
        )
        flat = ch * ((n_bytes - 8) // 2)
        layers = []
        prev = flat
        for w in fc_widths:
            layers += [nn.Linear(prev, w), nn.ReLU()]
            prev = w
        layers.append(nn.Linear(prev, n_classes))
        self.fc = nn.Sequential(*layers)

    def forward(self, x):
        h = self.conv(x.unsqueeze(1))
        return self.fc(h.flatten(1))


def _packets(g, n, n_bytes, n_classes, signatures, positions):
    y = torch.randint(0, n_classes, (n,), generator=g)
    # random payload bytes (encrypted traffic looks uniform)
    x = torch.randint(0, 256, (n, n_bytes), generator=g).float()
    # protocol / application specific header bytes (ports, TLS record types, flags)
    for c in range(n_classes):
        idx = (y == c).nonzero().flatten()
        if len(idx) == 0:
            continue
        sig = signatures[c].unsqueeze(0).expand(len(idx), -1)
        noise = torch.randint(-6, 7, sig.shape, generator=g).float()
        x[idx.unsqueeze(1), positions.unsqueeze(0)] = (sig + noise).clamp(0, 255)
    return x / 255.0, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    cfg = [
        dict(n_bytes=96, ch=16, fc=[128, 96, 64, 32], lr=0.01, bs=32, steps=80),
        dict(n_bytes=128, ch=24, fc=[160, 128, 96, 64, 32], lr=0.005, bs=48, steps=70),
        dict(n_bytes=80, ch=12, fc=[100, 80, 50], lr=0.02, bs=24, steps=90),
    ][seed % 3]
    n_classes = 6
    model = DeepPacketCNN(cfg["n_bytes"], n_classes, cfg["ch"], cfg["fc"])

    def weights_init(m):
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)  # TF random_normal default stddev
            nn.init.zeros_(m.bias)

    model.apply(weights_init)

    positions = torch.randperm(24, generator=g)[:10]
    signatures = torch.randint(0, 256, (n_classes, 10), generator=g).float()
    batches = [_packets(g, cfg["bs"], cfg["n_bytes"], n_classes, signatures, positions)
               for _ in range(cfg["steps"])]
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=cfg["steps"])
