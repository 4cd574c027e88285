"""ResNet / ResNet-D/-T / ResNeXt / Wide-ResNet / SE-ResNet(Xt) / ECA-ResNet, with timm's module and parameter names.

Variants differ by block type, depth, cardinality/width and stem/downsample options
(``stem_type='deep'`` + ``avg_down=True`` gives the "d" variants, ``'deep_tiered'`` the "t" ones); the
per-block attention (``block_args=dict(attn_layer='se' | 'eca' | ...)``) comes from ``layers.create_attn``.
"""
import math
from functools import partial

from flowvision.backend import Tensor, nn
from flowvision.backend.nn import functional as F
from flowvision.layers import DropBlock2d, DropPath, create_attn, create_classifier, get_act_layer

from ._api import define_tv_builders, register_tv_counterpart, tv_weights_enums
from ._builder import build_model_with_cfg
from ._pretrained import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, generate_default_cfgs
from ._registry import register_model, register_model_alias
from ._contract import check_input_channels, checkpoint_seq
from ._resnet_tv import BasicBlockTV, BottleneckTV, ResNetTV

__all__ = ["ResNet", "BasicBlock", "Bottleneck"]


class ResidualBlockBase(nn.Module):
    """What every block of timm's ``ResNet`` shares after its own convolutions: the zero init of its last norm
    (named by ``last_norm``) and the attention -> drop-path -> shortcut -> activation tail."""
    last_norm = "bn3"

    def zero_init_last(self) -> None:
        """Zero the last norm's scale, so the block starts as its shortcut."""
        norm = getattr(self, self.last_norm)
        if getattr(norm, "weight", None) is not None:
            nn.init.zeros_(norm.weight)

    def residual(self, out: Tensor, x: Tensor, act: nn.Module) -> Tensor:
        """``act(drop_path(se(out)) + downsample(x))``, each of ``se``, ``drop_path``, ``downsample`` skipped where
        the block has none."""
        se = getattr(self, "se", None)
        if se is not None:
            out = se(out)
        if self.drop_path is not None:
            out = self.drop_path(out)
        return act(out + (self.downsample(x) if self.downsample is not None else x))


class BasicBlock(ResidualBlockBase):
    expansion = 1
    last_norm = "bn2"

    def __init__(self, inplanes, planes, stride=1, downsample=None, cardinality=1, base_width=64, reduce_first=1,
                 dilation=1, first_dilation=None, act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, attn_layer=None,
                 drop_block=None, drop_path=None):
        super().__init__()
        if cardinality != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports cardinality=1 and base_width=64")
        first_planes = planes // reduce_first
        outplanes = planes * self.expansion
        first_dilation = first_dilation or dilation
        self.conv1 = nn.Conv2d(inplanes, first_planes, 3, stride=stride, padding=first_dilation,
                               dilation=first_dilation, bias=False)
        self.bn1 = norm_layer(first_planes)
        self.drop_block = drop_block() if drop_block is not None else nn.Identity()
        self.act1 = act_layer(inplace=True)
        self.aa = nn.Identity()
        self.conv2 = nn.Conv2d(first_planes, outplanes, 3, padding=dilation, dilation=dilation, bias=False)
        self.bn2 = norm_layer(outplanes)
        self.se = create_attn(attn_layer, outplanes)
        self.act2 = act_layer(inplace=True)
        self.downsample = downsample
        self.drop_path = drop_path

    def forward(self, x):
        out = self.aa(self.act1(self.drop_block(self.bn1(self.conv1(x)))))
        return self.residual(self.bn2(self.conv2(out)), x, self.act2)


class Bottleneck(ResidualBlockBase):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, cardinality=1, base_width=64, reduce_first=1,
                 dilation=1, first_dilation=None, act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, attn_layer=None,
                 drop_block=None, drop_path=None):
        super().__init__()
        width = int(math.floor(planes * (base_width / 64)) * cardinality)
        first_planes = width // reduce_first
        outplanes = planes * self.expansion
        first_dilation = first_dilation or dilation
        self.conv1 = nn.Conv2d(inplanes, first_planes, 1, bias=False)
        self.bn1 = norm_layer(first_planes)
        self.act1 = act_layer(inplace=True)
        self.conv2 = nn.Conv2d(first_planes, width, 3, stride=stride, padding=first_dilation,
                               dilation=first_dilation, groups=cardinality, bias=False)
        self.bn2 = norm_layer(width)
        self.drop_block = drop_block() if drop_block is not None else nn.Identity()
        self.act2 = act_layer(inplace=True)
        self.aa = nn.Identity()
        self.conv3 = nn.Conv2d(width, outplanes, 1, bias=False)
        self.bn3 = norm_layer(outplanes)
        self.se = create_attn(attn_layer, outplanes)
        self.act3 = act_layer(inplace=True)
        self.downsample = downsample
        self.drop_path = drop_path

    def forward(self, x):
        out = self.act1(self.bn1(self.conv1(x)))
        out = self.aa(self.act2(self.drop_block(self.bn2(self.conv2(out)))))
        return self.residual(self.bn3(self.conv3(out)), x, self.act3)


