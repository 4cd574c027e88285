"""Named key remaps from other projects' parameter names to timm's (referenced by the weights manifest)."""
import re
from collections import OrderedDict
from typing import Any, Dict, Optional

__all__ = ["REMAPS", "get_remap", "apply_remap", "efficientnet_pytorch_to_timm"]

_DS = {"_depthwise_conv": "conv_dw", "_bn1": "bn1", "_project_conv": "conv_pw", "_bn2": "bn2"}
_IR = {"_expand_conv": "conv_pw", "_bn0": "bn1", "_depthwise_conv": "conv_dw", "_bn1": "bn2",
       "_project_conv": "conv_pwl", "_bn2": "bn3"}
_TOP = {"_conv_stem": "conv_stem", "_bn0": "bn1", "_conv_head": "conv_head", "_bn1": "bn2", "_fc": "classifier"}
_BLOCK = re.compile(r"^_blocks\.(\d+)\.(_[a-z_]+\d?)\.(.+)$")


def efficientnet_pytorch_to_timm(state_dict, stage_depths=(1, 2, 2, 3, 3, 4, 1)):
    """lukemelas/EfficientNet-PyTorch names -> timm ``efficientnet``/``tf_efficientnet_lite`` names.

    ``_blocks.<n>.*`` is numbered flat; timm numbers ``blocks.<stage>.<index>``. ``stage_depths``
    are the blocks per stage (the default is EfficientNet-Lite0's / B0's). The first stage's
    blocks have no expansion conv (timm's DepthwiseSeparableConv), the others are inverted
    residuals. Squeeze-excite weights (``_se_reduce``/``_se_expand``) map to ``se.conv_reduce``/
    ``se.conv_expand``.
    """
    flat = []
    for stage, depth in enumerate(stage_depths):
        flat.extend((stage, i) for i in range(depth))
    out = OrderedDict()
    for key, value in state_dict.items():
        m = _BLOCK.match(key)
        if m:
            n, layer, rest = int(m.group(1)), m.group(2), m.group(3)
            if n >= len(flat):
                raise KeyError(f"{key}: block {n} beyond the {len(flat)} blocks of stage_depths {stage_depths}")
            stage, idx = flat[n]
            if layer in ("_se_reduce", "_se_expand"):
                new = "se.conv_reduce" if layer == "_se_reduce" else "se.conv_expand"
            else:
                table = _DS if stage == 0 else _IR
                if layer not in table:
                    raise KeyError(f"{key}: unknown layer {layer!r}")
                new = table[layer]
            out[f"blocks.{stage}.{idx}.{new}.{rest}"] = value
            continue
        head, _, rest = key.partition(".")
        if head not in _TOP:
            raise KeyError(f"{key}: not an EfficientNet-PyTorch parameter name")
        out[f"{_TOP[head]}.{rest}"] = value
    return out


REMAPS = {
    "efficientnet_pytorch_to_timm": efficientnet_pytorch_to_timm,
}


def get_remap(name):
    try:
        return REMAPS[name]
    except KeyError:
        raise KeyError(f"unknown key remap {name!r}; known: {sorted(REMAPS)}") from None


def apply_remap(state_dict: Dict[str, Any], name: Optional[str]) -> Dict[str, Any]:
    """Rename/reshape a checkpoint's keys with the converter the manifest names (``remap``).

    Args:
        state_dict: ``{name: array}`` as read from the file.
        name: a registered converter such as ``"efficientnet_pytorch_to_timm"``; None returns ``state_dict``.

    Returns:
        The state dict under flowvision's (timm's) parameter names.

    Raises:
        KeyError: no converter has that name.
    """
    return state_dict if not name else get_remap(name)(state_dict)
