"""SqueezeNet 1.0 / 1.1 with torchvision's structure and parameter names (``features.N.{squeeze,expand1x1,
expand3x3}``, ``classifier.1`` = the final 1x1 conv). torchvision-API only."""
from flowvision import backend as flow
from flowvision.backend import nn

from ._api import define_tv_builders, tv_weights_enums

__all__ = ["SqueezeNet", "Fire"]


class Fire(nn.Module):
    """1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""

    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return flow.cat([self.expand1x1_activation(self.expand1x1(x)),
                         self.expand3x3_activation(self.expand3x3(x))], 1)


# (stem conv channels, stem kernel, then per stage a list of Fire(squeeze, expand) with in-channels implied);
# max-pools (3x3, stride 2, ceil_mode) sit between the stages
_CFGS = {
    "1_0": (96, 7, [[(16, 64), (16, 64), (32, 128)], [(32, 128), (48, 192), (48, 192), (64, 256)], [(64, 256)]]),
    "1_1": (64, 3, [[(16, 64), (16, 64)], [(32, 128), (32, 128)], [(48, 192), (48, 192), (64, 256), (64, 256)]]),
}


class SqueezeNet(nn.Module):
    def __init__(self, version="1_0", num_classes=1000, dropout=0.5):
        super().__init__()
        if version not in _CFGS:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        self.num_classes = num_classes
        stem, kernel, stages = _CFGS[version]
        layers = [nn.Conv2d(3, stem, kernel_size=kernel, stride=2), nn.ReLU(inplace=True)]
        chs = stem
        for stage in stages:
            layers.append(nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True))
            for squeeze, expand in stage:
                layers.append(Fire(chs, squeeze, expand, expand))
                chs = 2 * expand
        self.features = nn.Sequential(*layers)
        final_conv = nn.Conv2d(512, num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return flow.flatten(self.classifier(self.features(x)), 1)


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "squeezenet1_0": ("SqueezeNet1_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "squeezenet1_0-b66bff10.pth", 1248424, (21, 21), 224, 256, "bilinear", 58.092, 80.42),
    ]),
    "squeezenet1_1": ("SqueezeNet1_1_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "squeezenet1_1-b8a52dc0.pth", 1235496, (17, 17), 224, 256, "bilinear", 58.178, 80.624),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS),
                   lambda name, weights, **kw: SqueezeNet(name[len("squeezenet"):], **kw))