def _downsample_conv(in_channels, out_channels, kernel_size, stride=1, dilation=1, first_dilation=None,
                     norm_layer=nn.BatchNorm2d):
    kernel_size = 1 if stride == 1 and dilation == 1 else kernel_size
    first_dilation = (first_dilation or dilation) if kernel_size > 1 else 1
    p = ((stride - 1) + first_dilation * (kernel_size - 1)) // 2
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=p, dilation=first_dilation,
                  bias=False),
        norm_layer(out_channels))


def _downsample_avg(in_channels, out_channels, kernel_size, stride=1, dilation=1, first_dilation=None,
                    norm_layer=nn.BatchNorm2d):
    avg_stride = stride if dilation == 1 else 1
    if stride == 1 and dilation == 1:
        pool = nn.Identity()
    else:
        pool = nn.AvgPool2d(2, avg_stride, ceil_mode=True, count_include_pad=False)
    return nn.Sequential(pool, nn.Conv2d(in_channels, out_channels, 1, stride=1, padding=0, bias=False),
                         norm_layer(out_channels))


class ResNet(nn.Module):
    """ResNet family. Stem: ``stem_type`` '' (7x7 conv), 'deep' (3 x 3x3 convs), 'deep_tiered'."""

    def __init__(self, block=Bottleneck, layers=(3, 4, 6, 3), num_classes=1000, in_chans=3, output_stride=32,
                 global_pool="avg", cardinality=1, base_width=64, stem_width=64, stem_type="", block_reduce_first=1,
                 down_kernel_size=1, avg_down=False, act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, drop_rate=0.0,
                 drop_path_rate=0.0, drop_block_rate=0.0, zero_init_last=True, block_args=None):
        super().__init__()
        if output_stride != 32:
            raise NotImplementedError("only output_stride=32 is implemented so far")
        act_layer = get_act_layer(act_layer)
        block_args = block_args or {}
        self.num_classes = num_classes
        self.drop_rate = drop_rate
        self.grad_checkpointing = False

        deep_stem = "deep" in stem_type
        inplanes = stem_width * 2 if deep_stem else 64
        if deep_stem:
            stem_chs = (3 * (stem_width // 4), stem_width) if "tiered" in stem_type else (stem_width, stem_width)
            self.conv1 = nn.Sequential(
                nn.Conv2d(in_chans, stem_chs[0], 3, stride=2, padding=1, bias=False),
                norm_layer(stem_chs[0]), act_layer(inplace=True),
                nn.Conv2d(stem_chs[0], stem_chs[1], 3, stride=1, padding=1, bias=False),
                norm_layer(stem_chs[1]), act_layer(inplace=True),
                nn.Conv2d(stem_chs[1], inplanes, 3, stride=1, padding=1, bias=False))
        else:
            self.conv1 = nn.Conv2d(in_chans, inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(inplanes)
        self.act1 = act_layer(inplace=True)
        self.feature_info = [dict(num_chs=inplanes, reduction=2, module="act1")]
        # the name 'maxpool' is kept for weight compatibility
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

        total_blocks = sum(layers)
        block_idx = 0
        reduction = 4
        # timm's DropBlock schedule: none in stages 1-2, 5x5 blocks (gamma x0.25) in 3, 3x3 blocks in 4
        drop_blocks = [None, None, partial(DropBlock2d, drop_prob=drop_block_rate, block_size=5, gamma_scale=0.25),
                       partial(DropBlock2d, drop_prob=drop_block_rate, block_size=3, gamma_scale=1.0)] \
            if drop_block_rate else [None] * 4
        for stage_idx, (planes, num_blocks) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if stage_idx == 0 else 2
            reduction *= stride
            outplanes = planes * block.expansion
            downsample = None
            if stride != 1 or inplanes != outplanes:
                ds = _downsample_avg if avg_down else _downsample_conv
                downsample = ds(inplanes, outplanes, down_kernel_size, stride=stride, norm_layer=norm_layer)
            blocks = []
            for i in range(num_blocks):
                dpr = drop_path_rate * block_idx / max(total_blocks - 1, 1)
                blocks.append(block(
                    inplanes, planes, stride if i == 0 else 1, downsample if i == 0 else None,
                    cardinality=cardinality, base_width=base_width, reduce_first=block_reduce_first,
                    act_layer=act_layer, norm_layer=norm_layer, drop_block=drop_blocks[stage_idx],
                    drop_path=DropPath(dpr) if dpr > 0 else None,
                    **block_args))
                inplanes = outplanes
                block_idx += 1
            name = f"layer{stage_idx + 1}"
            self.add_module(name, nn.Sequential(*blocks))
            self.feature_info.append(dict(num_chs=outplanes, reduction=reduction, module=name))

        self.num_features = self.head_hidden_size = 512 * block.expansion
        self.global_pool, self.fc = create_classifier(self.num_features, num_classes, pool_type=global_pool)
        self.init_weights(zero_init_last=zero_init_last)

    def init_weights(self, zero_init_last=True):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        if zero_init_last:
            for m in self.modules():
                if hasattr(m, "zero_init_last"):
                    m.zero_init_last()

    def no_weight_decay(self):
        return set()

    def set_grad_checkpointing(self, enable: bool = True) -> None:
        """In training mode, run every block of ``layer1`` .. ``layer4`` under ``checkpoint``: only its input is
        kept and its activations are recomputed in backward (the same values either way)."""
        self.grad_checkpointing = bool(enable)

    def get_classifier(self, name_only=False):
        return "fc" if name_only else self.fc

    def reset_classifier(self, num_classes, global_pool="avg"):
        self.num_classes = num_classes
        self.global_pool, self.fc = create_classifier(self.num_features, num_classes, pool_type=global_pool)

    def forward_features(self, x):
        check_input_channels(x, (self.conv1 if isinstance(self.conv1, nn.Conv2d) else self.conv1[0]).in_channels)
        x = self.maxpool(self.act1(self.bn1(self.conv1(x))))
        stages = (self.layer1, self.layer2, self.layer3, self.layer4)
        if self.grad_checkpointing and self.training:  # timm's checkpoint_seq(..., flatten=True): block by block
            return checkpoint_seq([block for stage in stages for block in stage], x)
        for stage in stages:
            x = stage(x)
        return x

    def forward_head(self, x, pre_logits=False):
        x = self.global_pool(x)
        if self.drop_rate:
            x = F.dropout(x, p=float(self.drop_rate), training=self.training)
        return x if pre_logits else self.fc(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def _create_resnet(variant, pretrained=False, **kwargs):
    return build_model_with_cfg(ResNet, variant, pretrained, **kwargs)


def _cfg(**kwargs):
    return {**dict(num_classes=1000, input_size=(3, 224, 224), pool_size=(7, 7), crop_pct=0.875,
                   interpolation="bilinear", mean=IMAGENET_DEFAULT_MEAN, std=IMAGENET_DEFAULT_STD,
                   first_conv="conv1", classifier="fc", license="apache-2.0"), **kwargs}


def _rcfg(**kwargs):  # ResNet Strikes Back recipes
    return _cfg(**{**dict(crop_pct=0.95, interpolation="bicubic", test_input_size=(3, 288, 288),
                          test_crop_pct=1.0), **kwargs})


def _r3cfg(**kwargs):
    return _cfg(**{**dict(input_size=(3, 160, 160), pool_size=(5, 5), crop_pct=0.95, interpolation="bicubic",
                          test_input_size=(3, 224, 224), test_crop_pct=0.95), **kwargs})


def _tvcfg(**kwargs):  # torchvision weights, re-hosted by timm
    return _cfg(**{**dict(hf_hub_id="timm/", license="bsd-3-clause"), **kwargs})


def _tv2cfg(**kwargs):  # torchvision V2 recipe
    return _tvcfg(**{**dict(input_size=(3, 176, 176), pool_size=(6, 6), test_input_size=(3, 224, 224),
                            test_crop_pct=0.965), **kwargs})


def _dcfg(**kwargs):
    return _cfg(**{**dict(first_conv="conv1.0"), **kwargs})


_TV = "https://download.pytorch.org/models/"
default_cfgs = generate_default_cfgs({
    "resnet18.a1_in1k": _rcfg(hf_hub_id="timm/"),
    "resnet18.a2_in1k": _rcfg(hf_hub_id="timm/"),
    "resnet18.a3_in1k": _r3cfg(hf_hub_id="timm/"),
    "resnet18.tv_in1k": _tvcfg(origin_url=_TV + "resnet18-5c106cde.pth"),
    "resnet26.bt_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", test_input_size=(3, 288, 288),
                             test_crop_pct=0.95),
    "resnet26d.bt_in1k": _dcfg(hf_hub_id="timm/", interpolation="bicubic", test_input_size=(3, 288, 288),
                               test_crop_pct=0.95),
    "resnet34.a1_in1k": _rcfg(hf_hub_id="timm/"),
    "resnet34.a2_in1k": _rcfg(hf_hub_id="timm/"),
    "resnet34.a3_in1k": _r3cfg(hf_hub_id="timm/"),
    "resnet34.tv_in1k": _tvcfg(origin_url=_TV + "resnet34-333f7ec4.pth"),
    "resnet34d.ra2_in1k": _dcfg(hf_hub_id="timm/", interpolation="bicubic", test_input_size=(3, 288, 288),
                                test_crop_pct=0.95),
    "resnet50.a1_in1k": _rcfg(hf_hub_id="timm/"),
    "resnet50.a1h_in1k": _rcfg(hf_hub_id="timm/", input_size=(3, 176, 176), pool_size=(6, 6), crop_pct=0.9,
                               test_input_size=(3, 224, 224), test_crop_pct=1.0),
    "resnet50.a2_in1k": _rcfg(hf_hub_id="timm/"),
    "resnet50.a3_in1k": _r3cfg(hf_hub_id="timm/"),
    "resnet50.tv_in1k": _tvcfg(origin_url=_TV + "resnet50-0676ba61.pth"),
    "resnet50.tv2_in1k": _tv2cfg(origin_url=_TV + "resnet50-11ad3fa6.pth"),
    "resnet50d.ra2_in1k": _dcfg(hf_hub_id="timm/", interpolation="bicubic", test_input_size=(3, 288, 288),
                                test_crop_pct=0.95),
    "resnet101.a1h_in1k": _rcfg(hf_hub_id="timm/", input_size=(3, 224, 224), crop_pct=0.95,
                                test_input_size=(3, 288, 288), test_crop_pct=1.0),
    "resnet101.tv_in1k": _tvcfg(origin_url=_TV + "resnet101-5d3b4d8f.pth"),
    "resnet101.tv2_in1k": _tv2cfg(),
    "resnet101d.ra2_in1k": _dcfg(hf_hub_id="timm/", interpolation="bicubic", crop_pct=0.95,
                                 input_size=(3, 256, 256), pool_size=(8, 8), test_input_size=(3, 320, 320),
                                 test_crop_pct=1.0),
    "resnet152.a1h_in1k": _rcfg(hf_hub_id="timm/", input_size=(3, 224, 224), crop_pct=0.95,
                                test_input_size=(3, 288, 288), test_crop_pct=1.0),
    "resnet152.tv_in1k": _tvcfg(origin_url=_TV + "resnet152-b121ed2d.pth"),
    "resnet152.tv2_in1k": _tv2cfg(),
    "resnet152d.ra2_in1k": _dcfg(hf_hub_id="timm/", interpolation="bicubic", crop_pct=0.95,
                                 input_size=(3, 256, 256), pool_size=(8, 8), test_input_size=(3, 320, 320),
                                 test_crop_pct=1.0),
    "resnext50_32x4d.a1h_in1k": _rcfg(hf_hub_id="timm/"),
    "resnext50_32x4d.tv_in1k": _tvcfg(),
    "resnext50_32x4d.tv2_in1k": _tv2cfg(),
    "resnext101_32x4d.fb_ssl_yfcc100m_ft_in1k": _cfg(hf_hub_id="timm/", license="cc-by-nc-4.0"),
    "resnext101_32x8d.tv_in1k": _tvcfg(),
    "resnext101_64x4d.tv_in1k": _tvcfg(),
    "wide_resnet50_2.tv_in1k": _tvcfg(),
    "wide_resnet101_2.tv_in1k": _tvcfg(),
    "seresnet50.ra2_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic",
                                test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnext50_32x4d.racm_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic",
                                        test_input_size=(3, 288, 288), test_crop_pct=0.95),
    # T (tiered stem), 200-layer, SE and ECA variants: facts from timm's default cfgs
    "resnet10t.c3_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 176, 176), pool_size=(6, 6), interpolation='bicubic',
                              first_conv='conv1.0', test_input_size=(3, 224, 224), test_crop_pct=0.95),
    "resnet14t.c3_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 176, 176), pool_size=(6, 6), interpolation='bicubic',
                              first_conv='conv1.0', test_input_size=(3, 224, 224), test_crop_pct=0.95),
    "resnet26t.ra2_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 256, 256), pool_size=(8, 8), crop_pct=0.94,
                               interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 320, 320),
                               test_crop_pct=1.0),
    "resnet50t": _cfg(interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "resnet200": _cfg(interpolation='bicubic', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "resnet200d.ra2_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 256, 256), pool_size=(8, 8), crop_pct=0.95,
                                interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 320, 320),
                                test_crop_pct=1.0),
    "seresnet18": _cfg(interpolation='bicubic', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnet34": _cfg(interpolation='bicubic', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnet101": _cfg(interpolation='bicubic', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnet152": _cfg(interpolation='bicubic', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnet152d.ra2_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 256, 256), pool_size=(8, 8), crop_pct=0.95,
                                  interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 320, 320),
                                  test_crop_pct=1.0),
    "seresnet200d": _cfg(input_size=(3, 256, 256), pool_size=(8, 8), interpolation='bicubic', first_conv='conv1.0',
                         test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnet269d": _cfg(input_size=(3, 256, 256), pool_size=(8, 8), interpolation='bicubic', first_conv='conv1.0',
                         test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnet50t": _cfg(interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 288, 288),
                        test_crop_pct=0.95),
    "seresnext26d_32x4d.bt_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic', first_conv='conv1.0',
                                       test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnext26t_32x4d.bt_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic', first_conv='conv1.0',
                                       test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "seresnext101_32x4d.gluon_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic'),
    "seresnext101_32x8d.ah_in1k": _cfg(hf_hub_id='timm/', crop_pct=0.95, interpolation='bicubic', test_input_size=(3,
                                       288, 288), test_crop_pct=1.0),
    "seresnext101_64x4d.gluon_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic'),
    "seresnext101d_32x8d.ah_in1k": _cfg(hf_hub_id='timm/', crop_pct=0.95, interpolation='bicubic', first_conv='conv1.0',
                                        test_input_size=(3, 288, 288), test_crop_pct=1.0),
    "ecaresnet26t.ra2_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 256, 256), pool_size=(8, 8),
                                  interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 320, 320),
                                  test_crop_pct=0.95),
    "ecaresnet50d.miil_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic', first_conv='conv1.0', test_input_size=(3,
                                   288, 288), test_crop_pct=0.95),
    "ecaresnet50t.a1_in1k": _cfg(hf_hub_id='timm/', crop_pct=0.95, interpolation='bicubic', first_conv='conv1.0',
                                 test_input_size=(3, 288, 288), test_crop_pct=1.0),
    "ecaresnet50t.a2_in1k": _cfg(hf_hub_id='timm/', crop_pct=0.95, interpolation='bicubic', first_conv='conv1.0',
                                 test_input_size=(3, 288, 288), test_crop_pct=1.0),
    "ecaresnet50t.a3_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 160, 160), pool_size=(5, 5), crop_pct=0.95,
                                 interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 224, 224),
                                 test_crop_pct=0.95),
    "ecaresnet50t.ra2_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 256, 256), pool_size=(8, 8),
                                  interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 320, 320),
                                  test_crop_pct=0.95),
    "ecaresnet101d.miil_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic', first_conv='conv1.0',
                                    test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "ecaresnet200d": _cfg(input_size=(3, 256, 256), pool_size=(8, 8), crop_pct=0.95, interpolation='bicubic',
                          first_conv='conv1.0', test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "ecaresnet269d.ra2_in1k": _cfg(hf_hub_id='timm/', input_size=(3, 320, 320), pool_size=(10, 10), crop_pct=0.95,
                                   interpolation='bicubic', first_conv='conv1.0', test_input_size=(3, 352, 352),
                                   test_crop_pct=1.0),
    "resnet50c.gluon_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0"),
    "resnet101c.gluon_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0"),
    "resnet152c.gluon_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0"),
    "resnet50s.gluon_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0"),
    "resnet101s.gluon_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0"),
    "resnet152s.gluon_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0"),
    "resnext50d_32x4d.bt_in1k": _cfg(hf_hub_id="timm/", interpolation="bicubic", first_conv="conv1.0",
                                     test_input_size=(3, 288, 288), test_crop_pct=0.95),
    "resnext101_32x16d.fb_wsl_ig1b_ft_in1k": _cfg(hf_hub_id="timm/", license="cc-by-nc-4.0"),
    "resnext101_32x16d.fb_ssl_yfcc100m_ft_in1k": _cfg(hf_hub_id="timm/", license="cc-by-nc-4.0"),
    "resnext101_32x16d.fb_swsl_ig1b_ft_in1k": _cfg(hf_hub_id="timm/", license="cc-by-nc-4.0"),
    "resnext101_32x32d.fb_wsl_ig1b_ft_in1k": _cfg(hf_hub_id="timm/", license="cc-by-nc-4.0"),
    "ecaresnetlight.miil_in1k": _cfg(hf_hub_id='timm/', interpolation='bicubic', test_input_size=(3, 288, 288),
                                     test_crop_pct=0.95),
})

