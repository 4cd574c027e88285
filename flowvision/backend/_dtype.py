"""dtypes and torch's type-promotion rules.

A dtype is a small immutable object; ``dtype.np`` is the numpy dtype used for storage. bfloat16 has
no numpy dtype, so it is stored as uint16 bit patterns and computed in float32 (see ``bf16``).
"""
import builtins as _builtins

import numpy as np

_py_float, _py_int, _py_bool = _builtins.float, _builtins.int, _builtins.bool

__all__ = [
    "dtype", "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
    "bool", "float", "double", "half", "long", "int", "short", "promote_types", "result_type",
    "get_default_dtype", "set_default_dtype", "can_cast", "complex64", "complex128", "cfloat", "cdouble",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3  # type categories, in torch's promotion order


class dtype:
    __slots__ = ("name", "np", "itemsize", "category", "rank", "is_signed")

    def __init__(self, name, np_dtype, category, rank, is_signed):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "np", np.dtype(np_dtype))
        object.__setattr__(self, "itemsize", np.dtype(np_dtype).itemsize)
        object.__setattr__(self, "category", category)
        object.__setattr__(self, "rank", rank)
        object.__setattr__(self, "is_signed", is_signed)

    def __setattr__(self, key, value):
        raise AttributeError("dtype objects are immutable")

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        """The complex dtype holding this one's values (torch's toComplexType; float16/bfloat16 -> complex64)."""
        if self.category == _COMPLEX:
            return self
        return complex128 if self is float64 else complex64

    def __repr__(self):
        return f"flowvision.backend.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


float32 = dtype("float32", np.float32, _FLOAT, 2, True)
float64 = dtype("float64", np.float64, _FLOAT, 3, True)
float16 = dtype("float16", np.float16, _FLOAT, 1, True)
bfloat16 = dtype("bfloat16", np.uint16, _FLOAT, 1, True)
int64 = dtype("int64", np.int64, _INT, 4, True)
int32 = dtype("int32", np.int32, _INT, 3, True)
int16 = dtype("int16", np.int16, _INT, 2, True)
int8 = dtype("int8", np.int8, _INT, 1, True)
uint8 = dtype("uint8", np.uint8, _INT, 1, False)
bool = dtype("bool", np.bool_, _BOOL, 0, False)  # noqa: A001 - torch's name
complex64 = dtype("complex64", np.complex64, _COMPLEX, 2, True)
complex128 = dtype("complex128", np.complex128, _COMPLEX, 3, True)
cfloat, cdouble = complex64, complex128

float, double, half = float32, float64, float16  # noqa: A001
long, int, short = int64, int32, int16  # noqa: A001

_ALL = (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool, complex64, complex128)
_NAMES = {d.name: d for d in _ALL}
_FROM_NP = {d.np: d for d in _ALL if d is not bfloat16}


def _by_name(name):
    return _NAMES[name]


_default_float = [float32]


def get_default_dtype():
    return _default_float[0]


def set_default_dtype(d):
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float[0] = d


def as_dtype(d):
    """Accept our dtype, a numpy dtype/type, a torch dtype or a string."""
    if isinstance(d, dtype):
        return d
    if d is None:
        raise TypeError("dtype must not be None")
    if d is _py_float:
        return get_default_dtype()
    if d is _py_int:
        return int64
    if d is _py_bool:
        return bool
    name = getattr(d, "name", None) if not isinstance(d, str) else d
    if isinstance(name, str):
        name = name.replace("torch.", "").replace("flowvision.backend.", "")
        if name in _NAMES:
            return _NAMES[name]
        aliases = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
                   "short": int16, "bool_": bool, "cfloat": complex64, "cdouble": complex128}
        if name in aliases:
            return aliases[name]
    try:
        npd = np.dtype(d)
    except TypeError:
        raise TypeError(f"unsupported dtype {d!r}") from None
    if npd in _FROM_NP:
        return _FROM_NP[npd]
    raise TypeError(f"unsupported dtype {d!r}; flowvision supports {', '.join(_NAMES)}")


def from_numpy_dtype(npd):
    npd = np.dtype(npd)
    try:
        return _FROM_NP[npd]
    except KeyError:
        raise TypeError(
            f"can't convert numpy array of type {npd}; supported: float64, float32, float16, int64, "
            "int32, int16, int8, uint8, bool, complex64 and complex128") from None


def promote_types(a, b):
    """torch.promote_types for the dtypes we support."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo is float64:
            return complex128  # the complex result keeps the float operand's precision
        return hi
    if a.category == _COMPLEX:
        return a if a.rank > b.rank else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.rank > b.rank else b
    if a.category == _INT:
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.rank > b.rank else b
    return a


def _combine_categories(higher, lower):
    # torch's c10 combine_categories: a higher-priority operand wins unless the lower one is of a higher
    # category (int tensor + float scalar -> default float, uint8 tensor + int scalar -> uint8).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(x):
    """The dtype torch gives a Python scalar ("wrapped number")."""
    if isinstance(x, _py_bool) or isinstance(x, np.bool_):
        return bool
    if isinstance(x, (_py_int, np.integer)):
        return int64
    if isinstance(x, (_py_float, np.floating)):
        return get_default_dtype()
    if isinstance(x, (complex, np.complexfloating)):
        return get_default_dtype().to_complex()
    raise TypeError(f"unsupported operand type {type(x).__name__}")


def result_type(*operands):
    """torch.result_type over tensors and Python scalars (tensors of dim>0 > 0-dim tensors > scalars)."""
    dim_res = zero_res = wrapped_res = None
    for op in operands:
        d = getattr(op, "_dtype", None)
        if d is not None:
            if op.ndim > 0:
                dim_res = d if dim_res is None else promote_types(dim_res, d)
            else:
                zero_res = d if zero_res is None else promote_types(zero_res, d)
        elif op is not None:
            d = scalar_dtype(op)
            # Python floats promote as the default dtype only if needed; in the wrapped category torch
            # uses double for the state and the default dtype for the result, which matches this.
            wrapped_res = d if wrapped_res is None else promote_types(wrapped_res, d)
    return _combine_categories(dim_res, _combine_categories(zero_res, wrapped_res))


def can_cast(from_, to):
    """torch.can_cast: no float->int, no int->bool, no float->bool category downcasts."""
    return from_.category <= to.category
