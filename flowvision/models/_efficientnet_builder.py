"""Block-string architecture definitions and the stage builder shared by EfficientNet / MobileNet families.

A stage is a list of block strings such as ``'ir_r2_k3_s2_e6_c24_se0.25'``: block type (``ds`` depthwise
separable, ``ir`` inverted residual, ``cn`` conv-bn-act), ``r`` repeats, ``k`` kernel, ``s`` stride of the
first repeat, ``e`` expansion, ``c`` output channels, ``se`` squeeze-excite ratio, ``noskip``/``skip``, and an
activation override ``nre`` (relu), ``nr6`` (relu6), ``nhs`` (hard-swish), ``nsw`` (swish), ``nmi`` (mish).
"""
import math
import re
from functools import partial

from flowvision.backend import nn
from flowvision.layers import get_act_layer, make_divisible

from ._efficientnet_blocks import ConvBnAct, DepthwiseSeparableConv, InvertedResidual

__all__ = ["round_channels", "decode_arch_def", "build_stages"]

_BLOCK_RE = re.compile(r"^([a-z]+)(\d*\.?\d*)$")
_ACT_OPTS = {"nre": "relu", "nr6": "relu6", "nhs": "hard_swish", "nsw": "swish", "nmi": "mish"}


def round_channels(channels, multiplier=1.0, divisor=8, channel_min=None, round_limit=0.9):
    if not multiplier:
        return channels
    return make_divisible(channels * multiplier, divisor, channel_min, round_limit=round_limit)


def _decode_block_str(block_str):
    """``'ir_r2_k3_s2_e6_c24_se0.25'`` -> (repeats, dict of block args)."""
    ops = block_str.split("_")
    block_type, opts = ops[0], {}
    skip, act = None, None
    for op in ops[1:]:
        if op == "noskip":
            skip = False
        elif op == "skip":
            skip = True
        elif op in _ACT_OPTS:
            act = _ACT_OPTS[op]
        else:
            m = _BLOCK_RE.match(op)
            if not m:
                raise ValueError(f"bad block option {op!r} in {block_str!r}")
            opts[m.group(1)] = m.group(2)
    if block_type not in ("ds", "ir", "cn"):
        raise ValueError(f"unsupported block type {block_type!r} in {block_str!r}")
    args = dict(block_type=block_type, dw_kernel_size=int(opts["k"]), stride=int(opts["s"]),
                out_chs=int(opts["c"]), se_ratio=float(opts["se"]) if "se" in opts else None,
                noskip=skip is False, skip=skip is True, exp_ratio=float(opts.get("e", 1)), act_layer=act)
    return int(opts["r"]), args


def _scale_stage_depth(stage, depth_multiplier):
    """Scale a stage's repeats (ceil of the total), spread over its block strings from the last one back."""
    repeats = [r for r, _ in stage]
    total = sum(repeats)
    scaled_total = int(math.ceil(total * depth_multiplier))
    scaled = []
    for r in repeats[::-1]:
        rs = max(1, round(r / total * scaled_total))
        scaled.append(rs)
        total -= r
        scaled_total -= rs
    out = []
    for (_, args), n in zip(stage, scaled[::-1]):
        out.extend(dict(args) for _ in range(n))
    return out


def decode_arch_def(arch_def, depth_multiplier=1.0, fix_first_last=False):
    """List of stages (lists of block-arg dicts); depths scaled by ``depth_multiplier`` (ceil)."""
    stages = []
    for stage_idx, stage_strs in enumerate(arch_def):
        stage = [_decode_block_str(s) for s in stage_strs]
        fixed = fix_first_last and stage_idx in (0, len(arch_def) - 1)
        stages.append(_scale_stage_depth(stage, 1.0 if fixed else depth_multiplier))
    return stages


def build_stages(block_args, in_chs, round_chs_fn=round_channels, pad_type="", act_layer=nn.ReLU,
                 norm_layer=None, se_layer=None, se_from_exp=False, drop_path_rate=0.0, reduction=2):
    """(nn.Sequential of stages, feature_info, out channels) for decoded ``block_args``.

    ``se_from_exp=False`` (EfficientNet) sizes SE from the block input (ratio / expansion);
    ``True`` (MobileNetV3) from the expanded width.
    """
    total = sum(len(s) for s in block_args)
    idx = 0
    stages, feature_info = [], []
    for stage_idx, stage in enumerate(block_args):
        blocks = []
        for i, ba in enumerate(stage):
            out_chs = round_chs_fn(ba["out_chs"])
            stride = ba["stride"] if i == 0 else 1
            act = get_act_layer(ba["act_layer"]) if ba["act_layer"] else act_layer
            se = None
            if ba["se_ratio"] is not None and se_layer is not None:
                ratio = ba["se_ratio"] if se_from_exp else ba["se_ratio"] / ba["exp_ratio"]
                se = partial(se_layer, rd_ratio=ratio)
            dpr = drop_path_rate * idx / total
            if ba["block_type"] == "cn":
                blocks.append(ConvBnAct(in_chs, out_chs, ba["dw_kernel_size"], stride=stride, pad_type=pad_type,
                                        skip=ba["skip"], act_layer=act, norm_layer=norm_layer, drop_path_rate=dpr))
            else:
                common = dict(dw_kernel_size=ba["dw_kernel_size"], stride=stride, pad_type=pad_type,
                              noskip=ba["noskip"], act_layer=act, norm_layer=norm_layer, se_layer=se,
                              drop_path_rate=dpr)
                if ba["block_type"] == "ds":
                    blocks.append(DepthwiseSeparableConv(in_chs, out_chs, **common))
                else:
                    blocks.append(InvertedResidual(in_chs, out_chs, exp_ratio=ba["exp_ratio"], **common))
            in_chs = out_chs
            idx += 1
        reduction *= stage[0]["stride"]
        stages.append(nn.Sequential(*blocks))
        if stage_idx == len(block_args) - 1 or block_args[stage_idx + 1][0]["stride"] > 1:
            feature_info.append(dict(num_chs=in_chs, reduction=reduction, module=f"blocks.{stage_idx}"))
    return nn.Sequential(*stages), feature_info, in_chs


def init_weights_goog(model):
    """The TF/Google init shared by EfficientNet and MobileNet: He-normal on fan-out for convs, uniform for Linear."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
            nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            bound = 1.0 / math.sqrt(m.weight.shape[0])
            nn.init.uniform_(m.weight, -bound, bound)
            nn.init.zeros_(m.bias)
