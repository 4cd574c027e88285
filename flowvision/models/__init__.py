"""flowvision.models: the model zoo.

timm-style registry (``create_model``, ``list_models``; parameter names equal timm's) and, over the same
modules, torchvision's API (``resnet50(weights=...)``, ``vit_b_16``, ``*_Weights``, ``get_model``,
``get_model_weights``, ``get_weight``; ``list_models(module=..., include=..., exclude=...)``).
"""
from ._api import (ImageClassification, Weights, WeightsEnum, get_model, get_model_builder, get_model_weights,
                   get_weight)
from ._builder import build_model_with_cfg, load_checkpoint, load_pretrained
from ._data import create_eval_transform, imagenet_class_names, resolve_data_config
from ._factory import create_model
from ._features import FeatureGetterNet, FeatureInfo, FeatureListNet
from ._pretrained import PretrainedCfg, generate_default_cfgs
from ._registry import (get_arch_pretrained_cfgs, get_pretrained_cfg, get_pretrained_cfg_value, is_model,
                        is_model_pretrained, list_aliases, list_models, list_modules, list_pretrained,
                        model_entrypoint,
                        register_model, register_model_alias, split_model_name_tag)
from .resnet import *  # noqa: F401,F403
from .vision_transformer import *  # noqa: F401,F403
from .efficientnet import *  # noqa: F401,F403
from .swin_transformer import *  # noqa: F401,F403
from .convnext import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .mobilenetv3 import *  # noqa: F401,F403
from .mlp_mixer import *  # noqa: F401,F403
from .regnet import *  # noqa: F401,F403
from .alexnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .shufflenetv2 import *  # noqa: F401,F403
from .mnasnet import *  # noqa: F401,F403
from .googlenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .swin_v2 import *  # noqa: F401,F403
from .maxvit import *  # noqa: F401,F403
from .res2net import *  # noqa: F401,F403
from .resnest import *  # noqa: F401,F403
from .senet import *  # noqa: F401,F403
from .ghostnet import *  # noqa: F401,F403
from .rexnet import *  # noqa: F401,F403
from .dla import *  # noqa: F401,F403
from .cait import *  # noqa: F401,F403
from .metaformer import *  # noqa: F401,F403
from .convmixer import *  # noqa: F401,F403
from .pvt_v2 import *  # noqa: F401,F403
from .pvt import *  # noqa: F401,F403
from .levit import *  # noqa: F401,F403
from .hrnet import *  # noqa: F401,F403
from .mobilevit import *  # noqa: F401,F403
from .byobnet import *  # noqa: F401,F403
from .van import *  # noqa: F401,F403
from .iresnet import *  # noqa: F401,F403
from .uniformer import *  # noqa: F401,F403
from .cswin import *  # noqa: F401,F403
from .crossformer import *  # noqa: F401,F403
from .regionvit import *  # noqa: F401,F403
from .fan import *  # noqa: F401,F403
from .rexnet_lite import *  # noqa: F401,F403
from .convnext_isotropic import *  # noqa: F401,F403
from . import _original_zoo  # noqa: F401  (the original zoo's names torchvision lacks)
from .style_transfer import FastNeuralStyle, fast_neural_style  # noqa: F401
from ._api import (TV_TO_TIMM, convert_torchvision_state_dict, create_model_from_torchvision,  # noqa: F401
                   load_torchvision_checkpoint)


def __getattr__(name):
    # torchvision exposes these subpackages as attributes (models.detection.fasterrcnn_resnet50_fpn)
    if name in ("detection", "segmentation", "feature_extraction"):
        import importlib
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name in list_aliases(name):  # the original flowvision's builder names (models.cait_S24_224(...))
        return _alias_builder(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _alias_builder(alias):
    def build(pretrained=False, **kwargs):
        return create_model(alias, pretrained=pretrained, **kwargs)
    build.__name__ = build.__qualname__ = alias
    build.__doc__ = f"``create_model({alias!r}, ...)``: an alias of ``{list_aliases(alias)[alias]}``."
    return build
