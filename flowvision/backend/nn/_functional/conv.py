"""Convolutions (1-D/2-D, transposed) and the im2col pair ``unfold`` / ``fold``."""
from typing import Optional, Sequence, Union

import numpy as np

from ... import _C
from ... import _autocast_policy as _amp
from ..._ops import kernel_select as _select, shape as S
from ..._tensor import Tensor
from ...autograd.graph import Function
from .common import ShapeError, _batchify, _check_float, _check_same_dtype, _kin, _opt, _pair
from .linear import _linear_fast_ok
from .. import functional as F


class Conv2d(Function):
    """The autograd op behind :func:`conv2d` (batched NCHW input): the compiled convolution kernels forward, the
    input and weight gradients backward.
    """

    capture_role = "conv2d"

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation, groups):
        xk, wk = _kin(x), _kin(w)
        ctx.save_for_backward(xk, wk)
        ctx.args = (stride, padding, dilation, groups, b is not None, x.dtype)
        y = _C.conv2d_forward(xk, wk, _opt(b, xk), stride, padding, dilation, groups)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def forward_cuda(ctx, x, w, b, stride, padding, dilation, groups):
        ctx.save_for_backward(x, w)
        ctx.args = (stride, padding, dilation, groups, b is not None, x.dtype)
        return ctx.xp.conv2d_forward(x, w, b, stride, padding, dilation, groups)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved
        stride, padding, dilation, groups, has_b, dt = ctx.args
        gk = _kin(g).astype(x.dtype, copy=False)
        need = ctx.needs_input_grad
        xp = ctx.xp
        gx = xp.conv2d_backward_input(gk, w, x.shape, stride, padding, dilation, groups) if need[0] else None
        gw = xp.conv2d_backward_weight(gk, x, w.shape, stride, padding, dilation, groups) if need[1] else None
        gb = gk.sum(axis=(0, 2, 3)) if has_b and need[2] else None
        return gx, gw, gb


