"""Shape and data-movement ops: views, cat/stack, flips, gathers and scatters."""
import numpy as np

from .. import _autocast_policy as _amp
from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.graph import Function
from ._util import wrap_dim, broadcast_shapes


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel, src_shape):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} (input shape {list(src_shape)})")
    return tuple(shape)


# ------------------------------------------------------------------ views
class View(Function):
    capture_role = "view"
    is_view = True

    @staticmethod
    def forward(ctx, x, shape, strict=True):
        ctx.in_shape = x.shape
        if strict:
            try:
                return np.reshape(x, shape, copy=False)
            except ValueError:
                raise RuntimeError(
                    f"view size is not compatible with input tensor's size and stride (input shape "
                    f"{list(x.shape)}, target {list(shape)}): at least one dimension spans across two "
                    "contiguous subspaces. Use .reshape(...) instead.") from None
        return np.reshape(x, shape)

    @staticmethod
    def forward_cuda(ctx, x, shape, strict=True):
        ctx.in_shape = x.shape
        return ctx.xp.reshape(x, shape)  # device arrays are dense: a reshape is always a view

    @staticmethod
    def backward(ctx, g):
        return (g.reshape(ctx.in_shape),)


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], (D.dtype,)):
        raise NotImplementedError("view(dtype) is not supported")
    shape = _infer_shape(_shape_arg(shape), input.numel(), input.shape)
    return View.apply(input, shape)


def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input.numel(), input.shape)
    return View.apply(input, shape, strict=False)


def view_as(input, other):
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, (1,))
    s = wrap_dim(start_dim, input.ndim)
    e = wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input.shape
    new = tuple(shp[:s]) + (int(np.prod(shp[s:e + 1])),) + tuple(shp[e + 1:])
    return reshape(input, new)


def unflatten(input, dim, sizes):
    d = wrap_dim(dim, input.ndim)
    shp = tuple(input.shape)
    sizes = _infer_shape(tuple(sizes), shp[d], (shp[d],))
    return reshape(input, shp[:d] + sizes + shp[d + 1:])


class Permute(Function):
    capture_role = "permute"
    is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def forward_cuda(ctx, x, dims):
        ctx.dims = dims
        return ctx.xp.transpose(x, dims)

    @staticmethod
    def backward(ctx, g):
        return (ctx.xp.transpose(g, np.argsort(ctx.dims)),)


