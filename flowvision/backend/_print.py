"""torch-style tensor printing (4 decimals, int mode, scientific mode, summarised above 1000 elements)."""
import numpy as np

from . import _dtype as D

PRINT_OPTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    if profile == "default":
        PRINT_OPTS.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        PRINT_OPTS.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        PRINT_OPTS.update(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            PRINT_OPTS[k] = v
    PRINT_OPTS["sci_mode"] = sci_mode


def _float_formatter(arr):
    prec = PRINT_OPTS["precision"]
    finite = arr[np.isfinite(arr)]
    nonzero = np.abs(finite[finite != 0])
    int_mode = finite.size == 0 or np.all(finite == np.round(finite))
    sci = PRINT_OPTS["sci_mode"]
    if nonzero.size:
        mx, mn = float(nonzero.max()), float(nonzero.min())
    else:
        mx = mn = 0.0
    if int_mode and sci is not True:
        if mx > 1e8:
            fmt = lambda v: f"{v:.{prec}e}"  # noqa: E731
        else:
            fmt = lambda v: f"{v:.0f}." if np.isfinite(v) else f"{v}"  # noqa: E731
    else:
        use_sci = sci if sci is not None else (nonzero.size and (mx / mn > 1000.0 or mx > 1e8 or mn < 1e-4))
        if use_sci:
            fmt = lambda v: f"{v:.{prec}e}"  # noqa: E731
        else:
            fmt = lambda v: f"{v:.{prec}f}"  # noqa: E731
    shown = arr if arr.size <= PRINT_OPTS["threshold"] else _edges(arr)
    width = max((len(_fmt_special(fmt, v)) for v in shown.reshape(-1)), default=1)
    return lambda v: _fmt_special(fmt, v).rjust(width)


def _fmt_special(fmt, v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return fmt(float(v))


def _edges(arr):
    e = PRINT_OPTS["edgeitems"]
    out = arr
    for ax in range(arr.ndim):
        if out.shape[ax] > 2 * e:
            out = np.concatenate([np.take(out, range(e), ax), np.take(out, range(out.shape[ax] - e, out.shape[ax]), ax)], ax)
    return out


def tensor_repr(t):
    arr = t._compute()
    prefix = "tensor("
    suffixes = []
    if arr.dtype.kind == "f":
        formatter = {"float_kind": _float_formatter(arr) if arr.size else str}
    elif arr.dtype.kind in "iu":
        w = max((len(str(v)) for v in (_edges(arr) if arr.size > PRINT_OPTS["threshold"] else arr).reshape(-1)), default=1)
        formatter = {"int": lambda v: str(v).rjust(w)}
    else:
        formatter = {"bool": lambda v: str(bool(v))}
    if arr.size == 0:
        body = "[]"
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
    else:
        body = np.array2string(arr, separator=", ", prefix=prefix, formatter=formatter,
                               threshold=PRINT_OPTS["threshold"], edgeitems=PRINT_OPTS["edgeitems"],
                               max_line_width=PRINT_OPTS["linewidth"])
    default_dtypes = (D.get_default_dtype(), D.int64, D.bool)
    if t._dtype not in default_dtypes:
        suffixes.append(f"dtype={t._dtype!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
