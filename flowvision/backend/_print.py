"""torch-style tensor printing (4 decimals, int mode, scientific mode, summarised above 1000 elements)."""
import math

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


class _Formatter:
    """torch._tensor_str._Formatter over a numpy array (values in their compute dtype)."""

    def __init__(self, arr, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return
        a = np.abs(nz.astype(np.float64))
        mn, mx = float(a.min()), float(a.max())
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        sci = PRINT_OPTS["sci_mode"]
        self.sci_mode = (mx / mn > 1000.0 or mx > 1.0e8 or mn < 1.0e-4) if sci is None else sci
        prec = PRINT_OPTS["precision"]
        vals = nz.tolist()
        if self.sci_mode:
            lens = (len(f"{v:.{prec}e}") for v in vals)
        elif self.int_mode:
            lens = (len(f"{v:.0f}") + 1 for v in vals)
        else:
            lens = (len(f"{v:.{prec}f}") for v in vals)
        self.max_width = max(self.max_width, max(lens))

    def format(self, value):
        prec = PRINT_OPTS["precision"]
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{prec}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{prec}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(arr, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS["linewidth"] - indent) / element_length))
    e = PRINT_OPTS["edgeitems"]
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = [fmt.format(v) for v in arr[:e].tolist()] + [" ..."] + [fmt.format(v) for v in arr[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr, indent, summarize, fmt):
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e = PRINT_OPTS["edgeitems"]
    if summarize and arr.shape[0] > 2 * e:
        rows = list(range(e)) + [None] + list(range(arr.shape[0] - e, arr.shape[0]))
    else:
        rows = list(range(arr.shape[0]))
    slices = ["..." if i is None else _tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(arr):
    e = PRINT_OPTS["edgeitems"]
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate([arr[:e], arr[-e:]]) if arr.shape[0] > 2 * e else arr
    if not e:
        return arr[(slice(0, 0),) * arr.ndim]
    rows = list(range(e)) + list(range(arr.shape[0] - e, arr.shape[0])) if arr.shape[0] > 2 * e else \
        range(arr.shape[0])
    return np.stack([_summarized(arr[i]) for i in rows])


def _add_suffixes(tensor_str, suffixes, indent):
    out = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS["linewidth"]:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t, prefix="tensor("):
    """torch's Tensor.__repr__ text (torch._tensor_str._str_intern for dense CPU tensors)."""
    arr = t._compute()
    indent = len(prefix)
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t._dtype is not D.get_default_dtype():
            suffixes.append(f"dtype={t._dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS["edgeitems"]:
            suffixes.append(f"size={tuple(arr.shape)}")
        if t._dtype not in (D.get_default_dtype(), D.int64, D.bool):
            suffixes.append(f"dtype={t._dtype!r}")
        summarize = arr.size > PRINT_OPTS["threshold"]
        fmt = _Formatter(_summarized(arr) if summarize else arr, t._dtype.is_floating_point)
        body = _tensor_str_with_formatter(arr, indent, summarize, fmt)
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