_DEEP = dict(stem_width=32, stem_type="deep", avg_down=True)
_TIERED = dict(stem_width=32, stem_type="deep_tiered", avg_down=True)
_SE = dict(block_args=dict(attn_layer="se"))
_ECA = dict(block_args=dict(attn_layer="eca"))


def _r(variant, pretrained, kwargs, **args):
    return _create_resnet(variant, pretrained, **{**args, **kwargs})


@register_model
def resnet18(pretrained=False, **kwargs):
    return _r("resnet18", pretrained, kwargs, block=BasicBlock, layers=(2, 2, 2, 2))


@register_model
def resnet18d(pretrained=False, **kwargs):
    return _r("resnet18d", pretrained, kwargs, block=BasicBlock, layers=(2, 2, 2, 2), **_DEEP)


@register_model
def resnet34(pretrained=False, **kwargs):
    return _r("resnet34", pretrained, kwargs, block=BasicBlock, layers=(3, 4, 6, 3))


@register_model
def resnet34d(pretrained=False, **kwargs):
    return _r("resnet34d", pretrained, kwargs, block=BasicBlock, layers=(3, 4, 6, 3), **_DEEP)


@register_model
def resnet26(pretrained=False, **kwargs):
    return _r("resnet26", pretrained, kwargs, block=Bottleneck, layers=(2, 2, 2, 2))


