"""ShuffleNetV2 x0.5 / x1.0 / x1.5 / x2.0 with torchvision's structure and parameter names (``conv1``,
``stage{2,3,4}.N.branch{1,2}.M``, ``conv5``, ``fc``). torchvision-API only."""
from flowvision import backend as flow
from flowvision.backend import nn

from ._api import define_tv_builders, tv_weights_enums

__all__ = ["ShuffleNetV2"]


def channel_shuffle(x, groups):
    b, c, h, w = x.shape
    x = x.reshape(b, groups, c // groups, h, w).transpose(1, 2)
    return x.reshape(b, c, h, w)


def _depthwise(chs, stride):
    return nn.Conv2d(chs, chs, 3, stride, 1, bias=False, groups=chs)


class InvertedResidual(nn.Module):
    """Stride 1: split channels, transform one half (branch2). Stride 2: both branches see all channels."""

    def __init__(self, inp, oup, stride):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if stride == 1 and inp != branch_features << 1:
            raise ValueError(f"Invalid combination of stride {stride}, inp {inp} and oup {oup} values. If stride "
                             f"== 1 then inp should be equal to oup // 2 << 1.")
        if stride > 1:
            self.branch1 = nn.Sequential(
                _depthwise(inp, stride), nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, 1, 1, 0, bias=False), nn.BatchNorm2d(branch_features),
                nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else branch_features, branch_features, 1, 1, 0, bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True),
            _depthwise(branch_features, stride), nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, 1, 1, 0, bias=False), nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = flow.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = flow.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = list(stages_out_channels)
        inp = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, inp, 3, 2, 1, bias=False), nn.BatchNorm2d(inp), nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for i, (repeats, out) in enumerate(zip(stages_repeats, stages_out_channels[1:4])):
            blocks = [inverted_residual(inp, out, 2)] + [inverted_residual(out, out, 1) for _ in range(repeats - 1)]
            setattr(self, f"stage{i + 2}", nn.Sequential(*blocks))
            inp = out
        last = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(inp, last, 1, 1, 0, bias=False), nn.BatchNorm2d(last),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(last, num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))


_CHANNELS = {"x0_5": [24, 48, 96, 192, 1024], "x1_0": [24, 116, 232, 464, 1024],
             "x1_5": [24, 176, 352, 704, 1024], "x2_0": [24, 244, 488, 976, 2048]}


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "shufflenet_v2_x0_5": ("ShuffleNet_V2_X0_5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x0.5-f707e7126e.pth", 1366792, (1, 1), 224, 256, "bilinear", 60.552, 81.746),
    ]),
    "shufflenet_v2_x1_0": ("ShuffleNet_V2_X1_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x1-5666bf0f80.pth", 2278604, (1, 1), 224, 256, "bilinear", 69.362, 88.316),
    ]),
    "shufflenet_v2_x1_5": ("ShuffleNet_V2_X1_5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x1_5-3c479a10.pth", 3503624, (1, 1), 224, 232, "bilinear", 72.996, 91.086),
    ]),
    "shufflenet_v2_x2_0": ("ShuffleNet_V2_X2_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x2_0-8be3c8ee.pth", 7393996, (1, 1), 224, 232, "bilinear", 76.23, 93.006),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS),
                   lambda name, weights, **kw: ShuffleNetV2([4, 8, 4], _CHANNELS[name.split("_")[-2] + "_" +
                                                                                name.split("_")[-1]], **kw))
