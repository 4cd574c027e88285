"""OneFlow-style autotest harness: run one op on flowvision.backend and on torch with the same inputs and
compare forward outputs (values, shapes, dtypes) and every input gradient.

An op is ONE entry::

    Op("add", lambda L, x, y, **kw: L.m.add(x, y, **kw),
       inputs=[T("abc"), T("bc", bcast=True)], dtypes=ALL, variants=[{}, {"alpha": 2}])

* ``L`` is the library namespace (``FLOW`` or ``TORCH``): ``L.m`` is ``flowvision.backend`` / ``torch``,
  ``L.F`` the functional module, ``L.tensor(numpy_array)`` builds a constant tensor (index tensors etc.).
  Give ``th=`` as well when the torch call differs from the flowvision one.
* ``inputs`` are specs: ``T(shape, ...)`` for a tensor (shape letters are random sizes shared across the
  inputs of one case, see ``dims``), ``Scalar(...)`` for a Python number, ``Arr(...)`` / a callable
  ``f(rng, dims, dtype) -> Arr | value`` for anything else.
* ``dtypes`` the dtypes to run (float32/float64 get forward + all input gradients; float16/bfloat16 forward
  only with looser tolerance; int/bool forward with exact comparison and the result dtype checked).
* ``variants`` keyword-argument sets; a value may be a callable ``f(rng, dims)`` evaluated per case.

Every case uses a seeded RNG (stable across runs), random sizes, and random memory layouts for the tensor
inputs (contiguous, transposed, strided with gaps); ``zero=`` names size letters that one extra case sets to 0.
"""
import zlib
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as TF

import flowvision.backend as flow
import flowvision.backend.nn.functional as FF

FLOAT = ("float32", "float64")
HALF = ("float16", "bfloat16")
ALLF = FLOAT + HALF
INTS = ("int64", "int32", "uint8")
ALL = ALLF + INTS + ("bool",)

# default tolerances (rtol, atol). float16/bfloat16: one rounding of the result is 2^-11 / 2^-8 relative,
# and torch may round intermediates differently from flowvision (which computes half types in float32 or
# float16 numpy and rounds at op boundaries), so a few ulps are allowed.
TOL = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-9),
    "float16": (5e-3, 5e-3),
    "bfloat16": (3e-2, 3e-2),
}


class Lib:
    def __init__(self, name, m, F):
        self.name, self.m, self.F = name, m, F

    def dtype(self, name):
        return getattr(self.m, name)

    def tensor(self, a, dtype=None):
        """A constant (no-grad) tensor from a numpy array / list (dtype name optional)."""
        a = np.asarray(a)
        if dtype is None:
            dtype = a.dtype.name if a.dtype != np.float64 else "float32"
        return self.m.tensor(a.astype(np.float32) if dtype == "bfloat16" else a, dtype=self.dtype(dtype))

    def __repr__(self):
        return self.name


FLOW = Lib("flow", flow, FF)
TORCH = Lib("torch", torch, TF)


@dataclass
class T:
    """A tensor input. ``shape``: tuple/str of ints and size letters (``"abc"`` == ``("a", "b", "c")``)."""
    shape: object
    kind: str = "normal"          # normal | uniform | pos | int | bool | index | distinct | unit | nonzero
    low: float = -3.0
    high: float = 3.0
    dtype: str = None             # fixed dtype name (default: the case's dtype)
    grad: bool = True             # requires_grad when the case dtype is float32/float64
    bcast: bool = False           # randomly drop leading dims / set dims to 1 (broadcasting)
    layouts: tuple = ("contig", "transposed", "noncontig")
    scale: float = 1.0


@dataclass
class Scalar:
    """A Python scalar input: kind float | int | bool."""
    kind: str = "float"
    low: float = -3.0
    high: float = 3.0


@dataclass
class Arr:
    """A pre-built input value (from a callable spec): numpy array -> tensor (dtype: its own, float -> case)."""
    value: object
    grad: bool = False
    dtype: str = None
    layout: str = "contig"


