"""flowvision.backend: the tensor engine ("flow") with a PyTorch-shaped API.

    from flowvision import backend as flow
    x = flow.randn(2, 3, requires_grad=True)
    (x.relu() * 2).sum().backward()
"""
from . import _dtype
from ._dtype import (  # noqa: F401
    dtype, float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool, float, double, half, long,
    int, short, promote_types, get_default_dtype, set_default_dtype, can_cast, complex64, complex128, cfloat, cdouble,
)
from ._device import device  # noqa: F401
from ._tensor import Tensor, Size  # noqa: F401
from . import _methods  # noqa: F401  (binds ops onto Tensor)
from ._creation import (  # noqa: F401
    tensor, as_tensor, asarray, from_numpy, from_dlpack, zeros, ones, empty, full, zeros_like, ones_like,
    empty_like, full_like, arange, linspace, logspace, eye, meshgrid, rand, randn, randint, randint_like,
    rand_like, randn_like, randperm, normal, bernoulli, multinomial,
)
from ._ops.elementwise import *  # noqa: F401,F403
from ._ops.elementwise import abs, round, pow  # noqa: F401
from ._ops.shape import (  # noqa: F401
    view, reshape, flatten, unflatten, permute, transpose, swapaxes, swapdims, t, movedim, moveaxis, squeeze,
    unsqueeze, expand, broadcast_to, broadcast_tensors, contiguous, clone, narrow, select, split, tensor_split,
    chunk, unbind, cat, concat, concatenate, stack, hstack, vstack, flip, fliplr, flipud, roll, repeat_interleave,
    tile, gather, scatter, scatter_add, index_select, take, masked_select, index_put, tril, triu, diagonal, diag,
    trace,
)
from ._ops.shape import broadcast_shapes as _bs  # noqa: F401
from ._ops._util import broadcast_shapes  # noqa: F401
from ._ops.reduce import (  # noqa: F401
    sum, mean, nansum, nanmean, var, std, var_mean, std_mean, max, min, amax, amin, aminmax, argmax, argmin, prod,
    cumsum, cumprod, logsumexp, norm, dist, sort, argsort, msort, topk, kthvalue, median, any, all, count_nonzero,
    unique, bincount, histc,
)
from ._ops.linalg import matmul, mm, bmm, mv, dot, inner, outer, ger, addmm, baddbmm, addbmm, einsum  # noqa: F401
from ._dtype import result_type  # noqa: F401
from .random import Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state, default_generator  # noqa: F401
from ._print import set_printoptions  # noqa: F401
from . import autograd  # noqa: F401
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled  # noqa: F401
from ._threads import set_num_threads, get_num_threads, cpu_isa, cpu_isa_reason, supported_isas  # noqa: F401
from . import memory  # noqa: F401  (installs the caching allocator for numpy arrays)
from .serialization import save, load  # noqa: F401
from ._capture import compile, CompiledModule  # noqa: F401,A004  (the captured inference path)
from ._flags import (  # noqa: F401
    use_deterministic_algorithms, are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
    set_float32_matmul_precision, get_float32_matmul_precision, set_deterministic_debug_mode,
    get_deterministic_debug_mode,
)
from ._extras import *  # noqa: F401,F403  (torch top-level functions composed from the ops above)
from ._ops.complex import (  # noqa: F401,A004  (complex tensors; also binds .real/.imag/.conj()/.angle())
    real, imag, conj, conj_physical, resolve_conj, is_conj, angle, view_as_real, view_as_complex, complex, polar,
)
from . import _torch_interop
_torch_interop.install()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


_LAZY = ("nn", "optim", "cuda", "utils", "accelerator", "backends", "amp", "jit", "onnx", "hub", "linalg", "fft",
         "distributions", "multiprocessing", "distributed", "special")


def __getattr__(name):
    # heavier subpackages load on first use
    import importlib
    if name in _LAZY:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'flowvision.backend' has no attribute {name!r}") from None
        globals()[name] = mod
        return mod
    if name in ("autocast", "GradScaler"):
        from . import amp
        return getattr(amp, name)
    raise AttributeError(f"module 'flowvision.backend' has no attribute {name!r}")