@register_model
def resnet26d(pretrained=False, **kwargs):
    return _r("resnet26d", pretrained, kwargs, block=Bottleneck, layers=(2, 2, 2, 2), **_DEEP)


@register_model
def resnet50(pretrained=False, **kwargs):
    return _r("resnet50", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 6, 3))


@register_model
def resnet50d(pretrained=False, **kwargs):
    return _r("resnet50d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 6, 3), **_DEEP)


@register_model
def resnet101(pretrained=False, **kwargs):
    return _r("resnet101", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 23, 3))


@register_model
def resnet101d(pretrained=False, **kwargs):
    return _r("resnet101d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 23, 3), **_DEEP)


@register_model
def resnet152(pretrained=False, **kwargs):
    return _r("resnet152", pretrained, kwargs, block=Bottleneck, layers=(3, 8, 36, 3))


@register_model
def resnet152d(pretrained=False, **kwargs):
    return _r("resnet152d", pretrained, kwargs, block=Bottleneck, layers=(3, 8, 36, 3), **_DEEP)


@register_model
def resnext50_32x4d(pretrained=False, **kwargs):
    return _r("resnext50_32x4d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 6, 3), cardinality=32,
              base_width=4)


@register_model
def resnext101_32x4d(pretrained=False, **kwargs):
    return _r("resnext101_32x4d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 23, 3), cardinality=32,
              base_width=4)


@register_model
def resnext101_32x8d(pretrained=False, **kwargs):
    return _r("resnext101_32x8d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 23, 3), cardinality=32,
              base_width=8)


@register_model
def resnext101_64x4d(pretrained=False, **kwargs):
    return _r("resnext101_64x4d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 23, 3), cardinality=64,
              base_width=4)


@register_model
def wide_resnet50_2(pretrained=False, **kwargs):
    return _r("wide_resnet50_2", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 6, 3), base_width=128)


