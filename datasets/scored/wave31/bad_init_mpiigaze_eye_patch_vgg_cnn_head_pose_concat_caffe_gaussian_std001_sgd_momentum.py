"""Appearance-based gaze estimation (MPIIGaze-style): a VGG-like stack of 3x3 convolutions over a
grey-scale normalised eye patch, whose flattened features are concatenated with the 2-D head pose
and regressed onto the gaze (pitch, yaw) in radians with an MSE loss, trained with momentum SGD.

Mechanism: the network is built without batch normalisation (as in the original LeNet/VGG gaze
models) but every conv/linear weight is initialised with the Caffe "gaussian" filler, std 0.01,
copied from an old prototxt. With fan-in 9*C ~ 150-300 each conv layer multiplies the activation
scale by ~0.01*sqrt(fan_in/2) ~ 0.1, so after 4-6 layers the features reaching the regressor are
~1e-5-1e-6 of the input scale, the backward signal shrinks the same way, and the prediction
stays at the output bias: the loss sits at the variance of the gaze targets from step 0 (a stall, no NaN).

ORIGIN: "features.0", the first conv; the geometric shrinkage starts there and compounds through
every later layer (all layers share the same bad filler, so the first is where it begins).

Fix: Kaiming (fan_in, ReLU) init for the convs/linears, the PyTorch-recommended init for a
ReLU network without normalisation; everything else (data, lr, steps) unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "features.0"
SOURCE = ("Caffe gaussian filler std=0.01 in ported gaze/VGG prototxts; Simonyan & Zisserman note "
          "deep VGG nets fail to train from N(0,0.01) init without pre-training; Zhang et al. "
          "MPIIGaze (CVPR 2015) eye-patch + head-pose CNN")


class GazeCNN(nn.Module):
    def __init__(self, width, n_convs):
        super().__init__()
        layers, c_in = [], 1
        for i in range(n_convs):
            layers += [nn.Conv2d(c_in, width, 3, padding=1), nn.ReLU()]
            if i in (1, 3):
                layers.append(nn.MaxPool2d(2))
            c_in = width
        self.features = nn.Sequential(*layers)
        self.fc = nn.Sequential(nn.Linear(width * 4 * 7 + 2, 128), nn.ReLU())
        self.head = nn.Linear(128, 2)

    def forward(self, eye, pose):
        f = self.features(eye).flatten(1)
        return self.head(self.fc(torch.cat([f, pose], 1)))


def _make_data(g, n):
    # gaze (pitch, yaw) in radians, head pose in radians
    gaze = torch.randn(n, 2, generator=g) * 0.25
    pose = torch.randn(n, 2, generator=g) * 0.2
    # the pupil position in the normalised eye patch follows gaze minus head rotation
    ys = torch.linspace(-1, 1, 18).view(1, 18, 1)
    xs = torch.linspace(-1, 1, 30).view(1, 1, 30)
    py = (gaze[:, 0] - 0.5 * pose[:, 0]).view(n, 1, 1) * 1.6
    px = (gaze[:, 1] - 0.5 * pose[:, 1]).view(n, 1, 1) * 1.6
    pupil = torch.exp(-((ys - py) ** 2 + (xs - px) ** 2 / 0.6) / 0.12)
    lid = 0.3 * torch.exp(-(ys / 0.9) ** 2)
    eye = 0.8 - 0.7 * pupil + lid + 0.05 * torch.randn(n, 18, 30, generator=g)
    eye = (eye - eye.mean()) / eye.std()  # dataset-level standardisation
    return eye.unsqueeze(1), pose, gaze


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [16, 24, 32][seed % 3]
    n_convs = [4, 5, 6][seed % 3]
    lr = [0.008, 0.005, 0.004][seed % 3]
    bs = [32, 48, 40][seed % 3]
    steps = 150
    torch.manual_seed(seed)
    model = GazeCNN(width, n_convs)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 0.01)  # caffe gaussian filler
            nn.init.zeros_(m.bias)
    if fixed:  # linear regression head: Glorot, as in the reference implementation
        nn.init.xavier_uniform_(model.head.weight)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    eye, pose, gaze = _make_data(g, steps * bs)
    batches = [((eye[i * bs:(i + 1) * bs], pose[i * bs:(i + 1) * bs]), gaze[i * bs:(i + 1) * bs])
               for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
