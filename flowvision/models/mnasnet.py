"""MNASNet 0.5 / 0.75 / 1.0 / 1.3 with torchvision's structure and parameter names (``layers.N``,
``classifier.1``). torchvision-API only.

torchvision's 0.5 and 1.0 checkpoints predate its v2 stem (stem widths scaled by alpha): for alpha != 1 a
checkpoint with the unscaled 32/16-channel stem is recognised by its first conv's shape and the model switches
to that stem before loading (torchvision does the same from the checkpoint's version metadata).
"""
from functools import partial

from flowvision.backend import nn

from ._api import define_tv_builders, tv_weights_enums

__all__ = ["MNASNet"]

_BN_MOMENTUM = 1 - 0.9997  # TensorFlow's decay 0.9997 in torch's convention


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in (3, 5):
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        bn = partial(nn.BatchNorm2d, momentum=bn_momentum)
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid, 1, bias=False), bn(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, mid, kernel_size, padding=kernel_size // 2, stride=stride, groups=mid, bias=False),
            bn(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, out_ch, 1, bias=False), bn(out_ch))

    def forward(self, x):
        return self.layers(x) + x if self.apply_residual else self.layers(x)


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    blocks = [_InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, bn_momentum)]
    blocks += [_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor, bn_momentum)
               for _ in range(1, repeats)]
    return nn.Sequential(*blocks)


def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    """Nearest multiple of ``divisor`` (at least ``divisor``), rounded up when rounding lost > 10 %."""
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha):
    return [_round_to_multiple_of(d * alpha, 8) for d in (32, 16, 24, 40, 80, 96, 192, 320)]


def _stem(c0, c1, c2, bn_momentum):
    """The 9 leading entries of ``layers``: conv/bn/relu, depthwise conv/bn/relu, 1x1 conv/bn, first stack."""
    bn = partial(nn.BatchNorm2d, momentum=bn_momentum)
    return [nn.Conv2d(3, c0, 3, padding=1, stride=2, bias=False), bn(c0), nn.ReLU(inplace=True),
            nn.Conv2d(c0, c0, 3, padding=1, stride=1, groups=c0, bias=False), bn(c0), nn.ReLU(inplace=True),
            nn.Conv2d(c0, c1, 1, padding=0, stride=1, bias=False), bn(c1),
            _stack(c1, c2, 3, 2, 3, 3, bn_momentum)]


class MNASNet(nn.Module):
    def __init__(self, alpha, num_classes=1000, dropout=0.2):
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f"alpha should be greater than 0.0 instead of {alpha}")
        self.alpha = alpha
        self.num_classes = num_classes
        d = _get_depths(alpha)
        m = _BN_MOMENTUM
        layers = _stem(d[0], d[1], d[2], m) + [
            _stack(d[2], d[3], 5, 2, 3, 3, m), _stack(d[3], d[4], 5, 2, 6, 3, m), _stack(d[4], d[5], 3, 1, 6, 2, m),
            _stack(d[5], d[6], 5, 2, 6, 4, m), _stack(d[6], d[7], 3, 1, 6, 1, m),
            nn.Conv2d(d[7], 1280, 1, padding=0, stride=1, bias=False), nn.BatchNorm2d(1280, momentum=m),
            nn.ReLU(inplace=True)]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, num_classes))
        for mod in self.modules():
            if isinstance(mod, nn.Conv2d):
                nn.init.kaiming_normal_(mod.weight, mode="fan_out", nonlinearity="relu")
                if mod.bias is not None:
                    nn.init.zeros_(mod.bias)
            elif isinstance(mod, nn.BatchNorm2d):
                nn.init.ones_(mod.weight)
                nn.init.zeros_(mod.bias)
            elif isinstance(mod, nn.Linear):
                nn.init.kaiming_uniform_(mod.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(mod.bias)

    def use_v1_stem(self):
        """Switch to the original stem (32 -> 16 channels whatever alpha), as in torchvision's old checkpoints."""
        d = _get_depths(self.alpha)
        for i, layer in enumerate(_stem(32, 16, d[2], _BN_MOMENTUM)):
            self.layers[i] = layer

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        first = state_dict.get(prefix + "layers.0.weight")
        if self.alpha != 1.0 and first is not None and tuple(first.shape)[0] == 32 \
                and self.layers[0].out_channels != 32:
            self.use_v1_stem()
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))


_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "mnasnet0_5": ("MNASNet0_5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet0.5_top1_67.823-3ffadce67e.pth", 2218512, (1, 1), 224, 256, "bilinear", 67.734, 87.49),
    ]),
    "mnasnet0_75": ("MNASNet0_75_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet0_75-7090bc5f.pth", 3170208, (1, 1), 224, 232, "bilinear", 71.18, 90.496),
    ]),
    "mnasnet1_0": ("MNASNet1_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet1.0_top1_73.512-f206786ef8.pth", 4383312, (1, 1), 224, 256, "bilinear", 73.456, 91.51),
    ]),
    "mnasnet1_3": ("MNASNet1_3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet1_3-a4c69d6f.pth", 6282256, (1, 1), 224, 232, "bilinear", 76.506, 93.522),
    ]),
}

define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS),
                   lambda name, weights, **kw: MNASNet(float(name[len("mnasnet"):].replace("_", ".")), **kw))