@register_model
def wide_resnet101_2(pretrained=False, **kwargs):
    return _r("wide_resnet101_2", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 23, 3), base_width=128)


@register_model
def seresnet50(pretrained=False, **kwargs):
    return _r("seresnet50", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 6, 3),
              block_args=dict(attn_layer="se"))


@register_model
def seresnext50_32x4d(pretrained=False, **kwargs):
    return _r("seresnext50_32x4d", pretrained, kwargs, block=Bottleneck, layers=(3, 4, 6, 3), cardinality=32,
              base_width=4, block_args=dict(attn_layer="se"))


_B, _BN = BasicBlock, Bottleneck
_R50, _R101, _R152, _R200, _R269 = (3, 4, 6, 3), (3, 4, 23, 3), (3, 8, 36, 3), (3, 24, 36, 3), (3, 30, 48, 8)
_X32x4, _X32x8, _X64x4 = dict(cardinality=32, base_width=4), dict(cardinality=32, base_width=8), \
    dict(cardinality=64, base_width=4)


@register_model
def resnet50c(pretrained=False, **kwargs):  # c: deep stem (32 wide), strided-conv downsample
    return _r("resnet50c", pretrained, kwargs, block=_BN, layers=_R50, stem_width=32, stem_type="deep")


@register_model
def resnet101c(pretrained=False, **kwargs):
    return _r("resnet101c", pretrained, kwargs, block=_BN, layers=_R101, stem_width=32, stem_type="deep")


