"""Attention layer by name (timm's ``get_attn`` / ``create_attn``), for blocks that take ``attn_layer=``."""
from functools import partial

from flowvision.backend import nn

from .cbam import CbamModule, LightCbamModule
from .eca import CecaModule, EcaModule
from .global_context import GlobalContext
from .non_local_attn import NonLocalAttn
from .squeeze_excite import SEModule

_ATTN_LAYERS = {
    "se": SEModule,
    "eca": EcaModule,
    "ecam": partial(EcaModule, use_mlp=True),
    "ceca": CecaModule,
    "gc": GlobalContext,
    "gca": partial(GlobalContext, fuse_add=True, fuse_scale=False),
    "cbam": CbamModule,
    "lcbam": LightCbamModule,
    "nl": NonLocalAttn,
}


def get_attn(attn_type):
    """A layer class (or partial) from a name, True (= 'se'), a class, a module instance, or None/''/False."""
    if isinstance(attn_type, nn.Module):
        return attn_type
    if attn_type is None or attn_type is False or attn_type == "":
        return None
    if attn_type is True:
        return SEModule
    if isinstance(attn_type, str):
        try:
            return _ATTN_LAYERS[attn_type.lower()]
        except KeyError:
            raise ValueError(f"unknown attention layer {attn_type!r}; known: {sorted(_ATTN_LAYERS)}") from None
    return attn_type


def create_attn(attn_type, channels, **kwargs):
    """``get_attn(attn_type)(channels, **kwargs)``, or None when no attention is asked for."""
    module_cls = get_attn(attn_type)
    return module_cls(channels, **kwargs) if module_cls is not None else None
