"""Human-activity-recognition 1-D CNN (4-6 conv1d+ReLU blocks over 3-axis accelerometer windows,
global average pooling, linear classifier) ported from a TF1 script that initialised every conv
with tf.random_normal(stddev=0.001). Each layer multiplies the activation scale by roughly
std*sqrt(fan_in)~0.01, so after 4-6 layers the features are ~1e-12 and the gradients reaching the
early layers are just as small: the loss sits at log(num_classes) and SGD never moves it. Kaiming
init of the same layers trains normally."""
import torch, torch.nn as nn, math
CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = "TF1 tutorials using tf.random_normal(stddev=0.001) for conv kernels; 'HAR CNN loss stuck at 1.79' forum threads"

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    depth = [4, 5, 6][seed % 3]; width = [24, 32, 24][seed % 3]; C = 6; T = 64
    steps = [150, 180, 200][seed % 3]; bs = [32, 32, 48][seed % 3]
    layers = []; cin = 3
    for i in range(depth):
        layers += [nn.Conv1d(cin, width, 5, padding=2), nn.ReLU()]; cin = width
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(*layers))
    model.add_module("pool", nn.AdaptiveAvgPool1d(1)); model.add_module("flat", nn.Flatten())
    model.add_module("classifier", nn.Linear(width, C))
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Linear)):
            if fixed: nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else: nn.init.normal_(m.weight, std=0.001)
            nn.init.zeros_(m.bias)
    freqs = torch.linspace(0.5, 3.0, C)
    def make(n):
        y = torch.randint(0, C, (n,), generator=g)
        t = torch.arange(T, dtype=torch.float32) / 20.0
        ph = torch.rand(n, 3, 1, generator=g) * 6.28
        x = torch.sin(2 * math.pi * freqs[y].view(n, 1, 1) * t + ph) * (1 + 0.3 * (y.view(n, 1, 1) % 3))
        return x + 0.2 * torch.randn(n, 3, T, generator=g), y
    batches = [make(bs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
