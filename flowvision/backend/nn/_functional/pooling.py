"""Max, average and adaptive pooling over 1-D and 2-D inputs."""
from typing import Any, Optional, Sequence, Tuple, Union

from ... import _C
from ..._ops import reduce as R, shape as S
from ..._tensor import Tensor
from ...autograd.graph import Function
from .common import ShapeError, _batchify, _check_float, _kin, _pair
from .. import functional as F


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    if num < 0:
        return 0
    out = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_pool(x, k, s, p, d, name):
    for i in range(2):
        if k[i] <= 0 or s[i] <= 0 or d[i] <= 0:
            raise RuntimeError(f"{name}(): kernel_size, stride and dilation must be positive, got kernel {k}, stride {s}, "
                               f"dilation {d}")
        if p[i] < 0 or p[i] * 2 > d[i] * (k[i] - 1) + 1:
            raise RuntimeError(f"{name}(): pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")


class MaxPool2d(Function):
    """The autograd op behind :func:`max_pool2d`: returns ``(output, indices)``; the gradient goes to each window's
    maximum.
    """

    capture_role = "max_pool2d"

    @staticmethod
    def forward(ctx, x, k, s, p, d, ceil_mode):
        xk = _kin(x)
        y, idx = _C.max_pool2d_forward(xk, k, s, p, d, ceil_mode)
        ctx.args = (x.shape, idx)
        return y.astype(x.dtype, copy=False), idx

    @staticmethod
    def forward_cuda(ctx, x, k, s, p, d, ceil_mode):
        y, idx = ctx.xp.max_pool2d_forward(x, k, s, p, d, ceil_mode)
        ctx.args = (x.shape, idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _gi):
        shape, idx = ctx.args
        return (ctx.xp.max_pool2d_backward(_kin(g), idx, shape),)