@register_model
def resnet152c(pretrained=False, **kwargs):
    return _r("resnet152c", pretrained, kwargs, block=_BN, layers=_R152, stem_width=32, stem_type="deep")


@register_model
def resnet50s(pretrained=False, **kwargs):  # s: deep stem 64 wide
    return _r("resnet50s", pretrained, kwargs, block=_BN, layers=_R50, stem_width=64, stem_type="deep")


@register_model
def resnet101s(pretrained=False, **kwargs):
    return _r("resnet101s", pretrained, kwargs, block=_BN, layers=_R101, stem_width=64, stem_type="deep")


@register_model
def resnet152s(pretrained=False, **kwargs):
    return _r("resnet152s", pretrained, kwargs, block=_BN, layers=_R152, stem_width=64, stem_type="deep")


@register_model
def resnext50d_32x4d(pretrained=False, **kwargs):
    return _r("resnext50d_32x4d", pretrained, kwargs, block=_BN, layers=_R50, **_X32x4, **_DEEP)


@register_model
def resnext101_32x16d(pretrained=False, **kwargs):
    return _r("resnext101_32x16d", pretrained, kwargs, block=_BN, layers=_R101, cardinality=32, base_width=16)


@register_model
def resnext101_32x32d(pretrained=False, **kwargs):
    return _r("resnext101_32x32d", pretrained, kwargs, block=_BN, layers=_R101, cardinality=32, base_width=32)


@register_model
def resnet10t(pretrained=False, **kwargs):
    return _r("resnet10t", pretrained, kwargs, block=_B, layers=(1, 1, 1, 1), **_TIERED)


@register_model
def resnet14t(pretrained=False, **kwargs):
    return _r("resnet14t", pretrained, kwargs, block=_BN, layers=(1, 1, 1, 1), **_TIERED)