def _same_padding(kernel, dilation):
    total = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return [(t // 2, t - t // 2) for t in total]


@_amp.lower_precision
def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Union[int, Sequence[int]] = 1,
           padding: Union[int, Sequence[int], str] = 0, dilation: Union[int, Sequence[int]] = 1,
           groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation) of a batch of images with a filter bank, as ``torch.nn.functional.conv2d``.

    ``out[n, o] = bias[o] + sum_c weight[o, c] * input[n, g * C/groups + c]`` over each kernel window, where ``g`` is
    the group of output channel ``o``. Output size per spatial dim:
    ``floor((size + 2 * padding - dilation * (k - 1) - 1) / stride) + 1``.

    Args:
        input: ``(N, C_in, H, W)``, or ``(C_in, H, W)`` unbatched; a floating-point tensor.
        weight: ``(C_out, C_in / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride: step of the kernel window, one int or ``(sH, sW)``.
        padding: implicit zero padding on both sides, an int, ``(pH, pW)``, ``'valid'`` (none) or ``'same'`` (output
            as large as the input; stride must be 1).
        dilation: spacing between kernel elements.
        groups: number of channel groups; ``C_in`` and ``C_out`` must both be divisible by it.

    Returns:
        ``(N, C_out, H_out, W_out)`` (``(C_out, H_out, W_out)`` for unbatched input), of the input's dtype.

    Raises:
        TypeError: the input is not a floating-point tensor, or input, weight and bias differ in dtype.
        ValueError: the channels do not match ``weight`` and ``groups``, the padded input is smaller than the
            kernel, or ``padding`` is an unknown string.
        RuntimeError: ``weight`` or ``bias`` has the wrong shape, or ``padding='same'`` with a stride.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.conv2d(flow.ones(1, 3, 5, 5), flow.ones(2, 3, 3, 3), padding=1).shape
        flowvision.Size([1, 2, 5, 5])
    """
    _check_float(input, "conv2d")
    _check_same_dtype("conv2d", input, weight, bias)
    x, unbatched = _batchify(input, 4, "conv2d")
    if weight.ndim != 4:
        raise RuntimeError(f"conv2d(): weight must be 4-D (out_channels, in_channels/groups, kH, kW), got "
                           f"{list(weight.shape)}")
    if x.shape[1] != weight.shape[1] * groups:
        raise ShapeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                         f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                         "channels instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"conv2d(): out_channels ({weight.shape[0]}) must be divisible by groups ({groups})")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"conv2d(): bias must have shape [{weight.shape[0]}], got {list(bias.shape)}")
    stride, dilation = _pair(stride, 2, "stride"), _pair(dilation, 2, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = _same_padding(weight.shape[2:], dilation)
            if any(a != b for a, b in pads):
                x = F.pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
                padding = (0, 0)
            else:
                padding = (pads[0][0], pads[1][0])
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    padding = _pair(padding, 2, "padding")
    k_eff = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
    for i in range(2):
        if x.shape[2 + i] + 2 * padding[i] < k_eff[i]:
            raise ShapeError(f"Calculated padded input size per channel: ({x.shape[2] + 2 * padding[0]} x "
                             f"{x.shape[3] + 2 * padding[1]}). Kernel size: ({k_eff[0]} x {k_eff[1]}). Kernel size "
                             "can't be greater than actual input size")
    algo = "im2col"
    if _linear_fast_ok(x, weight, bias, conv=True):  # inference: the packed-weight algorithms may run
        algo = _select.conv_algorithm(x.shape, weight.shape, padding, int(groups), x._data.dtype)
    if algo == "gemm_1x1":
        # 1x1 conv as a GEMM with the weight packed once, bias fused; a strided 1x1 conv reads the subsampled
        # input (one compact copy, like oneDNN's "reduce to unit stride")
        from ... import _kernels
        xa = x._data if stride == (1, 1) else x._data[:, :, ::stride[0], ::stride[1]]
        y = Tensor._wrap(_kernels.conv1x1_packed(xa, weight, None if bias is None else bias._data), x._dtype)
    elif algo == "nhwc_direct":
        # KxK / grouped / depthwise conv with the NHWC direct kernel (weights packed once, bias fused), transposed
        # in and out (see docs/architecture.md, "KxK convolution")
        from ... import _kernels
        y = Tensor._wrap(_kernels.conv2d_nchw_direct(x._data, weight, None if bias is None else bias._data, stride,
                                                     padding, dilation, int(groups)), x._dtype)
    else:
        y = Conv2d.apply(x, weight, bias, stride, padding, dilation, int(groups))
    return S.squeeze(y, 0) if unbatched else y


def _direct_conv_ok(x, w, groups):
    """Whether eager would run an inference conv of these operands with the NHWC direct kernel (unless it is a
    1x1 GEMM): the shared selector's rule (_ops/kernel_select.py)."""
    return _select.eager_direct_ok(x.shape, w.shape, int(groups), x._data.dtype)


@_amp.lower_precision
def conv1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Union[int, Sequence[int]] = 1,
           padding: Union[int, Sequence[int], str] = 0, dilation: Union[int, Sequence[int]] = 1,
           groups: int = 1) -> Tensor:
    """1-D convolution over a batch of sequences, as ``torch.nn.functional.conv1d`` (a ``conv2d`` of height 1).

    Args:
        input: ``(N, C_in, L)``, or ``(C_in, L)`` unbatched.
        weight: ``(C_out, C_in / groups, kW)``.
        bias: optional ``(C_out,)``.
        stride: step of the kernel window.
        padding: implicit zero padding on both ends, an int, ``'valid'`` or ``'same'``.
        dilation: spacing between kernel elements.
        groups: number of channel groups.

    Returns:
        ``(N, C_out, L_out)`` with ``L_out = floor((L + 2 * padding - dilation * (kW - 1) - 1) / stride) + 1``.

    Raises:
        RuntimeError: ``weight`` is not 3-D (and the errors of :func:`conv2d`).

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.conv1d(flow.ones(2, 4, 10), flow.ones(8, 4, 3)).shape
        flowvision.Size([2, 8, 8])
    """
    x, unbatched = _batchify(input, 3, "conv1d")
    if weight.ndim != 3:
        raise RuntimeError(f"conv1d(): weight must be 3-D (out_channels, in_channels/groups, kW), got {list(weight.shape)}")
    pad_arg = padding if isinstance(padding, str) else (0, _pair(padding, 1)[0])
    y = F.conv2d(S.unsqueeze(x, 2), S.unsqueeze(weight, 2), bias, (1, _pair(stride, 1)[0]), pad_arg,
               (1, _pair(dilation, 1)[0]), groups)
    y = S.squeeze(y, 2)
    return S.squeeze(y, 0) if unbatched else y


class ConvTranspose2d(Function):
    """The transposed convolution as conv2d's input gradient. When output_padding >= stride in a dim (allowed
    while it is < dilation), the output is not the input-gradient shape of any conv2d with this padding: the
    unpadded full result is computed then and the output window [p, p + size) cut out of it (zeros past it)."""

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, output_padding, groups, dilation):
        xk, wk = _kin(x), _kin(w)
        n, _, h, wd = xk.shape
        kh, kw = wk.shape[2:]
        oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
        ow = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
        out_shape = (n, wk.shape[1] * groups, oh, ow)
        full = None
        if any(op >= s for op, s in zip(output_padding, stride)):
            full = ((h - 1) * stride[0] + dilation[0] * (kh - 1) + 1, (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1)
        ctx.save_for_backward(xk, wk)
        ctx.args = (stride, padding, dilation, groups, b is not None, out_shape, full)
        if full is None:
            y = _C.conv2d_backward_input(xk, wk, out_shape, stride, padding, dilation, groups)
        else:
            yf = _C.conv2d_backward_input(xk, wk, out_shape[:2] + full, stride, (0, 0), dilation, groups)
            y = np.zeros(out_shape, yf.dtype)
            rh, rw = _overlap(full, padding, (oh, ow))
            y[:, :, :rh, :rw] = yf[:, :, padding[0]:padding[0] + rh, padding[1]:padding[1] + rw]
        if b is not None:
            y += _kin(b).astype(y.dtype).reshape(1, -1, 1, 1)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved
        stride, padding, dilation, groups, has_b, out_shape, full = ctx.args
        gk = _kin(g).astype(x.dtype, copy=False)
        need = ctx.needs_input_grad
        gb = gk.sum(axis=(0, 2, 3)) if has_b and need[2] else None
        pad = padding
        if full is not None:  # the gradient of cutting the window out of the full result
            gf = np.zeros(out_shape[:2] + full, gk.dtype)
            rh, rw = _overlap(full, padding, out_shape[2:])
            gf[:, :, padding[0]:padding[0] + rh, padding[1]:padding[1] + rw] = gk[:, :, :rh, :rw]
            gk, pad = gf, (0, 0)
        gx = _C.conv2d_forward(gk, w, None, stride, pad, dilation, groups) if need[0] else None
        gw = _C.conv2d_backward_weight(x, gk, w.shape, stride, pad, dilation, groups) if need[1] else None
        return gx, gw, gb


def _overlap(full, padding, out_hw):
    """Rows/cols of the output window [p, p + out) that lie inside the full transposed-conv result."""
    return tuple(max(0, min(o, f - p)) for f, p, o in zip(full, padding, out_hw))


@_amp.lower_precision
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
                     output_padding: Union[int, Sequence[int]] = 0, groups: int = 1,
                     dilation: Union[int, Sequence[int]] = 1) -> Tensor:
    """2-D transposed convolution ("deconvolution"), the gradient of :func:`conv2d` with respect to its input, as
    ``torch.nn.functional.conv_transpose2d``.

    Output size per spatial dim:
    ``(size - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.

    Args:
        input: ``(N, C_in, H, W)``, or ``(C_in, H, W)`` unbatched; a floating-point tensor.
        weight: ``(C_in, C_out / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride: stride of the corresponding convolution.
        padding: ``dilation * (k - 1) - padding`` zeros are added to both sides of the input.
        output_padding: extra size added to one side of the output (smaller than ``stride`` or ``dilation``).
        groups: number of channel groups.
        dilation: spacing between kernel elements.

    Returns:
        ``(N, C_out, H_out, W_out)`` (unbatched: ``(C_out, H_out, W_out)``).

    Raises:
        TypeError: the input is not a floating-point tensor.
        ValueError: the computed output size is negative.
        RuntimeError: the weight does not match the input channels, or ``output_padding`` is too large.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.conv_transpose2d(flow.ones(1, 4, 3, 3), flow.ones(4, 2, 2, 2), stride=2).shape
        flowvision.Size([1, 2, 6, 6])
    """
    _check_float(input, "conv_transpose2d")
    x, unbatched = _batchify(input, 4, "conv_transpose2d")
    if weight.ndim != 4 or x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"conv_transpose2d(): weight of size {list(weight.shape)} expects input with "
                           f"{weight.shape[0]} channels, got input of size {list(x.shape)}")
    stride, padding = _pair(stride, 2, "stride"), _pair(padding, 2, "padding")
    output_padding, dilation = _pair(output_padding, 2, "output_padding"), _pair(dilation, 2, "dilation")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= max(s, d):
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
    out_hw = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1) +
              output_padding[i] + 1 for i in range(2)]
    if min(out_hw) < 0:
        raise ShapeError(f"conv_transpose2d(): given input size per channel ({x.shape[2]} x {x.shape[3]}), the "
                         f"calculated output size per channel ({out_hw[0]} x {out_hw[1]}) is too small (weight "
                         f"{list(weight.shape)}, stride {stride}, padding {padding}, dilation {dilation})")
    y = ConvTranspose2d.apply(x, weight, bias, stride, padding, output_padding, int(groups), dilation)
    return S.squeeze(y, 0) if unbatched else y


