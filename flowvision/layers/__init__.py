"""flowvision.layers: building blocks shared by the model families (timm-compatible parameter names)."""
from .activations import create_act_layer, get_act_layer
from .adapt import adapt_input_conv
from .blur_pool import BlurPool2d
from .cbam import CbamModule, LightCbamModule
from .class_attn import ClassAttn
from .classifier import ClassifierHead, NormMlpClassifierHead, SelectAdaptivePool2d, create_classifier
from .conv_bn_act import ConvBnAct, ConvNormAct
from .create_attn import create_attn, get_attn
from .drop import DropBlock2d, DropPath, drop_block_2d, drop_path
from .eca import CecaModule, CircularEfficientChannelAttn, EcaModule, EfficientChannelAttn
from .global_context import GlobalContext
from .helpers import make_divisible, to_1tuple, to_2tuple, to_3tuple, to_ntuple
from .mlp import ConvMlp, GatedMlp, Mlp
from .non_local_attn import NonLocalAttn
from .norm import LayerNorm2d
from .norm_act import BatchNormAct2d, get_norm_act_layer
from .padding import Conv2dSame, create_conv2d, get_padding, get_padding_value, pad_same
from .patch_embed import PatchEmbed
from .squeeze_excite import SEModule, SqueezeExcite
from .weight_init import lecun_normal_, trunc_normal_, variance_scaling_
from .window import window_partition, window_reverse

__all__ = [
    "create_act_layer", "get_act_layer", "adapt_input_conv", "SelectAdaptivePool2d", "create_classifier",
    "ConvBnAct", "ConvNormAct", "DropPath", "drop_path", "make_divisible", "to_1tuple", "to_2tuple", "to_3tuple",
    "to_ntuple", "Mlp", "GatedMlp", "LayerNorm2d", "ClassifierHead", "NormMlpClassifierHead", "BatchNormAct2d", "get_norm_act_layer", "Conv2dSame", "create_conv2d", "get_padding",
    "get_padding_value", "pad_same", "PatchEmbed", "SEModule", "SqueezeExcite", "lecun_normal_", "trunc_normal_",
    "variance_scaling_", "ConvMlp", "EcaModule", "CecaModule", "EfficientChannelAttn",
    "CircularEfficientChannelAttn", "CbamModule", "LightCbamModule", "GlobalContext", "NonLocalAttn",
    "DropBlock2d", "drop_block_2d", "create_attn", "get_attn", "BlurPool2d", "window_partition", "window_reverse",
    "ClassAttn",
]
