"""Pieces shared by the torchvision-style segmentation models: IntermediateLayerGetter, the simple
segmentation wrapper, the dilated ResNet backbone and the keyword helpers of torchvision's builders."""
from collections import OrderedDict

import flowvision.backend.nn.functional as F
from flowvision.backend import nn

__all__ = ["IntermediateLayerGetter", "_SimpleSegmentationModel", "_ovewrite_value_param", "dilated_resnet"]


class IntermediateLayerGetter(nn.ModuleDict):
    """Keeps ``model``'s direct children up to the last one named in ``return_layers`` and returns an OrderedDict
    ``{return_layers[name]: output}``. Children keep their names, so the model's state_dict keys are unchanged."""

    def __init__(self, model, return_layers):
        if not set(return_layers).issubset([name for name, _ in model.named_children()]):
            raise ValueError(f"return_layers {sorted(return_layers)} are not present in the model "
                             f"(children: {[n for n, _ in model.named_children()]})")
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class _SimpleSegmentationModel(nn.Module):
    __constants__ = ["aux_classifier"]

    def __init__(self, backbone, classifier, aux_classifier=None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        if x.ndim != 4:
            raise ValueError(f"expected a normalised (B, C, H, W) batch, got shape {list(x.shape)}")
        if not x.is_floating_point():
            raise TypeError(f"expected a floating-point batch, got {x.dtype} (convert and normalise the images first)")
        input_shape = tuple(x.shape[-2:])
        features = self.backbone(x)
        result = OrderedDict()
        x = self.classifier(features["out"])
        result["out"] = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        if self.aux_classifier is not None:
            x = self.aux_classifier(features["aux"])
            result["aux"] = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        return result


def _ovewrite_value_param(param, actual, expected):
    """torchvision's rule: a value fixed by the weights may be passed only if it is equal."""
    if actual is not None and actual != expected:
        raise ValueError(f"The parameter '{param}' expected value {expected} but got {actual} instead.")
    return expected


def _set_dilation(conv, stride, dilation):
    conv.stride = (stride, stride)
    conv.dilation = (dilation, dilation)
    conv.padding = (dilation * (conv.kernel_size[0] - 1) // 2, dilation * (conv.kernel_size[1] - 1) // 2)


def dilated_resnet(depth, replace_stride_with_dilation=(False, True, True)):
    """flowvision's ResNet (torchvision parameter names) with torchvision's ``replace_stride_with_dilation``:
    a stage that is dilated keeps stride 1; its first block uses the previous dilation, the others the new one."""
    from ..resnet import Bottleneck, ResNet
    layers = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}[depth]
    model = ResNet(block=Bottleneck, layers=layers)
    if len(replace_stride_with_dilation) != 3:
        raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                         f"{replace_stride_with_dilation}")
    dilation = 1
    for stage, dilate in zip((model.layer2, model.layer3, model.layer4), replace_stride_with_dilation):
        if not dilate:
            continue
        previous = dilation
        dilation *= 2
        for i, block in enumerate(stage):
            _set_dilation(block.conv2, 1, previous if i == 0 else dilation)
            if i == 0 and block.downsample is not None:
                block.downsample[0].stride = (1, 1)
    return model


def mobilenet_v3_large_backbone(weights=None, progress=True, norm_layer=None, dilated=False, reduced_tail=False):
    """torchvision's ``mobilenet_v3_large(weights=, norm_layer=, dilated=, reduced_tail=)`` on the zoo's
    ``MobileNetV3TV`` (torchvision's parameter names), which only builds the classification configuration.

    The detection/segmentation options are applied after construction: ``reduced_tail`` halves the channels of
    the last stage (C4) and of the head; ``dilated`` gives C4's depthwise convs stride 1 and dilation 2;
    ``norm_layer`` (torchvision passes ``BatchNorm2d``, eps 1e-5, or ``FrozenBatchNorm2d`` for detection) replaces
    the classification default ``BatchNorm2d(eps=1e-3, momentum=0.01)``. Blocks also get torchvision's ``_is_cn``
    (strided in the configuration) and every ``features[i]`` an ``out_channels``, which the feature extractors
    use to find the stages.
    """
    from ..mobilenetv3 import V3_LARGE_TV, MobileNetV3TV
    setting = [list(s) for s in V3_LARGE_TV]
    divider = 2 if reduced_tail else 1
    for s in setting[-3:]:  # C4: (in, kernel, expanded, out, se, act, stride)
        if s is not setting[-3]:
            s[0], s[2] = s[0] // divider, s[2] // divider
        s[3] //= divider
    model = MobileNetV3TV([tuple(s) for s in setting], 1280 // divider)
    if norm_layer is not None:
        _replace_batchnorm(model, norm_layer)
    features = model.features
    features[0].out_channels = setting[0][0]
    features[-1].out_channels = 6 * setting[-1][3]
    for block, (_, kernel, _, _, _, _, stride) in zip(list(features)[1:-1], setting):
        block._is_cn = stride > 1
    if dilated:
        for block in list(features)[-4:-1]:
            depthwise = next(m for m in block.modules() if isinstance(m, nn.Conv2d) and m.groups > 1)
            depthwise.stride = (1, 1)
            depthwise.dilation = (2, 2)
            depthwise.padding = ((depthwise.kernel_size[0] - 1) // 2 * 2,) * 2
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def _replace_batchnorm(module, norm_layer):
    for name, child in list(module.named_children()):
        if isinstance(child, nn.BatchNorm2d):
            setattr(module, name, norm_layer(child.num_features))
        else:
            _replace_batchnorm(child, norm_layer)
