"""torchvision checkpoints -> flowvision's timm-named models.

The torchvision builders (``resnet50(weights=...)``, ``convnext_tiny``, ``vit_b_16`` ...) load torchvision's
checkpoints as they are: they return modules with torchvision's parameter names. This module is for the other
direction a user may want: a torchvision checkpoint (a ``*_Weights`` member, a URL, a local ``.pth`` or a state
dict) loaded into the *timm-named* model of the same architecture, e.g. torchvision's ConvNeXt-T weights into
``create_model("convnext_tiny")`` to get ``forward_features``/``features_only``/``reset_classifier``.

``TV_TO_TIMM`` names that model for every torchvision builder with a timm counterpart;
``convert_torchvision_state_dict(state_dict, model, tv_name)`` renames (and reshapes) the keys;
``load_torchvision_checkpoint(model, checkpoint, tv_name)`` reads and loads strictly;
``create_model_from_torchvision(tv_name, weights=...)`` does both for the mapped model.

Batch-norm eps: torchvision's MobileNetV3 and EfficientNet-B5..B7 normalise with eps 1e-3, timm's models with
1e-5; the converter moves the difference into ``running_var`` (var + 1e-3 - 1e-5), which is exact.
"""
import os
import re

import numpy as np

__all__ = ["TV_TO_TIMM", "convert_torchvision_state_dict", "load_torchvision_checkpoint",
           "create_model_from_torchvision"]

_SAME = ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x8d",
         "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2", "densenet121", "densenet161", "densenet169",
         "densenet201", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
         "convnext_tiny", "convnext_small", "convnext_base", "convnext_large", "efficientnet_b0", "efficientnet_b1",
         "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_b5", "efficientnet_b6",
         "efficientnet_b7")
TV_TO_TIMM = dict({n: n for n in _SAME}, **{
    "mobilenet_v2": "mobilenetv2_100", "mobilenet_v3_large": "mobilenetv3_large_100",
    "mobilenet_v3_small": "mobilenetv3_small_100",
    "vit_b_16": "vit_base_patch16_224", "vit_b_32": "vit_base_patch32_224", "vit_l_16": "vit_large_patch16_224",
    "vit_l_32": "vit_large_patch32_224",
    "swin_t": "swin_tiny_patch4_window7_224", "swin_s": "swin_small_patch4_window7_224",
    "swin_b": "swin_base_patch4_window7_224",
    # timm's "_tv" RegNets carry torchvision's channel rounding where it differs from the paper's
    "regnet_x_400mf": "regnetx_004_tv", "regnet_x_800mf": "regnetx_008", "regnet_x_1_6gf": "regnetx_016",
    "regnet_x_3_2gf": "regnetx_032", "regnet_x_8gf": "regnetx_080", "regnet_x_16gf": "regnetx_160",
    "regnet_x_32gf": "regnetx_320", "regnet_y_400mf": "regnety_004", "regnet_y_800mf": "regnety_008_tv",
    "regnet_y_1_6gf": "regnety_016", "regnet_y_3_2gf": "regnety_032", "regnet_y_8gf": "regnety_080_tv",
    "regnet_y_16gf": "regnety_160", "regnet_y_32gf": "regnety_320", "regnet_y_128gf": "regnety_1280",
})

# torchvision builders whose BatchNorm eps is 1e-3 (timm's counterparts use 1e-5)
_TV_BN_EPS = {"mobilenet_v3_large": 1e-3, "mobilenet_v3_small": 1e-3, "efficientnet_b5": 1e-3,
              "efficientnet_b6": 1e-3, "efficientnet_b7": 1e-3}


def _to_numpy(v):
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "detach"):
        v = v.detach()
    if hasattr(v, "cpu"):
        v = v.cpu()
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def _convnext(sd, model):
    out = {}
    for k, v in sd.items():
        m = re.match(r"features\.(\d+)\.(.*)", k)
        if m:
            idx, rest = int(m.group(1)), m.group(2)
            if idx == 0:  # stem: conv, LayerNorm2d
                k = "stem." + rest
            elif idx % 2 == 0:  # downsample between stages: LayerNorm2d, conv
                k = f"stages.{idx // 2}.downsample.{rest}"
            else:
                j, rest = rest.split(".", 1)
                rest = {"block.0.weight": "conv_dw.weight", "block.0.bias": "conv_dw.bias",
                        "block.2.weight": "norm.weight", "block.2.bias": "norm.bias",
                        "block.3.weight": "mlp.fc1.weight", "block.3.bias": "mlp.fc1.bias",
                        "block.5.weight": "mlp.fc2.weight", "block.5.bias": "mlp.fc2.bias",
                        "layer_scale": "gamma"}[rest]
                k = f"stages.{idx // 2}.blocks.{j}.{rest}"
                if rest == "gamma":
                    v = v.reshape(-1)  # (C, 1, 1) -> (C,)
        else:
            k = k.replace("classifier.0.", "head.norm.").replace("classifier.2.", "head.fc.")
        out[k] = v
    return out


def _vit(sd, model):
    out = {}
    for k, v in sd.items():
        k = k.replace("conv_proj.", "patch_embed.proj.").replace("class_token", "cls_token")
        k = k.replace("encoder.pos_embedding", "pos_embed").replace("encoder.ln.", "norm.")
        k = k.replace("heads.head.", "head.")
        m = re.match(r"encoder\.layers\.encoder_layer_(\d+)\.(.*)", k)
        if m:
            rest = m.group(2)
            for a, b in (("ln_1.", "norm1."), ("ln_2.", "norm2."), ("self_attention.in_proj_weight", "attn.qkv.weight"),
                         ("self_attention.in_proj_bias", "attn.qkv.bias"), ("self_attention.out_proj.", "attn.proj."),
                         ("mlp.0.", "mlp.fc1."), ("mlp.3.", "mlp.fc2.")):
                rest = rest.replace(a, b)
            k = f"blocks.{m.group(1)}.{rest}"
        if k.startswith("heads.pre_logits"):
            raise ValueError("torchvision ViT checkpoints with a representation layer have no timm counterpart")
        out[k] = v
    return out


