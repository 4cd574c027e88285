"""Activation layers by name."""
from flowvision.backend import nn

_ACT_LAYERS = {
    "relu": nn.ReLU, "relu6": nn.ReLU6, "gelu": nn.GELU, "silu": nn.SiLU, "swish": nn.SiLU,
    "sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "hard_sigmoid": nn.Hardsigmoid, "hard_swish": nn.Hardswish,
    "hardsigmoid": nn.Hardsigmoid, "hardswish": nn.Hardswish, "mish": nn.Mish, "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU, "prelu": nn.PReLU, "selu": nn.SELU, "identity": nn.Identity,
}


def get_act_layer(name="relu"):
    """A layer class from a name (``'relu'``, ``'gelu'``, ...), a class, or None."""
    if name is None:
        return None
    if not isinstance(name, str):
        return name
    if name == "":
        return None
    try:
        return _ACT_LAYERS[name]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; known: {sorted(_ACT_LAYERS)}") from None


def create_act_layer(name, inplace=None, **kwargs):
    layer = get_act_layer(name)
    if layer is None:
        return None
    if inplace is None or layer not in (nn.ReLU, nn.ReLU6, nn.SiLU, nn.Hardswish, nn.Hardsigmoid, nn.ELU,
                                        nn.LeakyReLU, nn.SELU, nn.Mish):
        return layer(**kwargs)
    return layer(inplace=inplace, **kwargs)