@dataclass
class Op:
    name: str
    fv: object                    # f(L, *inputs, **kwargs) run with L=FLOW (and L=TORCH unless th is given)
    inputs: list
    dtypes: tuple = ALLF
    variants: list = field(default_factory=lambda: [{}])
    th: object = None
    dims: dict = field(default_factory=dict)   # letter -> (low, high) inclusive; default (1, 5)
    zero: tuple = ()              # letters that one extra case sets to size 0
    n: int = 2                    # random cases per (dtype, variant) for float32/float64 (1 for others)
    grad: bool = True
    tol: dict = field(default_factory=dict)     # dtype -> (rtol, atol) overrides (documented at the entry)
    grad_tol: dict = field(default_factory=dict)
    why: str = ""                 # the documented reason for tolerance overrides / restrictions
    check_dtype: bool = True

    def torch_fn(self):
        return self.th or self.fv


# ------------------------------------------------------------------ input building
def _seed(*parts):
    return zlib.crc32("|".join(map(str, parts)).encode())


def _letters(shape):
    return tuple(shape) if not isinstance(shape, str) else tuple(shape)


class _Dims(dict):
    """Size letters; one first used inside a callable shape is drawn on first use."""

    def __init__(self, rng, ranges):
        super().__init__()
        self._rng, self._ranges = rng, ranges

    def __missing__(self, k):
        lo, hi = self._ranges.get(k, (1, 5))
        v = self[k] = int(self._rng.integers(lo, hi + 1))
        return v


def resolve_dims(op, rng, zero_letter=None):
    letters = set()
    for spec in op.inputs:
        if isinstance(spec, T):
            letters.update(s for s in _letters(spec.shape) if isinstance(s, str))
    letters.update(op.dims)
    d = _Dims(rng, op.dims)
    for k in sorted(letters):
        lo, hi = op.dims.get(k, (1, 5))
        d[k] = int(rng.integers(lo, hi + 1))
    if zero_letter is not None:
        d[zero_letter] = 0
    return d


def _shape(spec, d, rng):
    shp = []
    for s in _letters(spec.shape):
        if callable(s):
            shp.append(int(s(d)))
        elif isinstance(s, str):
            shp.append(d[s])
        else:
            shp.append(int(s))
    if spec.bcast:
        drop = int(rng.integers(0, len(shp) + 1)) if rng.random() < 0.3 else 0
        shp = shp[drop:]
        shp = [1 if rng.random() < 0.3 else s for s in shp]
    return tuple(shp)


def _values(spec, shape, dt, rng, d):
    kind = spec.kind
    n = int(np.prod(shape))
    if kind == "index":
        hi = d[spec.high] if isinstance(spec.high, str) else int(spec.high)
        return rng.integers(0, max(hi, 1), shape).astype(np.int64)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if kind == "nonzero":
        if dt in INTS:
            v = rng.integers(1, 5, shape)
            return v if dt == "uint8" else v * rng.choice([-1, 1], shape)
        return rng.uniform(0.5, 3.0, shape) * rng.choice([-1.0, 1.0], shape)
    if kind == "distinct":  # distinct values, exactly representable in every dtype (no ties)
        v = rng.permutation(n).astype(np.float64)
        if dt == "uint8":
            return v.reshape(shape)
        v -= n // 2
        return (v if dt in INTS else v / 8.0).reshape(shape)
    if dt in INTS or kind == "int":
        if kind in ("pos", "unit"):
            lo, hi = 1, 6
        elif kind == "int":
            lo, hi = int(spec.low), int(spec.high)
            if dt == "uint8":
                lo, hi = max(lo, 0), max(hi, 1)
        else:
            lo, hi = (0, 10) if dt == "uint8" else (-5, 6)
        return rng.integers(lo, hi, shape)
    if kind == "uniform":
        return rng.uniform(spec.low, spec.high, shape)
    if kind == "pos":
        return rng.uniform(0.5, 2.5, shape)
    if kind == "unit":
        return rng.uniform(0.05, 0.95, shape)
    return rng.standard_normal(shape) * spec.scale


def round_to(a, dt):
    """Round float64 values to what ``dt`` can hold (so both libraries see identical inputs)."""
    if dt == "bfloat16":
        return torch.from_numpy(np.asarray(a, np.float32)).to(torch.bfloat16).float().numpy().astype(np.float64)
    if dt in ("float16", "float32", "float64"):
        return np.asarray(a).astype(dt).astype(np.float64)
    if dt == "bool":
        return np.asarray(a).astype(bool)
    return np.asarray(a).astype(dt)