def _swin(sd, model):
    target = model.state_dict()
    out = {}
    for k, v in sd.items():
        m = re.match(r"features\.(\d+)\.(.*)", k)
        if m:
            idx, rest = int(m.group(1)), m.group(2)
            if idx == 0:  # patch embed: conv, permute, LayerNorm
                k = "patch_embed." + rest.replace("0.", "proj.", 1).replace("2.", "norm.", 1)
            elif idx % 2 == 0:  # patch merging after stage idx/2 - 1 = timm's downsample at the start of stage idx/2
                k = f"layers.{idx // 2}.downsample.{rest}"
            else:
                j, rest = rest.split(".", 1)
                rest = rest.replace("mlp.0.", "mlp.fc1.").replace("mlp.3.", "mlp.fc2.")
                k = f"layers.{idx // 2}.blocks.{j}.{rest}"
        else:
            k = k.replace("head.", "head.fc.")
        if k in target or not k.endswith("relative_position_index"):  # index buffers are rebuilt by the model
            out[k] = v
    return out


def _by_position(sd, model):
    """MobileNetV2/V3 and EfficientNet: torchvision's and timm's state dicts list the same tensors in the same
    order (stem, each block's convs/BNs/SE in execution order, head), only named differently."""
    target = model.state_dict()
    src, dst = list(sd.items()), list(target.items())
    if len(src) != len(dst):
        raise ValueError(f"{type(model).__name__}: {len(src)} torchvision tensors for {len(dst)} in the model")
    out = {}
    for (ks, v), (kd, t) in zip(src, dst):
        shape = tuple(t.shape)
        if ks.rsplit(".", 1)[-1] != kd.rsplit(".", 1)[-1] or int(np.prod(v.shape)) != int(np.prod(shape)):
            raise ValueError(f"torchvision {ks} {tuple(v.shape)} does not correspond to {kd} {shape}")
        out[kd] = v.reshape(shape)  # the head Linear (O, I) -> timm's 1x1 conv_head (O, I, 1, 1)
    return out


def _family_filter(model):
    import importlib
    family = importlib.import_module(type(model).__module__)
    fn = getattr(family, "checkpoint_filter_fn", None)
    return (lambda sd, m: fn(sd, m)) if fn is not None else (lambda sd, m: sd)


def convert_torchvision_state_dict(state_dict, model, tv_name):
    """torchvision ``tv_name``'s state dict -> ``{timm key: numpy array}`` for ``model`` (a timm-named model
    of the same architecture, ``create_model(TV_TO_TIMM[tv_name])``)."""
    if tv_name not in TV_TO_TIMM:
        raise ValueError(f"no timm-named counterpart for torchvision's {tv_name!r}; its builder "
                         f"(flowvision.models.{tv_name}) loads torchvision's checkpoints directly")
    sd = {k: _to_numpy(v) for k, v in state_dict.items()}
    if tv_name.startswith("convnext"):
        out = _convnext(sd, model)
    elif tv_name.startswith("vit_"):
        out = _vit(sd, model)
    elif tv_name.startswith("swin_"):
        out = _swin(sd, model)
    elif tv_name.startswith(("mobilenet", "efficientnet")):
        out = _by_position(sd, model)
    else:  # ResNet family: same names; DenseNet / VGG / RegNet: the families' own torchvision-aware filters
        out = _family_filter(model)(sd, model)
    eps = _TV_BN_EPS.get(tv_name)
    if eps is not None:
        bn_eps = {name + ".running_var": m.eps for name, m in model.named_modules() if hasattr(m, "running_var")}
        out = {k: (v + np.float32(eps - bn_eps[k]) if k in bn_eps else v) for k, v in out.items()}
    return out


def load_torchvision_checkpoint(model, checkpoint, tv_name, strict=True, progress=True):
    """Load a torchvision checkpoint into a timm-named model. ``checkpoint``: a ``*_Weights`` member (or its
    name, e.g. ``"DEFAULT"``), a URL, a local file or a state dict."""
    from flowvision import hub
    if isinstance(checkpoint, dict):
        sd = checkpoint
    else:
        from ._api import get_model_weights
        if isinstance(checkpoint, str) and ("://" in checkpoint or os.path.exists(checkpoint)):
            url = checkpoint
        else:
            url = get_model_weights(tv_name).verify(checkpoint).url
        sd = hub.load_state_dict_from_url(url, progress=progress, check_hash=True, as_numpy=True)
    out = convert_torchvision_state_dict(sd, model, tv_name)
    return model.load_state_dict(hub.to_backend({k: np.ascontiguousarray(v) for k, v in out.items()}),
                                 strict=strict)


def create_model_from_torchvision(tv_name, weights="DEFAULT", **kwargs):
    """``create_model(TV_TO_TIMM[tv_name], **kwargs)`` with torchvision's ``weights`` (a member, its name, a
    URL, a file or a state dict) loaded; the timm model's contract (features_only aside) comes with it."""
    from ._factory import create_model
    if tv_name not in TV_TO_TIMM:
        raise ValueError(f"no timm-named counterpart for torchvision's {tv_name!r}")
    model = create_model(TV_TO_TIMM[tv_name], **kwargs)
    load_torchvision_checkpoint(model, weights, tv_name)
    return model