def max_pool2d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Optional[Union[int, Sequence[int]]] = None, padding: Union[int, Sequence[int]] = 0,
               dilation: Union[int, Sequence[int]] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """2-D max pooling: the maximum over each (dilated) kernel window, as ``torch.nn.functional.max_pool2d``.

    Output size per spatial dim: ``floor((size + 2 * padding - dilation * (k - 1) - 1) / stride) + 1`` (``ceil``
    with ``ceil_mode``, a last window starting inside the padded input only). Padding is ``-inf``.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` unbatched; a floating-point tensor.
        kernel_size: window size, one int or ``(kH, kW)``.
        stride: window step; ``None`` (default) means ``kernel_size``.
        padding: implicit ``-inf`` padding on both sides, at most half the effective kernel size.
        dilation: spacing between window elements.
        ceil_mode: round the output size up instead of down.
        return_indices: also return the flat ``H * W`` index of each maximum (for ``max_unpool2d``).

    Returns:
        ``(N, C, H_out, W_out)``, or ``(output, indices)`` (int64 indices) with ``return_indices``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: the output would be empty.
        RuntimeError: a non-positive kernel, stride or dilation, or too much padding.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.max_pool2d(flow.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    _check_float(input, "max_pool2d")
    x, unbatched = _batchify(input, 4, "max_pool2d")
    k = _pair(kernel_size, 2, "kernel_size")
    s = _pair(stride, 2, "stride") if stride not in (None, [], ()) else k
    p, d = _pair(padding, 2, "padding"), _pair(dilation, 2, "dilation")
    _check_pool(x, k, s, p, d, "max_pool2d")
    if any(_pool_out(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode) <= 0 for i in range(2)):
        raise ShapeError(f"max_pool2d(): output size is too small for input {list(x.shape)}, kernel {k}, stride {s}")
    y, idx = MaxPool2d.apply(x, k, s, p, d, bool(ceil_mode))
    if unbatched:
        y, idx = S.squeeze(y, 0), S.squeeze(idx, 0)
    return (y, idx) if return_indices else y


def max_pool1d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Optional[Union[int, Sequence[int]]] = None, padding: Union[int, Sequence[int]] = 0,
               dilation: Union[int, Sequence[int]] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """1-D max pooling over the last dim, as ``torch.nn.functional.max_pool1d`` (arguments as in :func:`max_pool2d`).

    Args:
        input: ``(N, C, L)`` or ``(C, L)``.
        kernel_size: window size.
        stride: window step; ``None`` means ``kernel_size``.
        padding: implicit ``-inf`` padding on both ends.
        dilation: spacing between window elements.
        ceil_mode: round the output length up instead of down.
        return_indices: also return the index of each maximum.

    Returns:
        ``(N, C, L_out)``, or ``(output, indices)`` with ``return_indices``.
    """
    k = _pair(kernel_size, 1)[0]
    s = _pair(stride, 1)[0] if stride not in (None, [], ()) else k
    y: Any = F.max_pool2d(S.unsqueeze(input, -2), (1, k), (1, s), (0, _pair(padding, 1)[0]),
                          (1, _pair(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return S.squeeze(y[0], -2), S.squeeze(y[1], -2)
    return S.squeeze(y, -2)


class AvgPool2d(Function):
    """The autograd op behind :func:`avg_pool2d`: window means forward, the gradient spread evenly over each window."""

    capture_role = "avg_pool2d"

    @staticmethod
    def forward(ctx, x, k, s, p, ceil_mode, cip, div):
        ctx.args = (x.shape, k, s, p, ceil_mode, cip, div)
        return _C.avg_pool2d_forward(_kin(x), k, s, p, ceil_mode, cip, div).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, k, s, p, ceil_mode, cip, div):
        ctx.args = (x.shape, k, s, p, ceil_mode, cip, div)
        return ctx.xp.avg_pool2d_forward(x, k, s, p, ceil_mode, cip, div)

    @staticmethod
    def backward(ctx, g):
        shape, k, s, p, ceil_mode, cip, div = ctx.args
        return (ctx.xp.avg_pool2d_backward(_kin(g), shape, k, s, p, ceil_mode, cip, div),)


def avg_pool2d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Optional[Union[int, Sequence[int]]] = None, padding: Union[int, Sequence[int]] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
    """2-D average pooling: the mean over each kernel window, as ``torch.nn.functional.avg_pool2d``.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` unbatched; a floating-point tensor.
        kernel_size: window size, one int or ``(kH, kW)``.
        stride: window step; ``None`` (default) means ``kernel_size``.
        padding: implicit zero padding on both sides, at most half the kernel size.
        ceil_mode: round the output size up instead of down.
        count_include_pad: count the padding zeros in the divisor.
        divisor_override: divide every window sum by this instead.

    Returns:
        ``(N, C, H_out, W_out)`` (unbatched: ``(C, H_out, W_out)``).

    Raises:
        TypeError: the input is not a floating-point tensor.
        RuntimeError: a non-positive kernel or stride, too much padding, or ``divisor_override=0``.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.avg_pool2d(flow.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    _check_float(input, "avg_pool2d")
    x, unbatched = _batchify(input, 4, "avg_pool2d")
    k = _pair(kernel_size, 2, "kernel_size")
    s = _pair(stride, 2, "stride") if stride not in (None, [], ()) else k
    p = _pair(padding, 2, "padding")
    _check_pool(x, k, s, p, (1, 1), "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("avg_pool2d(): divisor must be not zero")
    y = AvgPool2d.apply(x, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override or 0)
    return S.squeeze(y, 0) if unbatched else y


def avg_pool1d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Optional[Union[int, Sequence[int]]] = None, padding: Union[int, Sequence[int]] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over the last dim, as ``torch.nn.functional.avg_pool1d`` (arguments as in
    :func:`avg_pool2d`).

    Args:
        input: ``(N, C, L)`` or ``(C, L)``.
        kernel_size: window size.
        stride: window step; ``None`` means ``kernel_size``.
        padding: implicit zero padding on both ends.
        ceil_mode: round the output length up instead of down.
        count_include_pad: count the padding zeros in the divisor.

    Returns:
        ``(N, C, L_out)``.
    """
    k = _pair(kernel_size, 1)[0]
    s = _pair(stride, 1)[0] if stride not in (None, [], ()) else k
    y = F.avg_pool2d(S.unsqueeze(input, -2), (1, k), (1, s), (0, _pair(padding, 1)[0]), ceil_mode, count_include_pad)
    return S.squeeze(y, -2)


def _adaptive_size(x, output_size):
    o = _pair(output_size, 2, "output_size") if not isinstance(output_size, (list, tuple)) else output_size
    o = tuple(x.shape[2 + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        raise RuntimeError(f"adaptive pooling: output_size must be non-negative, got {o}")
    return o


class AdaptiveAvgPool2d(Function):
    """The autograd op behind :func:`adaptive_avg_pool2d` (outputs other than 1x1)."""

    capture_role = "adaptive_avg_pool2d"

    @staticmethod
    def forward(ctx, x, o):
        ctx.shape = x.shape
        return _C.adaptive_avg_pool2d_forward(_kin(x), o).astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, o):
        ctx.shape = x.shape
        return ctx.xp.adaptive_avg_pool2d_forward(x, o)

    @staticmethod
    def backward(ctx, g):
        return (ctx.xp.adaptive_avg_pool2d_backward(_kin(g), ctx.shape),)


def adaptive_avg_pool2d(input: Tensor, output_size: Union[int, Sequence[Optional[int]]]) -> Tensor:
    """2-D adaptive average pooling to a fixed output size, as ``torch.nn.functional.adaptive_avg_pool2d``: output cell
    ``(i, j)`` averages rows ``[floor(i * H / oH), ceil((i + 1) * H / oH))`` and the matching columns.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` unbatched; a floating-point tensor.
        output_size: ``(oH, oW)`` or one int for both; ``None`` in a dim keeps the input size there.

    Returns:
        ``(N, C, oH, oW)`` (unbatched: ``(C, oH, oW)``).

    Raises:
        TypeError: the input is not a floating-point tensor.
        RuntimeError: a negative output size.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.adaptive_avg_pool2d(flow.ones(2, 3, 7, 5), 1).shape
        flowvision.Size([2, 3, 1, 1])
    """
    _check_float(input, "adaptive_avg_pool2d")
    x, unbatched = _batchify(input, 4, "adaptive_avg_pool2d")
    o = _adaptive_size(x, output_size)
    if o == (1, 1):  # global pooling: a mean is cheaper and exact
        y = R.mean(x, (2, 3), keepdim=True)
    else:
        y = AdaptiveAvgPool2d.apply(x, o)
    return S.squeeze(y, 0) if unbatched else y


def adaptive_avg_pool1d(input: Tensor, output_size: Union[int, Sequence[int]]) -> Tensor:
    """1-D adaptive average pooling of the last dim to ``output_size`` cells, as
    ``torch.nn.functional.adaptive_avg_pool1d``.

    Args:
        input: ``(N, C, L)`` or ``(C, L)``.
        output_size: the output length.

    Returns:
        ``(N, C, output_size)``.
    """
    return S.squeeze(F.adaptive_avg_pool2d(S.unsqueeze(input, -2), (1, _pair(output_size, 1)[0])), -2)


class AdaptiveMaxPool2d(Function):
    """The autograd op behind :func:`adaptive_max_pool2d`: returns ``(output, indices)``."""

    @staticmethod
    def forward(ctx, x, o):
        y, idx = _C.adaptive_max_pool2d_forward(_kin(x), o)
        ctx.args = (x.shape, idx)
        return y.astype(x.dtype, copy=False), idx

    @staticmethod
    def forward_cuda(ctx, x, o):
        y, idx = ctx.xp.adaptive_max_pool2d_forward(x, o)
        ctx.args = (x.shape, idx)
        return y, idx

    @staticmethod
    def backward(ctx, g, _gi):
        shape, idx = ctx.args
        return (ctx.xp.max_pool2d_backward(_kin(g), idx, shape),)


def adaptive_max_pool2d(input: Tensor, output_size: Union[int, Sequence[Optional[int]]],
                        return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """2-D adaptive max pooling to a fixed output size (the windows of :func:`adaptive_avg_pool2d`), as
    ``torch.nn.functional.adaptive_max_pool2d``.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` unbatched; a floating-point tensor.
        output_size: ``(oH, oW)`` or one int for both; ``None`` in a dim keeps the input size there.
        return_indices: also return the flat ``H * W`` index of each maximum.

    Returns:
        ``(N, C, oH, oW)``, or ``(output, indices)`` with ``return_indices``.

    Raises:
        TypeError: the input is not a floating-point tensor.
        RuntimeError: a negative output size.
    """
    _check_float(input, "adaptive_max_pool2d")
    x, unbatched = _batchify(input, 4, "adaptive_max_pool2d")
    y, idx = AdaptiveMaxPool2d.apply(x, _adaptive_size(x, output_size))
    if unbatched:
        y, idx = S.squeeze(y, 0), S.squeeze(idx, 0)
    return (y, idx) if return_indices else y


def adaptive_max_pool1d(input: Tensor, output_size: Union[int, Sequence[int]],
                        return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """1-D adaptive max pooling of the last dim to ``output_size`` cells, as
    ``torch.nn.functional.adaptive_max_pool1d``.

    Args:
        input: ``(N, C, L)`` or ``(C, L)``.
        output_size: the output length.
        return_indices: also return the index of each maximum.

    Returns:
        ``(N, C, output_size)``, or ``(output, indices)`` with ``return_indices``.
    """
    r: Any = F.adaptive_max_pool2d(S.unsqueeze(input, -2), (1, _pair(output_size, 1)[0]), return_indices)
    if return_indices:
        return S.squeeze(r[0], -2), S.squeeze(r[1], -2)
    return S.squeeze(r, -2)