@dataclass
class Input:
    value: np.ndarray             # exact values (float64 for float dtypes)
    dtype: str
    grad: bool
    layout: str

    def describe(self):
        return f"{self.dtype}{list(self.value.shape)}{'' if self.layout == 'contig' else '/' + self.layout}" + \
            ("*" if self.grad else "")


def _layout_array(v, layout):
    """A fresh numpy array holding ``v``'s values in the requested memory layout."""
    if layout == "transposed" and v.ndim >= 2:
        perm = tuple(reversed(range(v.ndim)))
        return np.ascontiguousarray(v.transpose(perm)).transpose(perm)
    if layout == "noncontig" and v.ndim >= 1 and v.size:
        buf = np.zeros(v.shape[:-1] + (2 * v.shape[-1],), v.dtype)
        buf[..., ::2] = v
        return buf[..., ::2]
    return np.array(v, copy=True)


def build(inp, L, dtype_override=None):
    if not isinstance(inp, Input):
        return inp
    dt = dtype_override or inp.dtype
    store = {"bfloat16": "float32"}.get(dt, dt)
    arr = _layout_array(inp.value.astype(store), inp.layout)
    if L is TORCH:
        t = torch.from_numpy(arr)
    else:
        t = flow.from_numpy(arr)
    if dt == "bfloat16":
        t = t.to(L.dtype("bfloat16"))
    if inp.grad:
        t.requires_grad_(True)
    return t


def make_inputs(op, dtype, rng, d):
    grad_ok = op.grad and dtype in FLOAT
    out = []
    for spec in op.inputs:
        if callable(spec) and not isinstance(spec, (T, Scalar)):
            spec = spec(rng, d, dtype)
        if isinstance(spec, Scalar):
            if spec.kind == "int" or (dtype in INTS and spec.kind == "float"):
                lo, hi = (1, 4) if dtype == "uint8" else (int(spec.low), int(spec.high) + 1)
                out.append(int(rng.integers(lo, hi)))
            elif spec.kind == "bool":
                out.append(bool(rng.random() < 0.5))
            else:
                out.append(float(np.round(rng.uniform(spec.low, spec.high), 3)))
            continue
        if isinstance(spec, Arr):
            v = spec.value
            if spec.dtype == "raw":  # handed to the op function as the numpy array itself
                out.append(v)
            elif isinstance(v, np.ndarray):
                vdt = spec.dtype or (dtype if v.dtype.kind == "f" else v.dtype.name)
                out.append(Input(round_to(v, vdt), vdt, spec.grad and grad_ok and vdt in FLOAT, spec.layout))
            else:
                out.append(v)
            continue
        if not isinstance(spec, T):
            out.append(spec)
            continue
        dt = spec.dtype or dtype
        shape = _shape(spec, d, rng)
        vals = round_to(_values(spec, shape, dt, rng, d), dt)
        layouts = [lo for lo in spec.layouts if lo != "transposed" or len(shape) >= 2]
        layout = layouts[int(rng.integers(0, len(layouts)))] if layouts else "contig"
        out.append(Input(vals, dt, spec.grad and grad_ok and dt in FLOAT, layout))
    return out


# ------------------------------------------------------------------ comparison
def _flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [out]


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy()
    if isinstance(t, flow.Tensor):
        t = t.detach()
        if t.dtype is flow.bfloat16:
            t = t.float()
        return t.numpy()
    return np.asarray(t)


def dtype_name(t):
    if isinstance(t, torch.Tensor):
        return str(t.dtype).replace("torch.", "")
    if isinstance(t, flow.Tensor):
        return t.dtype.name
    return type(t).__name__


def assert_same(f, t, rtol, atol, what, check_dtype=True):
    if isinstance(t, (bool, int, float)) and not isinstance(t, torch.Tensor):
        assert not isinstance(f, (flow.Tensor,)) or f.numel() == 1, f"{what}: torch gave a Python scalar {t!r}, flow {f!r}"
        np.testing.assert_allclose(float(f), float(t), rtol=rtol, atol=atol, err_msg=what)
        return
    assert isinstance(f, flow.Tensor), f"{what}: flow returned {type(f).__name__}, torch a Tensor"
    assert tuple(f.shape) == tuple(t.shape), f"{what}: shape flow {list(f.shape)} vs torch {list(t.shape)}"
    if check_dtype:
        assert dtype_name(f) == dtype_name(t), f"{what}: dtype flow {dtype_name(f)} vs torch {dtype_name(t)}"
    a, b = to_numpy(f), to_numpy(t)
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)


