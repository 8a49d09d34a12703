"""Knowledge-distillation student (deep plain VGG-style conv net, no BatchNorm) with Caffe N(0, 0.01) init.

Mechanism: the student is trained with SGD+momentum on Hinton's KD loss (KL at temperature
T=4, scaled by T^2, plus 0.1 x hard-label CE) against precomputed teacher logits. Every conv/linear is
initialised as in the original VGG/Caffe recipe, weights ~ N(0, 0.01). With fan-in 27..216 each
conv multiplies the activation scale by ~0.01*sqrt(fan_in/2) << 1, so activations (and backward
gradients) shrink geometrically with depth from step 0: the logits are ~0, the early layers get
no gradient, and the loss sits at the uniform-prediction value for the whole run. This is the
failure He et al. (2015) report for deep plain nets without proper init (and why VGG had to
initialise its deep configurations from shallower ones).
ORIGIN: student.features.0, the first conv, where the shrinking starts.
fixed=True: kaiming_normal_ (fan_in, relu) init; same data, optimizer, loss.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "bad_init"
ORIGIN = "student.features.0"
SOURCE = "He et al. 2015 'Delving Deep into Rectifiers' (deep plain nets stall with N(0,0.01)/Xavier init); VGG/Caffe gaussian init; Hinton et al. 2015 KD loss"

class VGGStudent(nn.Module):
    def __init__(self, n_cls, width=24, depth=8):
        super().__init__()
        layers, c = [], 3
        for i in range(depth):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU()]
            c = width
            if i in (2, 5):
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(width * 16, n_cls)
    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))

class Distill(nn.Module):
    def __init__(self, student):
        super().__init__()
        self.student = student
    def forward(self, x):
        return self.student(x)

def build(seed, fixed=False, steps=100, T=4.0, alpha=0.9, lr=0.01, tscale=1.0):
    g = torch.Generator().manual_seed(seed)
    C, B = 10, 32
    protos = F.avg_pool2d(torch.randn(C, 3, 32, 32, generator=g), 2)
    protos = protos / protos.flatten(1).std(1).view(C, 1, 1, 1)
    teach_W = torch.randn(C, C, generator=g) * 0.3 + torch.eye(C) * 3.0
    batches = []
    for _ in range(steps):
        lab = torch.randint(0, C, (B,), generator=g)
        mix = torch.randint(0, C, (B,), generator=g)
        x = protos[lab] + 0.3 * protos[mix] + 0.5 * torch.randn(B, 3, 16, 16, generator=g)
        sim = x.flatten(1) @ protos.flatten(1).t() / (3 * 16 * 16)
        t_logits = (sim @ teach_W.t()) * tscale
        batches.append((x, t_logits))
    torch.manual_seed(seed)
    model = Distill(VGGStudent(C))
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)
            nn.init.zeros_(m.bias)
    def loss_fn(s_logits, t_logits):
        kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.log_softmax(t_logits / T, -1), reduction="batchmean", log_target=True) * T * T
        ce = F.cross_entropy(s_logits, t_logits.argmax(-1))
        return alpha * kd + (1 - alpha) * ce
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
