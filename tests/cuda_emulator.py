"""A host emulation of the ``_C_cuda`` kernel API, for testing flowvision/backend/_cuda without a GPU.

Each entry point follows the contract of its counterpart in flowvision/backend/csrc/cuda/module.cpp
(shapes, dtypes, outputs), computed with torch on the CPU. With it, tests/test_cuda.py exercises the
whole Python side of the CUDA backend (device tensors, the dispatch table, the op twins, autograd,
autocast) on machines without a GPU; the kernels themselves are only exercised on a GPU.
"""
import numpy as np
import torch
import torch.nn.functional as TF

_TORCH = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int64": torch.int64,
          "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}
_FLOAT = ("float32", "float16", "bfloat16")


class DeviceArray:
    """Emulated device memory: a torch CPU tensor of the storage dtype."""

    def __init__(self, t):
        self.t = t.contiguous()

    shape = property(lambda self: tuple(self.t.shape))
    ndim = property(lambda self: self.t.dim())
    size = property(lambda self: self.t.numel())
    dtype = property(lambda self: str(self.t.dtype).replace("torch.", ""))
    itemsize = property(lambda self: self.t.element_size())
    nbytes = property(lambda self: self.t.numel() * self.t.element_size())
    strides = property(lambda self: tuple(s * self.t.element_size() for s in self.t.stride()))
    flags = property(lambda self: {"C_CONTIGUOUS": True})

    def __repr__(self):
        return f"DeviceArray(shape={list(self.shape)}, dtype={self.dtype})"


def _w(t):
    return DeviceArray(t)


def _f(a):
    """float32 compute copy of a float array."""
    return a.t.float()


def _like(t, a):
    return _w(t.to(a.t.dtype))


