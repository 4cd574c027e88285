"""FeaturePyramidNetwork with torchvision's structure and parameter names (inner_blocks.i.0, layer_blocks.i.0)."""
from collections import OrderedDict
from typing import Callable, List, Optional

import flowvision.backend.nn.functional as F
from flowvision.backend import nn

from .misc import Conv2dNormActivation

__all__ = ["FeaturePyramidNetwork", "ExtraFPNBlock", "LastLevelMaxPool", "LastLevelP6P7"]


class ExtraFPNBlock(nn.Module):
    """Base class of the blocks run on the FPN output: ``forward(results, x, names) -> (results, names)``."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, results, x, names):
        raise NotImplementedError


class FeaturePyramidNetwork(nn.Module):
    """A feature pyramid (FPN, Lin et al. 2017) over backbone feature maps, with torchvision's structure.

    Args:
        in_channels_list: channels of each input level, from the highest resolution down.
        out_channels: channels of every output level.
        extra_blocks: extra levels appended on top (e.g. :class:`LastLevelMaxPool`).
        norm_layer: normalisation after each convolution (none by default).

    The forward pass takes an ordered dict ``{name: feature map}`` and returns one with the same keys.
    """

    _version = 2

    def __init__(self, in_channels_list: List[int], out_channels: int, extra_blocks: Optional[nn.Module] = None,
                 norm_layer: Optional[Callable[..., nn.Module]] = None) -> None:
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(Conv2dNormActivation(in_channels, out_channels, kernel_size=1, padding=0,
                                                          norm_layer=norm_layer, activation_layer=None))
            self.layer_blocks.append(Conv2dNormActivation(out_channels, out_channels, kernel_size=3,
                                                          norm_layer=norm_layer, activation_layer=None))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not {type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:  # old checkpoints: inner_blocks.i.weight -> inner_blocks.i.0.weight
            num_blocks = len(self.inner_blocks)
            for block in ["inner_blocks", "layer_blocks"]:
                for i in range(num_blocks):
                    for t in ["weight", "bias"]:
                        old = f"{prefix}{block}.{i}.{t}"
                        if old in state_dict:
                            state_dict[f"{prefix}{block}.{i}.0.{t}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def get_result_from_inner_blocks(self, x, idx):
        return self.inner_blocks[idx](x)

    def get_result_from_layer_blocks(self, x, idx):
        return self.layer_blocks[idx](x)

    def forward(self, x):
        names = list(x.keys())
        x = list(x.values())
        if len(x) != len(self.inner_blocks):
            raise ValueError(f"FeaturePyramidNetwork expects {len(self.inner_blocks)} feature maps, got {len(x)}")
        last_inner = self.get_result_from_inner_blocks(x[-1], -1)
        results = [self.get_result_from_layer_blocks(last_inner, -1)]
        for idx in range(len(x) - 2, -1, -1):
            inner_lateral = self.get_result_from_inner_blocks(x[idx], idx)
            feat_shape = inner_lateral.shape[-2:]
            inner_top_down = F.interpolate(last_inner, size=tuple(feat_shape), mode="nearest")
            last_inner = inner_lateral + inner_top_down
            results.insert(0, self.get_result_from_layer_blocks(last_inner, idx))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, x, names)
        return OrderedDict([(k, v) for k, v in zip(names, results)])


class LastLevelMaxPool(ExtraFPNBlock):
    """Adds a 'pool' level: max_pool2d(kernel 1, stride 2) of the last FPN level."""

    def forward(self, x, y, names):
        names.append("pool")
        x.append(F.max_pool2d(x[-1], 1, 2, 0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """RetinaNet's P6 and P7 (from P5 when in_channels == out_channels, else from C5).

    Args:
        in_channels: channels of the level P6 is computed from.
        out_channels: channels of P6 and P7.
    """

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in [self.p6, self.p7]:
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        p5, c5 = p[-1], c[-1]
        x = p5 if self.use_P5 else c5
        p6 = self.p6(x)
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names