@register_model
def resnet26t(pretrained=False, **kwargs):
    return _r("resnet26t", pretrained, kwargs, block=_BN, layers=(2, 2, 2, 2), **_TIERED)


@register_model
def resnet50t(pretrained=False, **kwargs):
    return _r("resnet50t", pretrained, kwargs, block=_BN, layers=_R50, **_TIERED)


@register_model
def resnet200(pretrained=False, **kwargs):
    return _r("resnet200", pretrained, kwargs, block=_BN, layers=_R200)


@register_model
def resnet200d(pretrained=False, **kwargs):
    return _r("resnet200d", pretrained, kwargs, block=_BN, layers=_R200, **_DEEP)


@register_model
def seresnet18(pretrained=False, **kwargs):
    return _r("seresnet18", pretrained, kwargs, block=_B, layers=(2, 2, 2, 2), **_SE)


@register_model
def seresnet34(pretrained=False, **kwargs):
    return _r("seresnet34", pretrained, kwargs, block=_B, layers=_R50, **_SE)


@register_model
def seresnet50t(pretrained=False, **kwargs):
    return _r("seresnet50t", pretrained, kwargs, block=_BN, layers=_R50, **_TIERED, **_SE)


@register_model
def seresnet101(pretrained=False, **kwargs):
    return _r("seresnet101", pretrained, kwargs, block=_BN, layers=_R101, **_SE)


@register_model
def seresnet152(pretrained=False, **kwargs):
    return _r("seresnet152", pretrained, kwargs, block=_BN, layers=_R152, **_SE)


@register_model
def seresnet152d(pretrained=False, **kwargs):
    return _r("seresnet152d", pretrained, kwargs, block=_BN, layers=_R152, **_DEEP, **_SE)


@register_model
def seresnet200d(pretrained=False, **kwargs):
    return _r("seresnet200d", pretrained, kwargs, block=_BN, layers=_R200, **_DEEP, **_SE)


@register_model
def seresnet269d(pretrained=False, **kwargs):
    return _r("seresnet269d", pretrained, kwargs, block=_BN, layers=_R269, **_DEEP, **_SE)


@register_model
def seresnext26d_32x4d(pretrained=False, **kwargs):
    return _r("seresnext26d_32x4d", pretrained, kwargs, block=_BN, layers=(2, 2, 2, 2), **_X32x4, **_DEEP, **_SE)


@register_model
def seresnext26t_32x4d(pretrained=False, **kwargs):
    return _r("seresnext26t_32x4d", pretrained, kwargs, block=_BN, layers=(2, 2, 2, 2), **_X32x4, **_TIERED,
              **_SE)


@register_model
def seresnext101_32x4d(pretrained=False, **kwargs):
    return _r("seresnext101_32x4d", pretrained, kwargs, block=_BN, layers=_R101, **_X32x4, **_SE)


@register_model
def seresnext101_32x8d(pretrained=False, **kwargs):
    return _r("seresnext101_32x8d", pretrained, kwargs, block=_BN, layers=_R101, **_X32x8, **_SE)


@register_model
def seresnext101d_32x8d(pretrained=False, **kwargs):
    return _r("seresnext101d_32x8d", pretrained, kwargs, block=_BN, layers=_R101, **_X32x8, **_DEEP, **_SE)


@register_model
def seresnext101_64x4d(pretrained=False, **kwargs):
    return _r("seresnext101_64x4d", pretrained, kwargs, block=_BN, layers=_R101, **_X64x4, **_SE)


@register_model
def ecaresnet26t(pretrained=False, **kwargs):
    return _r("ecaresnet26t", pretrained, kwargs, block=_BN, layers=(2, 2, 2, 2), **_TIERED, **_ECA)


@register_model
def ecaresnetlight(pretrained=False, **kwargs):
    """7x7 stem (timm passes stem_width=32, unused without a deep stem), avg-pool downsample, ECA."""
    return _r("ecaresnetlight", pretrained, kwargs, block=_BN, layers=(1, 1, 11, 3), stem_width=32,
              avg_down=True, **_ECA)


@register_model
def ecaresnet50d(pretrained=False, **kwargs):
    return _r("ecaresnet50d", pretrained, kwargs, block=_BN, layers=_R50, **_DEEP, **_ECA)


@register_model
def ecaresnet50t(pretrained=False, **kwargs):
    return _r("ecaresnet50t", pretrained, kwargs, block=_BN, layers=_R50, **_TIERED, **_ECA)


@register_model
def ecaresnet101d(pretrained=False, **kwargs):
    return _r("ecaresnet101d", pretrained, kwargs, block=_BN, layers=_R101, **_DEEP, **_ECA)


@register_model
def ecaresnet200d(pretrained=False, **kwargs):
    return _r("ecaresnet200d", pretrained, kwargs, block=_BN, layers=_R200, **_DEEP, **_ECA)


@register_model
def ecaresnet269d(pretrained=False, **kwargs):
    return _r("ecaresnet269d", pretrained, kwargs, block=_BN, layers=_R269, **_DEEP, **_ECA)


