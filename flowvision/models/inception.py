"""Inception v3 with torchvision's structure and parameter names (``Conv2d_1a_3x3`` ... ``Mixed_7c``,
``AuxLogits``, ``fc``). torchvision-API only; inputs >= 75 px (>= 299 px for the aux head in training).

In training mode with ``aux_logits`` the forward returns ``InceptionOutputs(logits, aux_logits)`` like
torchvision's eager mode; in eval mode the logits tensor.
"""
from collections import namedtuple

from flowvision import backend as flow
from flowvision.backend import nn
from flowvision.backend.nn import functional as F

from ._api import define_tv_builders, overwrite_named_param, tv_weights_enums
from .googlenet import BasicConv2d, transform_input

__all__ = ["Inception3", "InceptionOutputs"]

InceptionOutputs = namedtuple("InceptionOutputs", ["logits", "aux_logits"])


def _avg3(x):
    return F.avg_pool2d(x, kernel_size=3, stride=1, padding=1)


class InceptionA(nn.Module):
    def __init__(self, in_channels, pool_features, conv_block=None):
        super().__init__()
        c = conv_block or BasicConv2d
        self.branch1x1 = c(in_channels, 64, kernel_size=1)
        self.branch5x5_1 = c(in_channels, 48, kernel_size=1)
        self.branch5x5_2 = c(48, 64, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = c(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = c(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = c(96, 96, kernel_size=3, padding=1)
        self.branch_pool = c(in_channels, pool_features, kernel_size=1)

    def forward(self, x):
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return flow.cat([self.branch1x1(x), b5, b3, self.branch_pool(_avg3(x))], 1)


class InceptionB(nn.Module):
    def __init__(self, in_channels, conv_block=None):
        super().__init__()
        c = conv_block or BasicConv2d
        self.branch3x3 = c(in_channels, 384, kernel_size=3, stride=2)
        self.branch3x3dbl_1 = c(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = c(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = c(96, 96, kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return flow.cat([self.branch3x3(x), b3, F.max_pool2d(x, kernel_size=3, stride=2)], 1)


class InceptionC(nn.Module):
    def __init__(self, in_channels, channels_7x7, conv_block=None):
        super().__init__()
        c, c7 = conv_block or BasicConv2d, channels_7x7
        self.branch1x1 = c(in_channels, 192, kernel_size=1)
        self.branch7x7_1 = c(in_channels, c7, kernel_size=1)
        self.branch7x7_2 = c(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = c(c7, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = c(in_channels, c7, kernel_size=1)
        self.branch7x7dbl_2 = c(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = c(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = c(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = c(c7, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch_pool = c(in_channels, 192, kernel_size=1)

    def forward(self, x):
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = self.branch7x7dbl_1(x)
        bd = self.branch7x7dbl_5(self.branch7x7dbl_4(self.branch7x7dbl_3(self.branch7x7dbl_2(bd))))
        return flow.cat([self.branch1x1(x), b7, bd, self.branch_pool(_avg3(x))], 1)


class InceptionD(nn.Module):
    def __init__(self, in_channels, conv_block=None):
        super().__init__()
        c = conv_block or BasicConv2d
        self.branch3x3_1 = c(in_channels, 192, kernel_size=1)
        self.branch3x3_2 = c(192, 320, kernel_size=3, stride=2)
        self.branch7x7x3_1 = c(in_channels, 192, kernel_size=1)
        self.branch7x7x3_2 = c(192, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = c(192, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = c(192, 192, kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        return flow.cat([b3, b7, F.max_pool2d(x, kernel_size=3, stride=2)], 1)


class InceptionE(nn.Module):
    def __init__(self, in_channels, conv_block=None):
        super().__init__()
        c = conv_block or BasicConv2d
        self.branch1x1 = c(in_channels, 320, kernel_size=1)
        self.branch3x3_1 = c(in_channels, 384, kernel_size=1)
        self.branch3x3_2a = c(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = c(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = c(in_channels, 448, kernel_size=1)
        self.branch3x3dbl_2 = c(448, 384, kernel_size=3, padding=1)
        self.branch3x3dbl_3a = c(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = c(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = c(in_channels, 192, kernel_size=1)

    def forward(self, x):
        b3 = self.branch3x3_1(x)
        b3 = flow.cat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], 1)
        bd = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = flow.cat([self.branch3x3dbl_3a(bd), self.branch3x3dbl_3b(bd)], 1)
        return flow.cat([self.branch1x1(x), b3, bd, self.branch_pool(_avg3(x))], 1)


class InceptionAux(nn.Module):
    def __init__(self, in_channels, num_classes, conv_block=None):
        super().__init__()
        c = conv_block or BasicConv2d
        self.conv0 = c(in_channels, 128, kernel_size=1)
        self.conv1 = c(128, 768, kernel_size=5)
        self.conv1.stddev = 0.01  # init std, read by Inception3's init as torchvision's
        self.fc = nn.Linear(768, num_classes)
        self.fc.stddev = 0.001

    def forward(self, x):
        x = self.conv1(self.conv0(F.avg_pool2d(x, kernel_size=5, stride=3)))
        return self.fc(flow.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


class Inception3(nn.Module):
    def __init__(self, num_classes=1000, aux_logits=True, transform_input=False, inception_blocks=None,
                 init_weights=None, dropout=0.5):
        super().__init__()
        blocks = inception_blocks or (BasicConv2d, InceptionA, InceptionB, InceptionC, InceptionD, InceptionE,
                                      InceptionAux)
        if len(blocks) != 7:
            raise ValueError(f"length of inception_blocks should be 7 instead of {len(blocks)}")
        conv, block_a, block_b, block_c, block_d, block_e, block_aux = blocks
        if init_weights is None:  # torchvision warns that its default will change; flowvision keeps it silently
            init_weights = True
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.Conv2d_1a_3x3 = conv(3, 32, kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = conv(32, 32, kernel_size=3)
        self.Conv2d_2b_3x3 = conv(32, 64, kernel_size=3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = conv(64, 80, kernel_size=1)
        self.Conv2d_4a_3x3 = conv(80, 192, kernel_size=3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = block_a(192, pool_features=32)
        self.Mixed_5c = block_a(256, pool_features=64)
        self.Mixed_5d = block_a(288, pool_features=64)
        self.Mixed_6a = block_b(288)
        self.Mixed_6b = block_c(768, channels_7x7=128)
        self.Mixed_6c = block_c(768, channels_7x7=160)
        self.Mixed_6d = block_c(768, channels_7x7=160)
        self.Mixed_6e = block_c(768, channels_7x7=192)
        self.AuxLogits = block_aux(768, num_classes) if aux_logits else None
        self.Mixed_7a = block_d(768)
        self.Mixed_7b = block_e(1280)
        self.Mixed_7c = block_e(2048)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(2048, num_classes)
        if init_weights:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    std = float(getattr(m, "stddev", 0.1))
                    nn.init.trunc_normal_(m.weight, mean=0.0, std=std, a=-2, b=2)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.ones_(m.weight)
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        if x.ndim != 4 or min(x.shape[-2:]) < 75:
            raise ValueError(f"Inception v3 expects (N, 3, H, W) inputs with H, W >= 75, got {tuple(x.shape)}")
        if self.transform_input:
            x = transform_input(x)
        x = self.maxpool1(self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x))))
        x = self.maxpool2(self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x)))
        x = self.Mixed_6a(self.Mixed_5d(self.Mixed_5c(self.Mixed_5b(x))))
        x = self.Mixed_6e(self.Mixed_6d(self.Mixed_6c(self.Mixed_6b(x))))
        aux_on = self.aux_logits and self.training and self.AuxLogits is not None
        aux = self.AuxLogits(x) if aux_on else None
        x = self.Mixed_7c(self.Mixed_7b(self.Mixed_7a(x)))
        x = self.fc(flow.flatten(self.dropout(self.avgpool(x)), 1))
        return InceptionOutputs(x, aux) if aux_on else x


def _inception_v3(name, weights, **kwargs):
    """With weights, ``transform_input`` defaults to True and ``aux_logits`` must be True (torchvision's
    rules: the checkpoint has the aux head)."""
    if weights is not None:
        kwargs.setdefault("transform_input", True)
        overwrite_named_param(kwargs, "aux_logits", True)
        overwrite_named_param(kwargs, "init_weights", False)
    return Inception3(**kwargs)


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "inception_v3": ("Inception_V3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "inception_v3_google-0cc3c7bd.pth", 27161264, (75, 75), 299, 342, "bilinear", 77.294, 93.45),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _inception_v3)