def _needs_fallback(e):
    s = str(e)
    return "not implemented for" in s and ("Half" in s or "BFloat16" in s)


def run_case(op, dtype, variant, seed, zero_letter=None):
    rng = np.random.default_rng(_seed(op.name, dtype, repr(sorted(variant)), seed, zero_letter))
    d = resolve_dims(op, rng, zero_letter)
    kw = {k: (v(rng, d) if callable(v) else v) for k, v in variant.items()}
    inputs = make_inputs(op, dtype, rng, d)
    desc = (f"op={op.name} dtype={dtype} kwargs={kw} dims={d} seed={seed} inputs="
            f"[{', '.join(i.describe() if isinstance(i, Input) else repr(i) for i in inputs)}]")

    t_in = [build(i, TORCH) for i in inputs]
    fallback = False
    try:
        t_out = op.torch_fn()(TORCH, *t_in, **kw)
    except RuntimeError as e:
        if not (dtype in HALF and _needs_fallback(e)):
            raise
        # torch has no CPU kernel for this op in this dtype: reference computed in float32 from the same values
        fallback = True
        t_in = [build(i, TORCH, "float32" if isinstance(i, Input) and i.dtype == dtype else None) for i in inputs]
        t_out = op.torch_fn()(TORCH, *t_in, **kw)
    f_in = [build(i, FLOW) for i in inputs]
    f_out = op.fv(FLOW, *f_in, **kw)

    fo, to = _flat(f_out), _flat(t_out)
    assert len(fo) == len(to), f"{desc}: flow returned {len(fo)} outputs, torch {len(to)}"
    def tol_for(t, table):
        # the case dtype's tolerance; an integer case with a float result uses the result dtype's
        dn = dtype_name(t) if isinstance(t, torch.Tensor) else "float64"
        tol = table.get(dtype) or op.tol.get(dtype) or TOL.get(dtype) or TOL.get(dn, (0, 0))
        if dtype in INTS + ("bool",) and dn in TOL:
            tol = table.get(dn) or op.tol.get(dn) or TOL[dn]
        return (tol[0] * 2, tol[1] * 2) if fallback else tol

    for k, (a, b) in enumerate(zip(fo, to)):
        rtol, atol = tol_for(b, {})
        assert_same(a, b, rtol, atol, f"{desc}: output {k}", op.check_dtype and not fallback)

    # gradients: the same random cotangent into every differentiable output
    grads_in = [i for i in inputs if isinstance(i, Input) and i.grad]
    if not grads_in:
        return
    pairs = [(a, b) for a, b in zip(fo, to) if isinstance(b, torch.Tensor) and b.requires_grad]
    if not pairs:
        return
    cots = [rng.standard_normal(tuple(b.shape)) for _, b in pairs]
    torch.autograd.backward([b for _, b in pairs], [torch.from_numpy(c.astype(to_numpy(b).dtype))
                                                     for c, (_, b) in zip(cots, pairs)])
    for a, _ in pairs:
        assert isinstance(a, flow.Tensor) and a.requires_grad, f"{desc}: flow output does not require grad"
    flow.autograd.backward([a for a, _ in pairs], [flow.from_numpy(c.astype(to_numpy(b).dtype))
                                                    for c, (_, b) in zip(cots, pairs)])
    grtol, gatol = op.grad_tol.get(dtype) or op.tol.get(dtype) or TOL[dtype]
    k = 0
    for i, (inp, ft, tt) in enumerate(zip(inputs, f_in, t_in)):
        if not (isinstance(inp, Input) and inp.grad):
            continue
        tg = tt.grad if tt.grad is not None else torch.zeros_like(tt)
        fg = ft.grad
        if fg is None:
            fg = flow.zeros_like(ft)
        assert_same(fg, tg, grtol, gatol, f"{desc}: grad of input {i}")
        k += 1


def run_op(op, dtype):
    n = op.n if dtype in FLOAT else 1
    for variant in op.variants:
        for seed in range(n):
            run_case(op, dtype, variant, seed)
        if dtype == op.dtypes[0] or dtype == "float32":
            for z in op.zero:
                run_case(op, dtype, variant, 0, zero_letter=z)
