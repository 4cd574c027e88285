"""GoogLeNet (Inception v1) with torchvision's structure and parameter names (``conv1..3``,
``inception3a..5b.branchN``, ``aux1``/``aux2``, ``fc``). torchvision-API only.

In training mode with ``aux_logits`` the forward returns ``GoogLeNetOutputs(logits, aux_logits2,
aux_logits1)`` like torchvision's eager mode; in eval mode the logits tensor.
"""
from collections import namedtuple

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from ._api import build_tv_model, overwrite_named_param, register_builder, tv_weights_enums

__all__ = ["GoogLeNet", "GoogLeNetOutputs", "googlenet"]

GoogLeNetOutputs = namedtuple("GoogLeNetOutputs", ["logits", "aux_logits2", "aux_logits1"])


class BasicConv2d(nn.Module):
    """Conv (no bias) -> BatchNorm (eps 1e-3, the ported TF weights') -> ReLU."""

    def __init__(self, in_channels, out_channels, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=True)


def transform_input(x):
    """Re-normalise from the ImageNet mean/std to (x - 0.5) / 0.5, the range the ported TF weights expect."""
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    chans = [x[:, i:i + 1] * (std[i] / 0.5) + (mean[i] - 0.5) / 0.5 for i in range(3)]
    return flow.cat(chans, 1)


class Inception(nn.Module):
    def __init__(self, in_channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch1 = conv_block(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(conv_block(in_channels, ch3x3red, kernel_size=1),
                                     conv_block(ch3x3red, ch3x3, kernel_size=3, padding=1))
        # torchvision's (and the checkpoints') "5x5" branch uses a 3x3 kernel
        self.branch3 = nn.Sequential(conv_block(in_channels, ch5x5red, kernel_size=1),
                                     conv_block(ch5x5red, ch5x5, kernel_size=3, padding=1))
        self.branch4 = nn.Sequential(nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
                                     conv_block(in_channels, pool_proj, kernel_size=1))

    def forward(self, x):
        return flow.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


class InceptionAux(nn.Module):
    def __init__(self, in_channels, num_classes, conv_block=None, dropout=0.7):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.conv = conv_block(in_channels, 128, kernel_size=1)
        self.fc1 = nn.Linear(2048, 1024)
        self.fc2 = nn.Linear(1024, num_classes)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        x = self.conv(F.adaptive_avg_pool2d(x, (4, 4)))
        x = F.relu(self.fc1(flow.flatten(x, 1)), inplace=True)
        return self.fc2(self.dropout(x))


class GoogLeNet(nn.Module):
    def __init__(self, num_classes=1000, aux_logits=True, transform_input=False, init_weights=None, blocks=None,
                 dropout=0.2, dropout_aux=0.7):
        super().__init__()
        conv_block, inception_block, aux_block = blocks or (BasicConv2d, Inception, InceptionAux)
        if init_weights is None:  # torchvision warns that its default will change; flowvision keeps it silently
            init_weights = True
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        pool = lambda k: nn.MaxPool2d(k, stride=2, ceil_mode=True)  # noqa: E731
        self.conv1 = conv_block(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = pool(3)
        self.conv2 = conv_block(64, 64, kernel_size=1)
        self.conv3 = conv_block(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = pool(3)
        self.inception3a = inception_block(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = inception_block(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = pool(3)
        self.inception4a = inception_block(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = inception_block(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = inception_block(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = inception_block(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = inception_block(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = pool(2)
        self.inception5a = inception_block(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = inception_block(832, 384, 192, 384, 48, 128, 128)
        if aux_logits:
            self.aux1 = aux_block(512, num_classes, dropout=dropout_aux)
            self.aux2 = aux_block(528, num_classes, dropout=dropout_aux)
        else:
            self.aux1 = None
            self.aux2 = None
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(1024, num_classes)
        if init_weights:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    nn.init.trunc_normal_(m.weight, mean=0.0, std=0.01, a=-2, b=2)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.ones_(m.weight)
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        if self.transform_input:
            x = transform_input(x)
        x = self.maxpool2(self.conv3(self.conv2(self.maxpool1(self.conv1(x)))))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        x = self.inception4a(x)
        aux_on = self.aux_logits and self.training and self.aux1 is not None
        aux1 = self.aux1(x) if aux_on else None
        x = self.inception4d(self.inception4c(self.inception4b(x)))
        aux2 = self.aux2(x) if aux_on else None
        x = self.maxpool4(self.inception4e(x))
        x = self.inception5b(self.inception5a(x))
        x = self.fc(self.dropout(flow.flatten(self.avgpool(x), 1)))
        return GoogLeNetOutputs(x, aux2, aux1) if aux_on else x


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "googlenet": ("GoogLeNet_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "googlenet-1378be20.pth", 6624904, (15, 15), 224, 256, "bilinear", 69.778, 89.53),
    ]),
}
GoogLeNet_Weights = tv_weights_enums(__name__, _TV_WEIGHTS)["googlenet"]
__all__.append("GoogLeNet_Weights")


def _googlenet(weights, **kwargs):
    if weights is not None:  # torchvision's rules: the checkpoint expects transformed input and has aux heads
        kwargs.setdefault("transform_input", True)
        overwrite_named_param(kwargs, "aux_logits", True)
        overwrite_named_param(kwargs, "init_weights", False)
    return GoogLeNet(**kwargs)


@register_builder(weights=GoogLeNet_Weights)
def googlenet(*, weights=None, progress=True, **kwargs):
    """torchvision's GoogLeNet (``weights``: GoogLeNet_Weights, its name, "DEFAULT" or None).

    With weights, ``transform_input`` defaults to True and the aux heads are dropped after loading unless
    ``aux_logits=True`` (torchvision's rules; the checkpoint's aux heads are untrained).
    """
    keep_aux = "aux_logits" in kwargs  # with weights it must then be True (torchvision's rule)
    loaded = weights is not None or bool(kwargs.get("pretrained"))
    model = build_tv_model("googlenet", weights, progress, kwargs, _googlenet)
    if loaded and not keep_aux:
        model.aux_logits = False
        model.aux1 = None
        model.aux2 = None
    return model
