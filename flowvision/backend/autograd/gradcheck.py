"""Finite-difference gradient checking in float64 (torch.autograd.gradcheck's contract)."""
import numpy as np


def _numerical_jacobian_vjp(fn, inputs, i, v, eps):
    """d<v, fn(inputs)>/d inputs[i] by central differences."""
    from .._tensor import Tensor
    from .grad_mode import no_grad
    x = inputs[i]
    flat = x._data.reshape(-1)
    g = np.zeros(flat.shape, np.float64)
    with no_grad():
        for k in range(flat.size):  # test utility: loops over elements of small inputs only
            orig = flat[k]
            flat[k] = orig + eps
            plus = _dot(fn(*inputs), v)
            flat[k] = orig - eps
            minus = _dot(fn(*inputs), v)
            flat[k] = orig
            g[k] = (plus - minus) / (2 * eps)
    return g.reshape(x.shape)


def _dot(out, v):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return sum(float(np.sum(o._data.astype(np.float64) * vv)) for o, vv in zip(outs, v) if vv is not None)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, seed=0):
    """Compare analytical input gradients with central differences along a random output direction."""
    from .._tensor import Tensor
    from . import grad as autograd_grad
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t._dtype.name != "float64":
            raise ValueError("gradcheck expects float64 inputs that require grad (got "
                             f"{t._dtype}): float32 finite differences are too noisy")
    rng = np.random.default_rng(seed)
    out = func(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    diff_outs = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
    v = [rng.standard_normal(o.shape) if (isinstance(o, Tensor) and o.requires_grad) else None for o in outs]
    from .._creation import from_numpy
    want = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    analytic = autograd_grad(diff_outs, [inputs[i] for i in want],
                             grad_outputs=[from_numpy(vv) for vv in v if vv is not None], allow_unused=True,
                             retain_graph=True)
    for a, i in zip(analytic, want):
        num = _numerical_jacobian_vjp(func, inputs, i, v, eps)
        ana = np.zeros_like(num) if a is None else a._data
        if not np.allclose(ana, num, atol=atol, rtol=rtol):
            if raise_exception:
                err = np.abs(ana - num).max()
                raise RuntimeError(f"Jacobian mismatch for input {i} (shape {list(inputs[i].shape)}): max abs "
                                   f"difference {err:.3g}\nnumerical:\n{num}\nanalytical:\n{ana}")
            return False
    return True
