"""HRNet (Wang et al., "Deep High-Resolution Representation Learning for Visual Recognition", TPAMI 2020):
parallel branches at 1/4 .. 1/32 resolution exchanging information in fuse layers; timm's classification
network and names (the original flowvision names ``hrnet_w18_small ... hrnet_w64`` are timm's).

``features_only=True`` returns the stem and the four branches, through the classification head's
'incre' blocks by default (timm's) or as the raw branches with ``feature_location=''`` (the
segmentation/pose-style outputs).
"""
from flowvision.backend import nn
from flowvision.backend.utils.checkpoint import checkpoint
from flowvision.layers import create_classifier

from ._builder import build_model_with_cfg
from ._contract import ClassifierContract, check_input_channels, classifier_or_none
from ._features import FeatureInfo
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model
from .resnet import BasicBlock, Bottleneck

__all__ = ["HighResolutionNet", "HighResolutionNetFeatures"]

_BLOCKS = {"BASIC": BasicBlock, "BOTTLENECK": Bottleneck}


def _conv_bn(in_chs, out_chs, kernel_size, stride=1, bias=False, relu=False):
    layers = [nn.Conv2d(in_chs, out_chs, kernel_size, stride, kernel_size // 2, bias=bias), nn.BatchNorm2d(out_chs)]
    return nn.Sequential(*(layers + [nn.ReLU(inplace=True)] if relu else layers))


def _make_layer(block, inplanes, planes, num_blocks, stride=1):
    downsample = None
    if stride != 1 or inplanes != planes * block.expansion:
        downsample = _conv_bn(inplanes, planes * block.expansion, 1, stride)
    layers = [block(inplanes, planes, stride, downsample)]
    layers += [block(planes * block.expansion, planes) for _ in range(1, num_blocks)]
    return nn.Sequential(*layers)


class HighResolutionModule(nn.Module):
    """Residual branches, then fuse layers: each output branch sums every branch resampled to its resolution
    (1x1 conv + nearest upsampling from lower resolutions, strided 3x3 convs from higher ones)."""

    def __init__(self, num_branches, block, num_blocks, num_in_chs, num_channels, fuse_method="SUM",
                 multi_scale_output=True):
        super().__init__()
        if not num_branches == len(num_blocks) == len(num_channels) == len(num_in_chs):
            raise ValueError(f"{num_branches} branches need as many num_blocks ({len(num_blocks)}), num_channels "
                             f"({len(num_channels)}) and input widths ({len(num_in_chs)})")
        self.num_in_chs = list(num_in_chs)
        self.fuse_method = fuse_method
        self.num_branches = num_branches
        self.multi_scale_output = multi_scale_output
        branches = []
        for i in range(num_branches):
            branches.append(_make_layer(block, self.num_in_chs[i], num_channels[i], num_blocks[i]))
            self.num_in_chs[i] = num_channels[i] * block.expansion
        self.branches = nn.ModuleList(branches)
        self.fuse_layers = self._make_fuse_layers()
        self.fuse_act = nn.ReLU(False)

    def _make_fuse_layers(self):
        if self.num_branches == 1:
            return nn.Identity()
        chs = self.num_in_chs
        fuse_layers = []
        for i in range(self.num_branches if self.multi_scale_output else 1):
            layer = []
            for j in range(self.num_branches):
                if j > i:
                    up = _conv_bn(chs[j], chs[i], 1)
                    up.add_module("2", nn.Upsample(scale_factor=2 ** (j - i), mode="nearest"))
                    layer.append(up)
                elif j == i:
                    layer.append(nn.Identity())
                else:
                    layer.append(nn.Sequential(*[
                        _conv_bn(chs[j], chs[i] if k == i - j - 1 else chs[j], 3, 2, relu=k != i - j - 1)
                        for k in range(i - j)]))
            fuse_layers.append(nn.ModuleList(layer))
        return nn.ModuleList(fuse_layers)

    def get_num_in_chs(self):
        return self.num_in_chs

    def forward(self, x):
        if self.num_branches == 1:
            return [self.branches[0](x[0])]
        x = [branch(xi) for branch, xi in zip(self.branches, x)]
        out = []
        for fuse_outer in self.fuse_layers:
            y = fuse_outer[0](x[0])
            for j in range(1, len(fuse_outer)):
                y = y + fuse_outer[j](x[j])
            out.append(self.fuse_act(y))
        return out


class SequentialList(nn.Sequential):
    """A Sequential passing a list of branch tensors through its modules."""

    def forward(self, x):
        for module in self:
            x = module(x)
        return x


class HighResolutionNet(ClassifierContract, nn.Module):
    """HRNet for classification.

    Args:
        cfg: stem width and per-stage (num_modules, block_type, num_blocks, num_channels) settings.
        in_chans, num_classes, global_pool, drop_rate: input channels, classes (0: no head), pooling, dropout.
        head: 'classification' (incre blocks + strided aggregation + 2048-wide conv), 'incre' (incre blocks
            only) or '' (raw branches). head_conv_bias: bias in the head's convs.
    """
    head_attr = "classifier"
    pool_attr = "global_pool"

    def __init__(self, cfg, in_chans=3, num_classes=1000, output_stride=32, global_pool="avg", drop_rate=0.0,
                 head="classification", head_conv_bias=True):
        super().__init__()
        if output_stride != 32:
            raise ValueError("HRNet supports only output_stride=32")
        if head not in ("classification", "incre", ""):
            raise ValueError(f"head must be 'classification', 'incre' or '', got {head!r}")
        self.num_classes = num_classes
        self.in_chans = in_chans
        self.grad_checkpointing = False
        stem_width = cfg["stem_width"]
        self.conv1 = nn.Conv2d(in_chans, stem_width, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(stem_width)
        self.act1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(stem_width, 64, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.act2 = nn.ReLU(inplace=True)
        s1 = cfg["stage1"]
        block = _BLOCKS[s1["block_type"]]
        self.layer1 = _make_layer(block, 64, s1["num_channels"][0], s1["num_blocks"][0])
        pre = [block.expansion * s1["num_channels"][0]]
        for i in (2, 3, 4):
            scfg = cfg[f"stage{i}"]
            block = _BLOCKS[scfg["block_type"]]
            chs = [c * block.expansion for c in scfg["num_channels"]]
            self.add_module(f"transition{i - 1}", self._make_transition_layer(pre, chs))
            stage, pre = self._make_stage(scfg, chs)
            self.add_module(f"stage{i}", stage)
        self.head = head
        self.head_channels = None
        self.incre_modules = self.downsamp_modules = self.final_layer = None
        if head == "classification":
            self.num_features = self.head_hidden_size = 2048
            self._make_head(pre, conv_bias=head_conv_bias)
            self.global_pool, self.head_drop, self.classifier = create_classifier(
                self.num_features, num_classes, pool_type=global_pool, drop_rate=drop_rate)
            self.head_hidden_size = self.num_features * self.global_pool.feat_mult()
        else:
            if head == "incre":
                self.num_features = self.head_hidden_size = 2048
                self._make_head(pre, incre_only=True)
            else:
                self.num_features = self.head_hidden_size = 256
            self.global_pool = self.head_drop = self.classifier = nn.Identity()
        # the levels are the stem activation and the four branches, each after its 'incre' block when the head
        # has them (timm's features); module names are the modules producing them (timm's 'stem'/'stageN' are
        # not modules of the network)
        stride = 2
        self.feature_info = [dict(num_chs=64, reduction=stride, module="act1")]
        for i, c in enumerate(self.head_channels or pre):
            stride *= 2
            self.feature_info.append(dict(num_chs=c * 4 if self.head_channels else c, reduction=stride,
                                          module=f"incre_modules.{i}" if self.head_channels else "stage4"))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _make_head(self, pre_stage_channels, incre_only=False, conv_bias=True):
        self.head_channels = [32, 64, 128, 256]
        self.incre_modules = nn.ModuleList([_make_layer(Bottleneck, c, self.head_channels[i], 1)
                                            for i, c in enumerate(pre_stage_channels)])
        if incre_only:
            return
        exp = Bottleneck.expansion
        self.downsamp_modules = nn.ModuleList([
            _conv_bn(self.head_channels[i] * exp, self.head_channels[i + 1] * exp, 3, 2, bias=conv_bias, relu=True)
            for i in range(len(pre_stage_channels) - 1)])
        self.final_layer = _conv_bn(self.head_channels[3] * exp, self.num_features, 1, bias=conv_bias, relu=True)

    @staticmethod
    def _make_transition_layer(pre, cur):
        layers = []
        for i, c in enumerate(cur):
            if i < len(pre):
                layers.append(_conv_bn(pre[i], c, 3, relu=True) if c != pre[i] else nn.Identity())
            else:
                layers.append(nn.Sequential(*[
                    _conv_bn(pre[-1], c if j == i - len(pre) else pre[-1], 3, 2, relu=True)
                    for j in range(i + 1 - len(pre))]))
        return nn.ModuleList(layers)

    @staticmethod
    def _make_stage(cfg, num_in_chs, multi_scale_output=True):
        block = _BLOCKS[cfg["block_type"]]
        modules = []
        for i in range(cfg["num_modules"]):
            modules.append(HighResolutionModule(len(cfg["num_blocks"]), block, cfg["num_blocks"], num_in_chs,
                                                cfg["num_channels"], cfg.get("fuse_method", "SUM"),
                                                multi_scale_output or i < cfg["num_modules"] - 1))
            num_in_chs = modules[-1].get_num_in_chs()
        return SequentialList(*modules), num_in_chs

    def group_matcher(self, coarse=False):
        return dict(stem=r"^conv[12]|bn[12]", block_types=r"^(?:layer|stage|transition)(\d+)" if coarse else [
            (r"^layer(\d+)\.(\d+)", None), (r"^stage(\d+)\.(\d+)", None), (r"^transition(\d+)", (99999,))])

    def reset_classifier(self, num_classes, global_pool=None):
        if self.final_layer is None:
            raise ValueError("this HRNet has no classification head (head != 'classification')")
        self.num_classes = classifier_or_none(num_classes)
        pool = global_pool if global_pool is not None else self.global_pool.pool_type
        self.global_pool, self.classifier = create_classifier(self.num_features, num_classes, pool_type=pool)
        self.head_hidden_size = self.num_features * self.global_pool.feat_mult()

    def _stem(self, x):
        check_input_channels(x, self.in_chans)
        return self.act1(self.bn1(self.conv1(x)))

    def stages(self, x):
        """The four stages on the 1/4 map: a list of the final branches (1/4 .. 1/32)."""
        x = self.run_blocks([self.layer1], x)
        yl = self._run_stage(self.stage2, [t(x) for t in self.transition1])
        for i in (2, 3):
            trans = getattr(self, f"transition{i}")
            xl = [yl[j] if isinstance(t, nn.Identity) else t(yl[-1]) for j, t in enumerate(trans)]
            yl = self._run_stage(getattr(self, f"stage{i + 1}"), xl)
        return yl

    def _run_stage(self, stage, xl):
        """A stage's HighResolutionModules on the branch list; each one checkpointed (all branches in, all out)
        when ``set_grad_checkpointing(True)`` and training."""
        if not (self.grad_checkpointing and self.training):
            return stage(xl)
        for module in stage:
            xl = list(checkpoint(lambda *branches, m=module: tuple(m(list(branches))), *xl))
        return xl

    def forward_features(self, x):
        yl = self.stages(self.act2(self.bn2(self.conv2(self._stem(x)))))
        if self.incre_modules is None or self.downsamp_modules is None:
            return yl
        y = self.incre_modules[0](yl[0])
        for i in range(1, len(self.incre_modules)):
            y = self.incre_modules[i](yl[i]) + self.downsamp_modules[i - 1](y)
        return self.final_layer(y)

    def forward_head(self, x, pre_logits=False):
        if isinstance(x, list):
            raise ValueError("pooling and classification need the 'classification' head; this model returns "
                             "its branches")
        x = self.head_drop(self.global_pool(x))
        return x if pre_logits else self.classifier(x)


class HighResolutionNetFeatures(HighResolutionNet):
    """HRNet returning [stem, branch 1/4, 1/8, 1/16, 1/32] (through the 'incre' blocks by default)."""

    def __init__(self, cfg, in_chans=3, num_classes=1000, output_stride=32, global_pool="avg", drop_rate=0.0,
                 feature_location="incre", feature_out_indices=(0, 1, 2, 3, 4), **kwargs):
        if feature_location not in ("incre", ""):
            raise ValueError(f"feature_location must be 'incre' or '', got {feature_location!r}")
        super().__init__(cfg, in_chans=in_chans, num_classes=num_classes, output_stride=output_stride,
                         global_pool=global_pool, drop_rate=drop_rate, head=feature_location, **kwargs)
        self.feature_info = FeatureInfo(self.feature_info, feature_out_indices)
        self._out_idx = set(self.feature_info.out_indices)

    def forward_features(self, x):
        raise NotImplementedError("HighResolutionNetFeatures returns feature maps: call the model")

    def forward(self, x):
        x = self._stem(x)
        out = [x] if 0 in self._out_idx else []
        x = self.stages(self.act2(self.bn2(self.conv2(x))))
        if self.incre_modules is not None:
            x = [incre(f) for f, incre in zip(x, self.incre_modules)]
        return out + [f for i, f in enumerate(x) if i + 1 in self._out_idx]


def _stage(num_modules, block_type, num_blocks, num_channels):
    return dict(num_modules=num_modules, block_type=block_type, num_blocks=num_blocks, num_channels=num_channels,
                fuse_method="SUM")


def _wide(w):
    return dict(stem_width=64, stage1=_stage(1, "BOTTLENECK", (4,), (64,)),
                stage2=_stage(1, "BASIC", (4, 4), (w, 2 * w)), stage3=_stage(4, "BASIC", (4, 4, 4), (w, 2 * w, 4 * w)),
                stage4=_stage(3, "BASIC", (4, 4, 4, 4), (w, 2 * w, 4 * w, 8 * w)))


cfg_cls = dict(
    hrnet_w18_small=dict(stem_width=64, stage1=_stage(1, "BOTTLENECK", (1,), (32,)),
                         stage2=_stage(1, "BASIC", (2, 2), (16, 32)), stage3=_stage(1, "BASIC", (2, 2, 2), (16, 32, 64)),
                         stage4=_stage(1, "BASIC", (2, 2, 2, 2), (16, 32, 64, 128))),
    hrnet_w18_small_v2=dict(stem_width=64, stage1=_stage(1, "BOTTLENECK", (2,), (64,)),
                            stage2=_stage(1, "BASIC", (2, 2), (18, 36)),
                            stage3=_stage(3, "BASIC", (2, 2, 2), (18, 36, 72)),
                            stage4=_stage(2, "BASIC", (2, 2, 2, 2), (18, 36, 72, 144))),
    **{f"hrnet_w{w}": _wide(w) for w in (18, 30, 32, 40, 44, 48, 64)},
)


def _create_hrnet(variant, pretrained=False, cfg_variant=None, **kwargs):
    cfg = cfg_cls[cfg_variant or variant]
    if kwargs.pop("features_only", False):
        kwargs.pop("num_classes", None)
        kwargs.pop("global_pool", None)
        kwargs["feature_out_indices"] = kwargs.pop("out_indices", (0, 1, 2, 3, 4))
        return build_model_with_cfg(HighResolutionNetFeatures, variant, pretrained, cfg=cfg,
                                    pretrained_strict=False, **kwargs)
    if "out_indices" in kwargs:
        raise ValueError("out_indices is only meaningful with features_only=True")
    return build_model_with_cfg(HighResolutionNet, variant, pretrained, cfg=cfg,
                                pretrained_strict=kwargs.get("head", "classification") == "classification",
                                **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD, first_conv="conv1",
                   classifier="classifier", license="mit", hf_hub_id="timm/"), **kwargs}


_GLUON = dict(interpolation="bicubic", license="apache-2.0")
_SSLD = dict(crop_pct=0.95, test_crop_pct=1.0, test_input_size=(3, 288, 288))
default_cfgs = generate_default_cfgs({
    "hrnet_w18_small.gluon_in1k": _cfg(**_GLUON),
    "hrnet_w18_small.ms_in1k": _cfg(),
    "hrnet_w18_small_v2.gluon_in1k": _cfg(**_GLUON),
    "hrnet_w18_small_v2.ms_in1k": _cfg(),
    "hrnet_w18.ms_aug_in1k": _cfg(crop_pct=0.95),
    **{f"hrnet_w{w}.ms_in1k": _cfg() for w in (18, 30, 32, 40, 44, 48, 64)},
    "hrnet_w18_ssld.paddle_in1k": _cfg(**_SSLD),
    "hrnet_w48_ssld.paddle_in1k": _cfg(**_SSLD),
})


@register_model
def hrnet_w18_small(pretrained=False, **kwargs):
    """HRNet-W18-Small."""
    return _create_hrnet("hrnet_w18_small", pretrained, **kwargs)


@register_model
def hrnet_w18_small_v2(pretrained=False, **kwargs):
    """HRNet-W18-Small-v2."""
    return _create_hrnet("hrnet_w18_small_v2", pretrained, **kwargs)


@register_model
def hrnet_w18(pretrained=False, **kwargs):
    """HRNet-W18."""
    return _create_hrnet("hrnet_w18", pretrained, **kwargs)


@register_model
def hrnet_w30(pretrained=False, **kwargs):
    """HRNet-W30."""
    return _create_hrnet("hrnet_w30", pretrained, **kwargs)


@register_model
def hrnet_w32(pretrained=False, **kwargs):
    """HRNet-W32."""
    return _create_hrnet("hrnet_w32", pretrained, **kwargs)


@register_model
def hrnet_w40(pretrained=False, **kwargs):
    """HRNet-W40."""
    return _create_hrnet("hrnet_w40", pretrained, **kwargs)


@register_model
def hrnet_w44(pretrained=False, **kwargs):
    """HRNet-W44."""
    return _create_hrnet("hrnet_w44", pretrained, **kwargs)


@register_model
def hrnet_w48(pretrained=False, **kwargs):
    """HRNet-W48."""
    return _create_hrnet("hrnet_w48", pretrained, **kwargs)


@register_model
def hrnet_w64(pretrained=False, **kwargs):
    """HRNet-W64."""
    return _create_hrnet("hrnet_w64", pretrained, **kwargs)


@register_model
def hrnet_w18_ssld(pretrained=False, **kwargs):
    """HRNet-W18 (PaddlePaddle SSLD distilled weights; bias-free head convs)."""
    return _create_hrnet("hrnet_w18_ssld", pretrained, cfg_variant="hrnet_w18", **{"head_conv_bias": False, **kwargs})


@register_model
def hrnet_w48_ssld(pretrained=False, **kwargs):
    """HRNet-W48 (PaddlePaddle SSLD distilled weights; bias-free head convs)."""
    return _create_hrnet("hrnet_w48_ssld", pretrained, cfg_variant="hrnet_w48", **{"head_conv_bias": False, **kwargs})