@_amp.lower_precision
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
                     output_padding: Union[int, Sequence[int]] = 0, groups: int = 1,
                     dilation: Union[int, Sequence[int]] = 1) -> Tensor:
    """1-D transposed convolution, as ``torch.nn.functional.conv_transpose1d`` (a :func:`conv_transpose2d` of height 1).

    Args:
        input: ``(N, C_in, L)``.
        weight: ``(C_in, C_out / groups, kW)``.
        bias: optional ``(C_out,)``.
        stride: stride of the corresponding convolution.
        padding: padding of the corresponding convolution.
        output_padding: extra size added to one end of the output.
        groups: number of channel groups.
        dilation: spacing between kernel elements.

    Returns:
        ``(N, C_out, L_out)``, ``L_out = (L - 1) * stride - 2 * padding + dilation * (kW - 1) + output_padding + 1``.
    """
    y = F.conv_transpose2d(S.unsqueeze(input, -2), S.unsqueeze(weight, 2), bias, (1, _pair(stride, 1)[0]),
                         (0, _pair(padding, 1)[0]), (0, _pair(output_padding, 1)[0]), groups,
                         (1, _pair(dilation, 1)[0]))
    return S.squeeze(y, -2)


class _Unfold(Function):
    @staticmethod
    def forward(ctx, x, k, d, p, s):
        ctx.args = (x.shape[2:], k, d, p, s)
        return _C.im2col(_kin(x), k, d, p, s).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        hw, k, d, p, s = ctx.args
        return (_C.col2im(_kin(g), hw, k, d, p, s),)