def permute(input, *dims):
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not "
                           f"equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"permute(): duplicate dims are not allowed: {dims}")
    return Permute.apply(input, dims)


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return View.apply(input, ())
    d0, d1 = wrap_dim(dim0, input.ndim), wrap_dim(dim1, input.ndim)
    dims = list(range(input.ndim))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [wrap_dim(s, input.ndim) for s in src]
    dst = [wrap_dim(d, input.ndim) for d in dst]
    order = [i for i in range(input.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute.apply(input, tuple(order))


moveaxis = movedim


def squeeze(input, dim=None):
    shp = tuple(input.shape)
    if dim is None:
        new = tuple(s for s in shp if s != 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = {wrap_dim(d, input.ndim) for d in dims} if input.ndim else set()
        new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    return View.apply(input, new)


def unsqueeze(input, dim):
    d = wrap_dim(dim, input.ndim + 1)
    shp = tuple(input.shape)
    return View.apply(input, shp[:d] + (1,) + shp[d:])


class Expand(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return np.broadcast_to(x, shape)

    @staticmethod
    def forward_cuda(ctx, x, shape):
        ctx.in_shape = x.shape
        return ctx.xp.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, g):
        from ._util import unbroadcast
        return (unbroadcast(g, ctx.in_shape),)


def expand(input, *sizes):
    sizes = _shape_arg(sizes)
    shp = tuple(input.shape)
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    out = []
    for i, s in enumerate(sizes):
        cur = shp[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            s = cur
        if cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(shp)}")
        out.append(s)
    return Expand.apply(input, tuple(out))


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


class Contiguous(Function):
    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x) if not x.flags["C_CONTIGUOUS"] else x

    @staticmethod
    def forward_cuda(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return (g,)


def contiguous(input, memory_format=None):
    if memory_format is not None:
        from .._memory_format import format_name, to_format
        if format_name(memory_format) not in ("contiguous_format", "preserve_format"):
            return to_format(input, memory_format)
    if input.is_contiguous():
        return input
    return Contiguous.apply(input)


class Clone(Function):
    @staticmethod
    def forward(ctx, x):
        return np.array(x, copy=True)

    @staticmethod
    def forward_cuda(ctx, x):
        return ctx.xp.copy(x)

    @staticmethod
    def backward(ctx, g):
        return (g,)


def clone(input, *, memory_format=None):
    if memory_format is not None:
        from .._memory_format import format_name, to_format
        if format_name(memory_format) != "preserve_format":
            return to_format(input, memory_format, force=True)
    return Clone.apply(input)  # numpy keeps the strides: torch's default preserve_format


class Slice(Function):
    """Basic indexing (ints, slices, None, Ellipsis): a view."""
    capture_role = "slice"
    is_view = True

    @staticmethod
    def forward(ctx, x, index):
        ctx.in_shape = x.shape
        ctx.index = index
        # a trailing Ellipsis makes numpy return a 0-d view instead of a scalar copy
        return x[index] if any(i is Ellipsis for i in index) else x[index + (Ellipsis,)]

    @staticmethod
    def forward_cuda(ctx, x, index):
        ctx.in_shape = x.shape
        ctx.index = index
        return ctx.xp.getitem(x, index)

    @staticmethod
    def backward(ctx, g):
        return (ctx.xp.scatter_grad(ctx.in_shape, ctx.index, g),)


def narrow(input, dim, start, length):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    start = int(start)
    if start < 0:
        start += n
    if start < 0 or start + length > n or length < 0:
        raise IndexError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return Slice.apply(input, idx)


def select(input, dim, index):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return Slice.apply(input, (slice(None),) * d + (int(index),))


def split(tensor, split_size_or_sections, dim=0):
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n > 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def tensor_split(input, indices_or_sections, dim=0):
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    out, start = [], 0
    for s in sizes:
        out.append(narrow(input, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    size = -(-n // chunks) if n else 0
    return split(input, size if size else 1, d) if n else (input,)


def unbind(input, dim=0):
    d = wrap_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


class Cat(Function):
    capture_role = "cat"

    @staticmethod
    def forward(ctx, *xs, dim):
        ctx.sizes = [x.shape[dim] for x in xs]
        ctx.dim = dim
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def forward_cuda(ctx, *xs, dim):
        ctx.sizes = [x.shape[dim] for x in xs]
        ctx.dim = dim
        return ctx.xp.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, g):
        bounds = np.cumsum(ctx.sizes)[:-1]
        return tuple(ctx.xp.split(g, bounds, axis=ctx.dim))


def cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    # torch skips legacy empty 1-D tensors of shape (0,)
    full = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    ref = full[0]
    d = wrap_dim(dim, ref.ndim)
    for i, t in enumerate(full):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {ref.shape[k]} "
                                   f"but got size {t.shape[k]} for tensor number {i} in the list.")
    rd = D.result_type(*full) if len(full) > 1 else ref._dtype
    res = Cat.apply(*full, dim=d, _dtype=rd)
    if out is not None:
        from .inplace import copy_
        copy_(out, res)
        return out
    return res


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    d = wrap_dim(dim, len(s0) + 1)
    return cat([unsqueeze(t, d) for t in tensors], d, out=out)


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([t if t.ndim >= 2 else reshape(t, (1, -1)) for t in tensors], 0)


class Flip(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.flip(x, dims).copy()

    @staticmethod
    def forward_cuda(ctx, x, dims):
        ctx.dims = dims
        return ctx.xp.flip(x, dims).copy()

    @staticmethod
    def backward(ctx, g):
        return (ctx.xp.flip(g, ctx.dims).copy(),)


def flip(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return Flip.apply(input, tuple(wrap_dim(d, input.ndim) for d in dims))


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


class Roll(Function):
    capture_role = "roll"

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.args = (shifts, dims)
        return np.roll(x, shifts, dims)

    @staticmethod
    def forward_cuda(ctx, x, shifts, dims):
        ctx.args = (shifts, dims)
        return ctx.xp.roll(x, shifts, dims)

    @staticmethod
    def backward(ctx, g):
        shifts, dims = ctx.args
        neg = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return (ctx.xp.roll(g, neg, dims),)


def roll(input, shifts, dims=None):
    if dims is None:
        return reshape(Roll.apply(flatten(input), shifts, 0), tuple(input.shape))
    if isinstance(shifts, int):
        shifts = (shifts,)
    if isinstance(dims, int):
        dims = (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return Roll.apply(input, tuple(shifts), tuple(wrap_dim(d, input.ndim) for d in dims))


class Repeat(Function):
    @staticmethod
    def forward(ctx, x, reps):
        lead = len(reps) - x.ndim
        ctx.in_shape = x.shape
        ctx.reps = reps
        return np.tile(x.reshape((1,) * lead + x.shape), reps)

    @staticmethod
    def backward(ctx, g):
        reps = ctx.reps
        shp = (1,) * (len(reps) - len(ctx.in_shape)) + tuple(ctx.in_shape)
        inter = []
        for r, s in zip(reps, shp):
            inter += [r, s]
        return (g.reshape(inter).sum(axis=tuple(range(0, 2 * len(reps), 2))).reshape(ctx.in_shape),)


def repeat(input, *sizes):
    sizes = _shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    return Repeat.apply(input, sizes)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return Repeat.apply(input, dims)


class RepeatInterleave(Function):
    @staticmethod
    def forward(ctx, x, repeats, dim):
        ctx.args = (repeats, dim, x.shape)
        return np.repeat(x, repeats, axis=dim)

    @staticmethod
    def backward(ctx, g):
        repeats, dim, shp = ctx.args
        if np.ndim(repeats) == 0:
            newshape = shp[:dim] + (shp[dim], int(repeats)) + shp[dim + 1:]
            return (g.reshape(newshape).sum(axis=dim + 1),)
        idx = np.repeat(np.arange(shp[dim]), repeats)
        out = np.zeros(shp, g.dtype)
        np.add.at(out, (slice(None),) * dim + (idx,), g)
        return (out,)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats_tensor)
        r = input._data
        return Tensor._wrap(np.repeat(np.arange(len(r)), r).astype(np.int64))
    if isinstance(repeats, Tensor):
        repeats = repeats._data
    if dim is None:
        input, dim = flatten(input), 0
    return RepeatInterleave.apply(input, repeats, wrap_dim(dim, input.ndim))


# ------------------------------------------------------------------ gather / scatter / index
def _index_array(index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): index must be a Tensor, got {type(index).__name__}")
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {index._dtype}")
    return index._data


class Gather(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.args = (dim, index, x.shape)
        return np.take_along_axis(x, index, axis=dim)

    @staticmethod
    def backward(ctx, g):
        dim, index, shp = ctx.args
        out = np.zeros(shp, g.dtype)
        _scatter_add_np(out, dim, index, g)
        return (out,)


def _along_axis_index(index, dim):
    idx = list(np.ogrid[tuple(slice(0, s) for s in index.shape)])
    idx[dim] = index
    return tuple(idx)


def _scatter_add_np(out, dim, index, src):
    np.add.at(out, _along_axis_index(index, dim), src[tuple(slice(0, s) for s in index.shape)])


class IndexOutOfBounds(IndexError, RuntimeError):
    """torch raises RuntimeError for gather/scatter and IndexError for index_select; this is both."""


def _check_index_bounds(idx, size, name):
    # like torch, gather/scatter/index_select take no negative indices
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx.max() if idx.max() >= size else idx.min()
        raise IndexOutOfBounds(f"{name}(): index {bad} is out of bounds for dimension with size {size}")


def gather(input, dim, index, *, sparse_grad=False):
    idx = _index_array(index, "gather")
    d = wrap_dim(dim, input.ndim)
    if idx.ndim != input.ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"(index {list(idx.shape)}, input {list(input.shape)})")
    _check_index_bounds(idx, input.shape[d], "gather")
    return Gather.apply(input, d, index=idx.astype(np.int64, copy=False))


class Scatter(Function):
    scalar_operands = 2
    @staticmethod
    def forward(ctx, x, src, dim, index, reduce=None):
        ctx.args = (dim, index, np.shape(src), reduce)
        out = np.array(x, copy=True)
        ix = _along_axis_index(index, dim)
        if np.ndim(src) == 0:
            src = np.broadcast_to(src, index.shape)
        else:
            src = src[tuple(slice(0, s) for s in index.shape)]
        if reduce == "add":
            np.add.at(out, ix, src)
        elif reduce == "multiply":
            np.multiply.at(out, ix, src)
        else:
            out[ix] = src
        return out

    @staticmethod
    def backward(ctx, g):
        dim, index, sshape, reduce = ctx.args
        ix = _along_axis_index(index, dim)
        gx = np.array(g, copy=True)
        if reduce is None:
            gx[ix] = 0
        gs = None
        if ctx.needs_input_grad[1]:
            picked = g[ix]
            gs = np.zeros(sshape, g.dtype)
            gs[tuple(slice(0, s) for s in index.shape)] = picked
        return gx, gs


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    idx = _index_array(index, "scatter")
    d = wrap_dim(dim, input.ndim)
    _check_index_bounds(idx, input.shape[d], "scatter")
    if src is None:
        src = value
    return Scatter.apply(input, src, d, index=idx.astype(np.int64, copy=False), reduce=reduce, _dtype=input._dtype)


def scatter_add(input, dim, index, src):
    return scatter(input, dim, index, src, reduce="add")


class IndexSelect(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.args = (dim, index, x.shape)
        return np.take(x, index, axis=dim)

    @staticmethod
    def forward_cuda(ctx, x, dim, index):
        ctx.args = (dim, index, x.shape)
        return ctx.xp.index_select(x, dim, index)

    @staticmethod
    def backward(ctx, g):
        dim, index, shp = ctx.args
        return (ctx.xp.index_add(shp, dim, index, g),)


def index_select(input, dim, index):
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input.ndim)
    _check_index_bounds(idx, input.shape[d], "index_select")
    return IndexSelect.apply(input, d, index=idx.reshape(-1).astype(np.int64, copy=False))


class AdvancedIndex(Function):
    """Indexing with integer/bool arrays: a copy; the backward scatters with accumulation."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.in_shape = x.shape
        ctx.index = index
        return np.asarray(x[index])

    @staticmethod
    def forward_cuda(ctx, x, index):
        ctx.in_shape = x.shape
        ctx.index = index = ctx.xp.first_dim_index(index)
        return ctx.xp.take(x, index)

    @staticmethod
    def backward(ctx, g):
        return (ctx.xp.add_at(ctx.in_shape, ctx.index, g),)


class IndexPut(Function):
    scalar_operands = 2
    @staticmethod
    def forward(ctx, x, value, index, accumulate=False):
        ctx.index = index
        ctx.vshape = np.shape(value)
        ctx.accumulate = accumulate
        out = np.array(x, copy=True)
        if accumulate:
            np.add.at(out, index, value)
        else:
            out[index] = value
        return out

    @staticmethod
    def backward(ctx, g):
        gx = np.array(g, copy=True)
        if not ctx.accumulate:
            gx[ctx.index] = 0
        gv = None
        if ctx.needs_input_grad[1]:
            from ._util import unbroadcast
            gv = unbroadcast(np.asarray(g[ctx.index]), ctx.vshape)
        return gx, gv


def _convert_index(index, shape):
    """Turn a user index into a numpy index; returns (np_index, is_basic)."""
    if not isinstance(index, tuple):
        index = (index,)
    out, basic = [], True
    for it in index:
        if isinstance(it, Tensor):
            if it._dtype is D.bool:
                out.append(it._data)
                basic = False
            elif it._dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            elif it.ndim == 0 and it._dtype is not D.uint8:
                out.append(int(it._data))
            else:
                out.append(it._data.astype(bool) if it._dtype is D.uint8 else it._data)
                basic = False
        elif isinstance(it, (list, np.ndarray)):
            arr = np.asarray(it)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            basic = False
        elif isinstance(it, bool):
            out.append(it)
            basic = False
        elif isinstance(it, (int, np.integer, slice)) or it is None or it is Ellipsis:
            out.append(int(it) if isinstance(it, np.integer) else it)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(it).__name__})")
    return tuple(out), basic


def _check_basic_bounds(np_index, shape):
    dim = 0
    n_real = sum(1 for i in np_index if i is not None and i is not Ellipsis)
    for it in np_index:
        if it is Ellipsis:
            dim += len(shape) - n_real
            continue
        if it is None:
            continue
        if isinstance(it, int):
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if not -shape[dim] <= it < shape[dim]:
                raise IndexError(f"index {it} is out of bounds for dimension {dim} with size {shape[dim]}")
        dim += 1
    if dim > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")


def getitem(input, index):
    np_index, basic = _convert_index(index, input.shape)
    if basic:
        _check_basic_bounds(np_index, input.shape)
        return Slice.apply(input, np_index)
    try:
        return AdvancedIndex.apply(input, np_index)
    except IndexError as e:
        raise IndexError(f"{e} (tensor shape {list(input.shape)})") from None


def take(input, index):
    return AdvancedIndex.apply(flatten(input), (_index_array(index, "take"),))


def masked_select(input, mask):
    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = expand(input, shape)
    return AdvancedIndex.apply(x, (np.broadcast_to(mask._data, shape),))


def index_put(input, indices, values, accumulate=False):
    np_index, _ = _convert_index(tuple(indices), input.shape)
    return IndexPut.apply(input, values, index=np_index, accumulate=accumulate, _dtype=input._dtype)


class Tril(Function):
    @staticmethod
    def forward(ctx, x, diagonal, upper):
        ctx.args = (diagonal, upper)
        return np.triu(x, diagonal) if upper else np.tril(x, diagonal)

    @staticmethod
    def backward(ctx, g):
        diagonal, upper = ctx.args
        return (np.triu(g, diagonal) if upper else np.tril(g, diagonal),)


def tril(input, diagonal=0):
    return Tril.apply(input, diagonal, False)


def triu(input, diagonal=0):
    return Tril.apply(input, diagonal, True)


class Diagonal(Function):
    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.args = (offset, d1, d2, x.shape)
        return np.diagonal(x, offset, d1, d2).copy()

    @staticmethod
    def backward(ctx, g):
        offset, d1, d2, shp = ctx.args
        out = np.zeros(shp, g.dtype)
        idx = np.arange(g.shape[-1])
        rows = idx + max(-offset, 0)
        cols = idx + max(offset, 0)
        moved = np.moveaxis(out, (d1, d2), (-2, -1))
        moved[..., rows, cols] = g
        return (out,)


def diagonal(input, offset=0, dim1=0, dim2=1):
    return Diagonal.apply(input, offset, wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim))


def diag(input, diagonal=0):
    if input.ndim == 1:
        n = input.shape[0] + abs(diagonal)
        from .._creation import zeros
        out = zeros((n, n), dtype=input.dtype)
        idx = np.arange(input.shape[0])
        r, c = idx + max(-diagonal, 0), idx + max(diagonal, 0)
        return index_put(out, (Tensor._wrap(r), Tensor._wrap(c)), input)
    return Diagonal.apply(input, diagonal, 0, 1)


@_amp.fp32
def trace(input):
    return diagonal(input).sum()


class Pad(Function):
    """Constant padding with possibly negative pads (crops)."""

    @staticmethod
    def forward(ctx, x, pads, value):
        # pads: per-dim (before, after) from the first dim
        ctx.pads = pads
        ctx.in_shape = x.shape
        crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pads))
        x = x[crop]
        pos = [(max(b, 0), max(a, 0)) for b, a in pads]
        return np.pad(x, pos, mode="constant", constant_values=value)

    @staticmethod
    def forward_cuda(ctx, x, pads, value):
        ctx.pads = pads
        ctx.in_shape = x.shape
        crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pads))
        if any(b < 0 or a < 0 for b, a in pads):
            x = x[crop]
        pos = [(max(b, 0), max(a, 0)) for b, a in pads]
        return ctx.xp.pad(x, pos, constant_values=value)

    @staticmethod
    def backward(ctx, g):
        pads = ctx.pads
        sl = tuple(slice(max(b, 0), g.shape[i] - max(a, 0)) for i, (b, a) in enumerate(pads))
        inner = g[sl]
        pos = [(max(-b, 0), max(-a, 0)) for b, a in pads]
        return (ctx.xp.pad(inner, pos),)
