"""Weight initialisers used by the model families."""
import math

import numpy as np

from flowvision import backend as flow
from flowvision.backend.nn import init


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Truncated normal in absolute bounds [a, b] (same distribution as torch.nn.init.trunc_normal_).

    Rejection sampling from the engine's normal generator (seeded by ``flowvision.backend.manual_seed``):
    much faster than the inverse-CDF path for the usual bounds of +-2 std.
    """
    if not (a < b):
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    n = tensor.numel()
    out = np.empty(n, dtype=np.float64)
    todo = np.arange(n)
    for _ in range(100):
        if todo.size == 0:
            break
        draw = flow.randn(todo.size, dtype=flow.float64).numpy() * std + mean
        ok = (draw >= a) & (draw <= b)
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    if todo.size:  # bounds far in a tail: fall back to clipping the rest
        out[todo] = np.clip(flow.randn(todo.size, dtype=flow.float64).numpy() * std + mean, a, b)
    with flow.no_grad():
        tensor.copy_(flow.from_numpy(out.reshape(tuple(tensor.shape)).astype(np.float32)).to(tensor.dtype))
    return tensor


def _fans(tensor):
    shape = tuple(tensor.shape)
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    fan_in = shape[1] * receptive if len(shape) > 1 else shape[0]
    fan_out = shape[0] * receptive
    return fan_in, fan_out


def variance_scaling_(tensor, scale=1.0, mode="fan_in", distribution="normal"):
    fan_in, fan_out = _fans(tensor)
    denom = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    variance = scale / denom
    if distribution == "truncated_normal":
        # std of a standard normal truncated to (-2, 2)
        return trunc_normal_(tensor, std=math.sqrt(variance) / 0.87962566103423978, a=-2 * math.sqrt(variance) /
                             0.87962566103423978, b=2 * math.sqrt(variance) / 0.87962566103423978)
    if distribution == "normal":
        return init.normal_(tensor, std=math.sqrt(variance))
    bound = math.sqrt(3 * variance)
    return init.uniform_(tensor, -bound, bound)


def lecun_normal_(tensor):
    return variance_scaling_(tensor, mode="fan_in", distribution="truncated_normal")