class _Fold(Function):
    @staticmethod
    def forward(ctx, x, out_hw, k, d, p, s):
        ctx.args = (k, d, p, s)
        return _C.col2im(_kin(x), out_hw, k, d, p, s).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        k, d, p, s = ctx.args
        return (_C.im2col(_kin(g), k, d, p, s),)


def unfold(input: Tensor, kernel_size: Union[int, Sequence[int]], dilation: Union[int, Sequence[int]] = 1,
           padding: Union[int, Sequence[int]] = 0, stride: Union[int, Sequence[int]] = 1) -> Tensor:
    """Extract sliding local blocks (im2col), as ``torch.nn.functional.unfold``.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` unbatched.
        kernel_size: size of each block.
        dilation: spacing between the elements of a block.
        padding: implicit zero padding on both sides of the input.
        stride: step between blocks.

    Returns:
        ``(N, C * kH * kW, L)``, one column per block, ``L`` the number of block positions.

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.unfold(flow.ones(1, 2, 4, 4), 2, stride=2).shape
        flowvision.Size([1, 8, 4])
    """
    x, unbatched = _batchify(input, 4, "unfold")
    y = _Unfold.apply(x, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    return S.squeeze(y, 0) if unbatched else y


def fold(input: Tensor, output_size: Union[int, Sequence[int]], kernel_size: Union[int, Sequence[int]],
         dilation: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
         stride: Union[int, Sequence[int]] = 1) -> Tensor:
    """Combine sliding local blocks into an image (col2im, overlapping values summed), the inverse layout of
    :func:`unfold`, as ``torch.nn.functional.fold``.

    Args:
        input: ``(N, C * kH * kW, L)``, or ``(C * kH * kW, L)`` unbatched.
        output_size: spatial size ``(H, W)`` of the result.
        kernel_size: size of each block.
        dilation: spacing between the elements of a block.
        padding: implicit zero padding on both sides of the output.
        stride: step between blocks.

    Returns:
        ``(N, C, H, W)`` (unbatched: ``(C, H, W)``).

    Examples:
        >>> import flowvision.backend as flow
        >>> import flowvision.backend.nn.functional as F
        >>> F.fold(flow.ones(1, 8, 4), (4, 4), 2, stride=2).shape
        flowvision.Size([1, 2, 4, 4])
    """
    x, unbatched = _batchify(input, 3, "fold")
    y = _Fold.apply(x, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    return S.squeeze(y, 0) if unbatched else y