register_model_alias("resnext50", "resnext50_32x4d")


# --- torchvision's builders: its ResNet has these modules and parameter names -----------------------------

_TV_WEIGHTS = {  # torchvision builder -> (enum, DEFAULT member, rows as in _api.tv_weights_enums)
    "resnet18": ("ResNet18_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnet18-f37072fd.pth", 11689512, (1, 1), 224, 256, "bilinear", 69.758, 89.078),
    ]),
    "resnet34": ("ResNet34_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnet34-b627a593.pth", 21797672, (1, 1), 224, 256, "bilinear", 73.314, 91.42),
    ]),
    "resnet50": ("ResNet50_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet50-0676ba61.pth", 25557032, (1, 1), 224, 256, "bilinear", 76.13, 92.862),
        ("IMAGENET1K_V2", "resnet50-11ad3fa6.pth", 25557032, (1, 1), 224, 232, "bilinear", 80.858, 95.434),
    ]),
    "resnet101": ("ResNet101_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet101-63fe2227.pth", 44549160, (1, 1), 224, 256, "bilinear", 77.374, 93.546),
        ("IMAGENET1K_V2", "resnet101-cd907fc2.pth", 44549160, (1, 1), 224, 232, "bilinear", 81.886, 95.78),
    ]),
    "resnet152": ("ResNet152_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet152-394f9c45.pth", 60192808, (1, 1), 224, 256, "bilinear", 78.312, 94.046),
        ("IMAGENET1K_V2", "resnet152-f82ba261.pth", 60192808, (1, 1), 224, 232, "bilinear", 82.284, 96.002),
    ]),
    "resnext50_32x4d": ("ResNeXt50_32X4D_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnext50_32x4d-7cdf4587.pth", 25028904, (1, 1), 224, 256, "bilinear", 77.618, 93.698),
        ("IMAGENET1K_V2", "resnext50_32x4d-1a0047aa.pth", 25028904, (1, 1), 224, 232, "bilinear", 81.198, 95.34),
    ]),
    "resnext101_32x8d": ("ResNeXt101_32X8D_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnext101_32x8d-8ba56ff5.pth", 88791336, (1, 1), 224, 256, "bilinear", 79.312, 94.526),
        ("IMAGENET1K_V2", "resnext101_32x8d-110c445d.pth", 88791336, (1, 1), 224, 232, "bilinear", 82.834, 96.228),
    ]),
    "resnext101_64x4d": ("ResNeXt101_64X4D_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnext101_64x4d-173b62eb.pth", 83455272, (1, 1), 224, 232, "bilinear", 83.246, 96.454),
    ]),
    "wide_resnet50_2": ("Wide_ResNet50_2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "wide_resnet50_2-95faca4d.pth", 68883240, (1, 1), 224, 256, "bilinear", 78.468, 94.086),
        ("IMAGENET1K_V2", "wide_resnet50_2-9ba9bcbe.pth", 68883240, (1, 1), 224, 232, "bilinear", 81.602, 95.758),
    ]),
    "wide_resnet101_2": ("Wide_ResNet101_2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "wide_resnet101_2-32ee1156.pth", 126886696, (1, 1), 224, 256, "bilinear", 78.848, 94.284),
        ("IMAGENET1K_V2", "wide_resnet101_2-d733dc28.pth", 126886696, (1, 1), 224, 232, "bilinear", 82.51, 96.02),
    ]),
}

_BB, _BT = dict(block=BasicBlockTV), dict(block=BottleneckTV)
_TV_ARGS = {  # torchvision's ResNet arguments per builder
    "resnet18": dict(_BB, layers=(2, 2, 2, 2)), "resnet34": dict(_BB, layers=(3, 4, 6, 3)),
    "resnet50": dict(_BT, layers=(3, 4, 6, 3)), "resnet101": dict(_BT, layers=(3, 4, 23, 3)),
    "resnet152": dict(_BT, layers=(3, 8, 36, 3)),
    "resnext50_32x4d": dict(_BT, layers=(3, 4, 6, 3), groups=32, width_per_group=4),
    "resnext101_32x8d": dict(_BT, layers=(3, 4, 23, 3), groups=32, width_per_group=8),
    "resnext101_64x4d": dict(_BT, layers=(3, 4, 23, 3), groups=64, width_per_group=4),
    "wide_resnet50_2": dict(_BT, layers=(3, 4, 6, 3), width_per_group=128),
    "wide_resnet101_2": dict(_BT, layers=(3, 4, 23, 3), width_per_group=128),
}


def _tv_resnet(name, weights, **kwargs):
    """torchvision's layout (``ResNetTV``: a shared ``relu`` per block, ``avgpool`` + ``flatten``); the state
    dict keys are timm's ResNet's too."""
    return ResNetTV(**{**_TV_ARGS[name], **kwargs})


define_tv_builders(globals(), tv_weights_enums(__name__, _TV_WEIGHTS), _tv_resnet)
register_tv_counterpart({n: n for n in _TV_WEIGHTS})
