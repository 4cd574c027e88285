"""In-place ops: one mechanism (``commit``) writes an out-of-place result into a tensor's storage and
rewires autograd history, including through views (torch's CopySlices)."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import Node, Context, _edge, _compute_np, _to_storage
from ._util import unbroadcast


class CopySlices:
    """Backward of writing ``value`` into the view region of a base tensor."""

    @staticmethod
    def backward(ctx, g):
        gbase = np.array(g, copy=True)
        ctx.view_fn(gbase)[...] = 0
        gval = unbroadcast(np.array(ctx.view_fn(g)), ctx.value_shape)
        return gbase, gval


class ViewOfBase:
    """Backward of re-deriving a view from its (modified) base."""

    @staticmethod
    def backward(ctx, g):
        gbase = np.zeros(ctx.base_shape, g.dtype)
        ctx.view_fn(gbase)[...] += g
        return (gbase,)


CopySlices.__name__ = "CopySlices"
CopySlices.backward_name = "CopySlices"
ViewOfBase.__name__ = "AsStridedBackward0"
ViewOfBase.backward_name = "AsStridedBackward0"


def _check_leaf(t):
    if t._grad_fn is None and t.requires_grad:
        raise RuntimeError(f"a leaf Variable that requires grad is being used in an in-place operation "
                           f"({t._dtype.name}{list(t.shape)}); modify it under no_grad() or work on a clone.")
    base = t._base
    if base is not None and base._grad_fn is None and base.requires_grad:
        raise RuntimeError(f"a view of a leaf Variable that requires grad is being used in an in-place operation "
                           f"(view {t._dtype.name}{list(t.shape)} of leaf {base._dtype.name}{list(base.shape)}).")


def commit(self, result):
    """Write ``result`` (a Tensor or scalar) into ``self`` in place and record the autograd history."""
    if not isinstance(result, Tensor):
        from .._creation import tensor
        result = tensor(result, dtype=self._dtype)
    if not D.can_cast(result._dtype, self._dtype):
        raise RuntimeError(f"result type {result._dtype.name.capitalize()} can't be cast to the desired output "
                           f"type {self._dtype.name.capitalize()}")
    if tuple(result.shape) != tuple(self.shape):
        bshape = np.broadcast_shapes(tuple(result.shape), tuple(self.shape)) if _bc_ok(result, self) else None
        if bshape != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(bshape) if bshape else list(result.shape)}")
    needs_graph = is_grad_enabled() and (self.requires_grad or result.requires_grad)
    if needs_graph:
        _check_leaf(self)
    if self._device.type == "cuda":  # device storage is swapped, not overwritten (flowvision/backend/_cuda)
        from .._cuda.dispatch import commit_inplace
        return commit_inplace(self, result, needs_graph)
    if not self._data.flags.writeable:
        raise RuntimeError("unsupported operation: the tensor's memory is read-only (it may be an expanded view "
                           "whose elements share memory); call .clone() first")
    value = _to_storage(result._compute(), self._dtype) if result._dtype is not self._dtype else result._data
    wrote_in_place = value is self._data  # the op's kernel wrote into self's storage (relu_ under autograd)
    if not wrote_in_place:
        np.copyto(self._data, value, casting="unsafe")
    self._version[0] += 1
    if wrote_in_place and result._grad_fn is not None:
        # the op saved self's storage: its record of self is of the value after this write
        _resave_at_current_version(result._grad_fn, self._version)
    if not needs_graph:
        return self
    if self._base is not None and self._view_fn is not None:
        base = self._base
        ctx = Context()
        ctx.view_fn = self._view_fn
        ctx.value_shape = tuple(result.shape)
        meta = ((tuple(base.shape), _compute_np(base._dtype)),)
        node = Node(CopySlices, ctx, (_edge(base), _edge(result)), meta,
                    (_compute_np(base._dtype), _compute_np(result._dtype)))
        base._grad_fn, base._output_nr = node, 0
        base.requires_grad_flag = True
        vctx = Context()
        vctx.view_fn = self._view_fn
        vctx.base_shape = tuple(base.shape)
        vnode = Node(ViewOfBase, vctx, ((node, 0),), ((tuple(self.shape), _compute_np(self._dtype)),),
                     (_compute_np(base._dtype),))
        self._grad_fn, self._output_nr = vnode, 0
        self.requires_grad_flag = True
        self._view_version = self._version[0]
    else:
        if tuple(result.shape) != tuple(self.shape):
            from .shape import expand
            result = expand(result, tuple(self.shape))
        self._grad_fn, self._output_nr = result._grad_fn, result._output_nr
        if self._grad_fn is None and result.requires_grad:  # result is a leaf: route through an identity
            from .shape import Clone
            c = Clone.apply(result)
            self._grad_fn, self._output_nr = c._grad_fn, 0
        self.requires_grad_flag = True
    return self


def _resave_at_current_version(node, counter):
    node.saved_versions = tuple((c, c[0] if c is counter else v, shape, dtype)
                                for c, v, shape, dtype in node.saved_versions)


def refresh_view(view):
    """Re-derive a view's history from its base's current one (after the base changed in place)."""
    view._view_version = view._version[0]
    base = view._base
    if base._grad_fn is None:  # a leaf base can't have been changed under autograd: the history is current
        return
    vctx = Context()
    vctx.view_fn = view._view_fn
    vctx.base_shape = tuple(base.shape)
    vnode = Node(ViewOfBase, vctx, ((base._grad_fn, base._output_nr),),
                 ((tuple(view.shape), _compute_np(view._dtype)),), (_compute_np(base._dtype),))
    view._grad_fn, view._output_nr = vnode, 0
    view.requires_grad_flag = True


def _bc_ok(a, b):
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return True
    except ValueError:
        return False


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        from .._creation import tensor
        src = tensor(src)
    if not _bc_ok(src, self) or np.broadcast_shapes(tuple(src.shape), tuple(self.shape)) != tuple(self.shape):
        raise RuntimeError(f"copy_: the source of shape {list(src.shape)} can't be broadcast to the destination "
                           f"shape {list(self.shape)}")
    if src._dtype is not self._dtype:
        from .elementwise import cast
        src = cast(src, self._dtype)
    return commit(self, src)


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
        from .shape import expand
        from .elementwise import cast
        v = value if value._dtype is self._dtype else cast(value, self._dtype)
        return commit(self, expand(v, tuple(self.shape)))
    if not is_grad_enabled() or not self.requires_grad:
        if self._data.size:
            self._data[...] = _scalar_storage(value, self._dtype)
        self._version[0] += 1
        return self
    from .._creation import full
    return commit(self, full(tuple(self.shape), value, dtype=self._dtype))


def _scalar_storage(value, dt):
    arr = np.array(value, dtype=np.float32 if dt is D.bfloat16 else None)
    if dt is D.bfloat16:
        return _to_storage(arr, dt)
    if dt.category == 1 and arr.dtype.kind in "iub":
        return arr.astype(np.int64).astype(dt.np)
    return arr.astype(dt.np)


def zero_(self):
    return fill_(self, 0)


def setitem(self, index, value):
    from .shape import _convert_index, _check_basic_bounds, Slice, IndexPut
    np_index, basic = _convert_index(index, self.shape)
    val_t = isinstance(value, Tensor)
    if not (is_grad_enabled() and (self.requires_grad or (val_t and value.requires_grad))):
        # fast path: nothing to record
        if val_t:
            v = value._data if value._dtype is self._dtype else _to_storage(value._compute(), self._dtype)
        else:
            v = _scalar_storage(value, self._dtype)
        if basic:
            _check_basic_bounds(np_index, self.shape)
        try:
            self._data[np_index] = v
        except ValueError as e:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(v))} cannot be broadcast to "
                               f"indexing result of shape {list(np.shape(self._data[np_index]))} ({e})") from None
        self._version[0] += 1
        return
    if basic:
        _check_basic_bounds(np_index, self.shape)
        view = Slice.apply(self, np_index)
        copy_(view, value)
    else:
        commit(self, IndexPut.apply(self, value, index=np_index, _dtype=self._dtype))


def make_inplace(fn, snapshot=True):
    """``x.op_(...)`` as ``commit(x, op(x, ...))`` with torch's in-place dtype rule. ``snapshot=False`` for an op that
    never saves its input for backward (ReLU saves its output): its input needs no copy before it is overwritten."""

    def inplace(self, *args, **kwargs):
        if snapshot and is_grad_enabled() and self.requires_grad and self._device.type != "cuda":  # CUDA: swapped
            _check_leaf(self)
            # the op may save its input for backward; give it a snapshot so overwriting self is safe
            snap = Tensor._wrap(np.array(self._data, copy=True), self._dtype)
            snap._grad_fn, snap._output_nr, snap.requires_grad_flag = self._grad_fn, self._output_nr, True
            return commit(self, fn(snap, *args, **kwargs))
        if is_grad_enabled() and self.requires_grad:
            _check_leaf(self)
        return commit(self, fn(self, *args, **kwargs))

    inplace.__name__ = fn.__name__ + "_"
    return inplace
