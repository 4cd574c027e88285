"""A small multiply-accumulate counter over the engine's ops (the convention of the model papers' FLOPs tables).

``count_macs(model, x)`` runs one forward pass and adds up the multiply-accumulates of every ``Conv2d`` and
``Linear`` module, every ``scaled_dot_product_attention`` call (the two products ``QK^T`` and ``AV``) and every
matrix product written as ``a @ b`` / ``flow.matmul`` outside those modules. Elementwise ops, norms, softmax
and pooling are not counted (fvcore and the papers' own counters leave them out too).
"""
from contextlib import contextmanager
from math import prod
from typing import Dict

__all__ = ["count_macs"]


@contextmanager
def _patched(obj, name, wrapper):
    original = getattr(obj, name)
    setattr(obj, name, wrapper(original))
    try:
        yield
    finally:
        setattr(obj, name, original)


def count_macs(model, x, by_kind: bool = False):
    """Multiply-accumulates of ``model(x)`` (one forward, no autograd).

    Args:
        model: a flowvision.backend ``nn.Module`` (put it in eval mode first for deterministic counts).
        x: the input tensor (batch size 1 for the papers' per-image numbers).
        by_kind: return ``{'conv': ..., 'linear': ..., 'attention': ..., 'matmul': ...}`` instead of the total.

    Returns:
        The total number of multiply-accumulates (an int), or the per-kind dict.
    """
    import flowvision.backend as flow
    import flowvision.backend.nn.functional as F
    from flowvision.backend import nn

    counts: Dict[str, int] = {"conv": 0, "linear": 0, "attention": 0, "matmul": 0}
    depth = [0]  # > 0 while inside a Conv2d/Linear: their internal matmuls are already counted by the hook

    def pre_hook(mod, inp):
        depth[0] += 1

    def hook(mod, inp, out):
        depth[0] -= 1
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            counts["conv"] += out.numel() * (mod.in_channels // mod.groups) * k
        else:
            counts["linear"] += out.numel() // out.shape[-1] * mod.in_features * mod.out_features

    def sdpa(original):
        def wrapped(q, k, v, *args, **kwargs):
            batch = prod(q.shape[:-2])
            counts["attention"] += batch * q.shape[-2] * k.shape[-2] * (q.shape[-1] + v.shape[-1])
            depth[0] += 1
            try:
                return original(q, k, v, *args, **kwargs)
            finally:
                depth[0] -= 1
        return wrapped

    def matmul(original):
        def wrapped(a, b, *args, **kwargs):
            if depth[0] == 0 and a.ndim >= 2 and b.ndim >= 2:
                batch = prod(a.shape[:-2]) if a.ndim >= b.ndim else prod(b.shape[:-2])
                counts["matmul"] += batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
            return original(a, b, *args, **kwargs)
        return wrapped

    mods = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    handles = [m.register_forward_pre_hook(pre_hook) for m in mods] + [m.register_forward_hook(hook) for m in mods]
    try:
        with _patched(F, "scaled_dot_product_attention", sdpa), _patched(flow.Tensor, "__matmul__", matmul), \
                _patched(flow, "matmul", matmul), flow.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return dict(counts) if by_kind else sum(counts.values())