class FakeCudaModule:
    DeviceArray = DeviceArray

    def __init__(self):
        self.allocated = 0
        ops = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil",
               "round", "reciprocal", "square", "log1p", "expm1", "sign", "relu", "relu6", "leaky_relu", "elu", "gelu",
               "gelu_tanh", "silu", "hardswish", "hardsigmoid", "mish", "softplus", "clamp", "pow_scalar",
               "add_scalar", "mul_scalar", "hardtanh", "selu", "logsigmoid", "log2", "trunc"]
        self.UNARY_OPS = {n: i for i, n in enumerate(ops)}
        self._unames = ops
        bops = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
                "logical_and", "logical_or", "logical_xor", "remainder", "atan2", "floor_divide"]
        self.BINARY_OPS = {n: i for i, n in enumerate(bops)}
        self._bnames = bops
        self.REDUCE_OPS = {n: i for i, n in enumerate(["sum", "mean", "max", "min", "argmax", "argmin", "prod", "sumsq"])}
        self._rnames = list(self.REDUCE_OPS)

    # ------------------------------------------------------------------ runtime
    def device_count(self):
        return 1

    def device_count_error(self):
        return ""

    def get_device_name(self, i):
        return "flowvision CUDA emulator"

    def supports_tf32(self):
        return False

    def empty(self, shape, dtype):
        return _w(torch.zeros(list(shape), dtype=_TORCH[dtype]))

    def full(self, shape, value, dtype):
        return _w(torch.full(list(shape), value, dtype=_TORCH[dtype]))

    def fill_(self, y, value):
        y.t.fill_(value)

    def from_host(self, arr, dtype):
        arr = np.ascontiguousarray(arr)
        if dtype == "bfloat16":  # uint16 bit patterns
            return _w(torch.from_numpy(arr.astype(np.uint16).view(np.int16).copy()).view(torch.bfloat16))
        return _w(torch.from_numpy(arr.copy()).to(_TORCH[dtype]))

    def to_host(self, a):
        if a.dtype == "bfloat16":
            return a.t.view(torch.int16).numpy().view(np.uint16).copy()
        return a.t.numpy().copy()

    def reshape(self, a, shape):
        return _w(a.t.reshape(list(shape)))

    def copy_(self, dst, src):
        dst.t.copy_(src.t.reshape(dst.t.shape))

    # ------------------------------------------------------------------ elementwise
    def binary(self, op, a, b, alpha=1.0, swap=False):
        name = self._bnames[op]
        x = a.t
        y = b.t if isinstance(b, DeviceArray) else torch.tensor(b, dtype=torch.float64)
        if swap:
            x, y = y, x
        if a.dtype in _FLOAT:
            x, y = x.float(), y.float()
        if name in ("add", "sub") and alpha != 1:
            y = y * alpha
        fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
              "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt,
              "le": torch.le, "gt": torch.gt, "ge": torch.ge, "logical_and": torch.logical_and,
              "logical_or": torch.logical_or, "logical_xor": torch.logical_xor, "remainder": torch.remainder,
              "atan2": torch.atan2, "floor_divide": torch.floor_divide}[name]
        if name in ("maximum", "minimum") and not isinstance(b, DeviceArray):
            y = y.to(x.dtype)
        r = fn(x, y)
        if name in ("eq", "ne", "lt", "le", "gt", "ge"):
            return _w(r)
        return _w(r.to(a.t.dtype))

    def _unary_fn(self, name, p0, p1):
        return {"neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
                "rsqrt": lambda x: torch.rsqrt(x + p0), "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
                "sigmoid": torch.sigmoid, "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil,
                "round": torch.round, "reciprocal": torch.reciprocal, "square": torch.square, "log1p": torch.log1p,
                "expm1": torch.expm1, "sign": torch.sign, "relu": torch.relu, "relu6": TF.relu6,
                "leaky_relu": lambda x: TF.leaky_relu(x, p0), "elu": lambda x: TF.elu(x, p0),
                "gelu": TF.gelu, "gelu_tanh": lambda x: TF.gelu(x, approximate="tanh"), "silu": TF.silu,
                "hardswish": TF.hardswish, "hardsigmoid": TF.hardsigmoid, "mish": TF.mish,
                "softplus": lambda x: TF.softplus(x, p0, p1), "clamp": lambda x: torch.clamp(x, p0, p1),
                "pow_scalar": lambda x: torch.pow(x, p0), "add_scalar": lambda x: x + p0,
                "mul_scalar": lambda x: x * p0, "hardtanh": lambda x: TF.hardtanh(x, p0, p1), "selu": TF.selu,
                "logsigmoid": TF.logsigmoid, "log2": torch.log2, "trunc": torch.trunc}[name]

    def unary(self, op, x, p0=0.0, p1=0.0):
        return _like(self._unary_fn(self._unames[op], p0, p1)(_f(x)), x)

    def unary_backward(self, op, g, x, y, p0=0.0, p1=0.0):
        xt = _f(x).requires_grad_(True)
        out = self._unary_fn(self._unames[op], p0, p1)(xt)
        (gx,) = torch.autograd.grad(out, xt, _f(g))
        return _like(gx, g)

    def cast(self, x, dtype):
        return _w(x.t.to(_TORCH[dtype]))

    @staticmethod
    def _np(t):  # numpy view of a torch tensor (bfloat16 as int16 bits); numpy allows negative strides
        return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()

    def _strided(self, arr, shape, strides, offset):
        flat = self._np(arr.t).reshape(-1)
        return np.lib.stride_tricks.as_strided(flat[offset:], list(shape), [s * flat.itemsize for s in strides])

    def strided_copy(self, x, shape, strides, offset=0):
        v = np.ascontiguousarray(self._strided(x, shape, strides, offset))
        t = torch.from_numpy(v.copy())
        return _w(t.view(torch.bfloat16) if x.dtype == "bfloat16" else t)

    def strided_write(self, src, dst, shape, strides, offset=0):
        v = self._strided(dst, shape, strides, offset)
        v[...] = self._np(src.t).reshape(list(shape))

    def where(self, c, a, b):
        return _w(torch.where(c.t, a.t, b.t))

    def index_select(self, x, dim, idx):
        return _w(torch.index_select(x.t, dim, idx.t))

    def index_add(self, shape, dim, idx, g):
        return _w(torch.zeros(list(shape)).index_add_(dim, idx.t, g.t))

    def reduce(self, op, x, outer, r, inner):
        name = self._rnames[op]
        t = x.t.reshape(outer, r, inner)
        v = t.float() if x.dtype in _FLOAT else t
        if name in ("argmax", "argmin"):
            vals, idx = (torch.max if name == "argmax" else torch.min)(v, dim=1)
            return _w(vals.reshape(-1).to(x.t.dtype)), _w(idx.reshape(-1))
        res = {"sum": lambda: v.sum(1), "mean": lambda: v.mean(1), "max": lambda: v.amax(1), "min": lambda: v.amin(1),
               "prod": lambda: v.prod(1), "sumsq": lambda: (v * v).sum(1)}[name]()
        return _w(res.reshape(-1).to(x.t.dtype)), None

    def softmax_forward(self, x, o, d, i, log):
        t = _f(x).reshape(o, d, i)
        return _like((TF.log_softmax if log else TF.softmax)(t, 1).reshape(x.shape), x)

    def softmax_backward(self, g, y, o, d, i, log):
        gt, yt = _f(g).reshape(o, d, i), _f(y).reshape(o, d, i)
        if log:
            dx = gt - yt.exp() * gt.sum(1, keepdim=True)
        else:
            dx = yt * (gt - (gt * yt).sum(1, keepdim=True))
        return _like(dx.reshape(y.shape), y)

    # ------------------------------------------------------------------ norms
    def layer_norm_forward(self, x, cols, w, b, eps):
        t = _f(x).reshape(-1, cols)
        mean, var = t.mean(1), t.var(1, unbiased=False)
        rstd = torch.rsqrt(var + eps)
        y = TF.layer_norm(t, (cols,), None if w is None else w.t, None if b is None else b.t, eps)
        return _like(y.reshape(x.shape), x), _w(mean), _w(rstd)

    def layer_norm_backward(self, g, x, w, mean, rstd, cols, need_dx, need_dw, need_db):
        t = _f(x).reshape(-1, cols).requires_grad_(True)
        wt = torch.ones(cols) if w is None else w.t.clone()
        wt.requires_grad_(True)
        bt = torch.zeros(cols, requires_grad=True)
        eps = (1.0 / rstd.t ** 2 - t.detach().var(1, unbiased=False))[:, None]  # from the saved rstd
        xhat = (t - t.mean(1, keepdim=True)) / torch.sqrt(t.var(1, unbiased=False, keepdim=True) + eps)
        y = xhat * wt + bt
        gx, gw, gb = torch.autograd.grad(y, (t, wt, bt), _f(g).reshape(-1, cols))
        return (_like(gx.reshape(x.shape), x) if need_dx else None, _w(gw) if need_dw else None,
                _w(gb) if need_db else None)

    def group_norm_forward(self, x, groups, w, b, eps):
        n = x.shape[0]
        t = _f(x)
        tg = t.reshape(n, groups, -1)
        mean, rstd = tg.mean(2), torch.rsqrt(tg.var(2, unbiased=False) + eps)
        y = TF.group_norm(t, groups, None if w is None else w.t, None if b is None else b.t, eps)
        return _like(y, x), _w(mean.reshape(-1)), _w(rstd.reshape(-1))

    def group_norm_backward(self, g, x, w, mean, rstd, groups, need_dx, need_dw, need_db):
        n, c = x.shape[:2]
        t = _f(x).requires_grad_(True)
        wt = (torch.ones(c) if w is None else w.t.clone()).requires_grad_(True)
        bt = torch.zeros(c, requires_grad=True)
        tg = t.reshape(n, groups, -1)
        eps = (1.0 / rstd.t.reshape(n, groups, 1) ** 2 - tg.detach().var(2, unbiased=False, keepdim=True))
        xhat = ((tg - tg.mean(2, keepdim=True)) / torch.sqrt(tg.var(2, unbiased=False, keepdim=True) + eps)
                ).reshape(t.shape)
        shape = [1, c] + [1] * (t.dim() - 2)
        y = xhat * wt.reshape(shape) + bt.reshape(shape)
        gx, gw, gb = torch.autograd.grad(y, (t, wt, bt), _f(g))
        return (_like(gx, x) if need_dx else None, _w(gw) if need_dw else None, _w(gb) if need_db else None)

    def batch_norm_forward(self, x, rm, rv, w, b, training, eps):
        t = _f(x)
        c = t.shape[1]
        dims = [0] + list(range(2, t.dim()))
        if training:
            mean, var = t.mean(dims), t.var(dims, unbiased=False)
            var_u = t.var(dims, unbiased=True)
        else:
            mean, var, var_u = rm.t.clone(), rv.t.clone(), None
        invstd = torch.rsqrt(var + eps)
        shape = [1, c] + [1] * (t.dim() - 2)
        y = (t - mean.reshape(shape)) * invstd.reshape(shape)
        if w is not None:
            y = y * w.t.reshape(shape)
        if b is not None:
            y = y + b.t.reshape(shape)
        return _like(y, x), _w(mean), _w(invstd), (None if var_u is None else _w(var_u))

    def batch_norm_backward(self, g, x, mean, invstd, w, training):
        t, gt = _f(x), _f(g)
        c = t.shape[1]
        dims = [0] + list(range(2, t.dim()))
        shape = [1, c] + [1] * (t.dim() - 2)
        m = t.numel() // c
        xmu = t - mean.t.reshape(shape)
        sum_dy, sum_dy_xmu = gt.sum(dims), (gt * xmu).sum(dims)
        scale = invstd.t * (w.t if w is not None else 1.0)
        if training:
            gx = (gt - (sum_dy / m).reshape(shape) - xmu * (invstd.t ** 2 * sum_dy_xmu / m).reshape(shape)) * \
                scale.reshape(shape)
        else:
            gx = gt * scale.reshape(shape)
        return _like(gx, x), _w(sum_dy_xmu * invstd.t), _w(sum_dy)

    # ------------------------------------------------------------------ pooling
    @staticmethod
    def _ceil(size, out, k, s, p, d):
        return (size + 2 * p - d * (k - 1) - 1) // s + 1 != out

    def max_pool2d_forward(self, x, oh, ow, k, s, p, d, indices):
        ceil = self._ceil(x.shape[-2], oh, k[0], s[0], p[0], d[0]) or self._ceil(x.shape[-1], ow, k[1], s[1], p[1], d[1])
        y, idx = TF.max_pool2d(_f(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
        return _like(y, x), (_w(idx) if indices else None)

    def max_pool2d_backward(self, g, idx, in_shape):
        h, w = in_shape[-2:]
        planes = int(np.prod(in_shape[:-2]))
        dx = torch.zeros(planes, h * w)
        dx.scatter_add_(1, idx.t.reshape(planes, -1), g.t.reshape(planes, -1))
        return _w(dx.reshape(list(in_shape)))

    def avg_pool2d_forward(self, x, oh, ow, k, s, p, cip, div):
        ceil = self._ceil(x.shape[-2], oh, k[0], s[0], p[0], 1) or self._ceil(x.shape[-1], ow, k[1], s[1], p[1], 1)
        y = TF.avg_pool2d(_f(x), k, s, p, ceil_mode=ceil, count_include_pad=cip, divisor_override=div or None)
        return _like(y, x)

    def avg_pool2d_backward(self, g, in_shape, k, s, p, cip, div):
        x = torch.zeros(list(in_shape), requires_grad=True)
        oh, ow = g.shape[-2:]
        ceil = self._ceil(in_shape[-2], oh, k[0], s[0], p[0], 1) or self._ceil(in_shape[-1], ow, k[1], s[1], p[1], 1)
        y = TF.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=cip, divisor_override=div or None)
        (gx,) = torch.autograd.grad(y, x, g.t)
        return _w(gx)

    def adaptive_avg_pool2d_forward(self, x, oh, ow):
        return _like(TF.adaptive_avg_pool2d(_f(x), (oh, ow)), x)

    def adaptive_avg_pool2d_backward(self, g, in_shape):
        x = torch.zeros(list(in_shape), requires_grad=True)
        (gx,) = torch.autograd.grad(TF.adaptive_avg_pool2d(x, tuple(g.shape[-2:])), x, g.t)
        return _w(gx)

    def adaptive_max_pool2d_forward(self, x, oh, ow):
        y, idx = TF.adaptive_max_pool2d(_f(x), (oh, ow), return_indices=True)
        return _like(y, x), _w(idx)

    # ------------------------------------------------------------------ conv / gemm
    def conv2d_forward(self, x, w, b, s, p, d, groups, tf32):
        y = TF.conv2d(_f(x), _f(w), None if b is None else _f(b), s, p, d, groups)
        return _like(y, x)

    def conv2d_backward_data(self, g, w, in_shape, s, p, d, groups, tf32):
        return _w(torch.nn.grad.conv2d_input(list(in_shape), w.t, g.t, s, p, d, groups))

    def conv2d_backward_weight(self, g, x, w_shape, s, p, d, groups, tf32):
        return _w(torch.nn.grad.conv2d_weight(x.t, list(w_shape), g.t, s, p, d, groups))

    def matmul(self, a, b, bias, trans_a, trans_b, alpha=1.0, tf32=False):
        at, bt = _f(a), _f(b)
        if trans_a:
            at = at.transpose(-1, -2)
        if trans_b:
            bt = bt.transpose(-1, -2)
        if at.dim() > 2 and bt.dim() > 2 and at.shape[:-2] != bt.shape[:-2]:
            raise ValueError("matmul: batch dims differ (broadcast them first)")
        y = torch.matmul(at, bt) * alpha
        if bias is not None:
            y = y + _f(bias)
        return _like(y, a)

    # ------------------------------------------------------------------ interpolate / detection
    def upsample_forward(self, x, oh, ow, mode, ac, sh, sw):
        kw = {"align_corners": ac} if mode == "bilinear" else {}
        return _like(TF.interpolate(_f(x), size=(oh, ow), mode=mode, **kw), x)

    def upsample_backward(self, g, in_shape, mode, ac, sh, sw):
        x = torch.zeros(list(in_shape), requires_grad=True)
        kw = {"align_corners": ac} if mode == "bilinear" else {}
        (gx,) = torch.autograd.grad(TF.interpolate(x, size=tuple(g.shape[-2:]), mode=mode, **kw), x, g.t)
        return _w(gx)

    def roi_align_forward(self, x, rois, ph, pw, scale, sampling, aligned):
        from torchvision.ops import roi_align
        return _like(roi_align(_f(x), _f(rois), (ph, pw), scale, sampling, aligned), x)

    def roi_align_backward(self, g, rois, in_shape, scale, sampling, aligned):
        from torchvision.ops import roi_align
        x = torch.zeros(list(in_shape), requires_grad=True)
        y = roi_align(x, rois.t, tuple(g.shape[-2:]), scale, sampling, aligned)
        (gx,) = torch.autograd.grad(y, x, g.t)
        return _w(gx)

    def nms(self, boxes, scores, thr):
        from torchvision.ops import nms
        return _w(nms(boxes.t, scores.t, thr))
