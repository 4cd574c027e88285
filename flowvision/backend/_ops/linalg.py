"""Matrix products and einsum. Float GEMMs run in the compiled kernel (``_C.gemm``)."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.graph import Function
from ._util import broadcast_shapes, unbroadcast
from .. import _kernels as K
from .. import _autocast_policy as _amp


def _bmm_arrays(a, b):
    """(..., M, K) @ (..., K, N) with numpy broadcasting of the batch dims."""
    return K.matmul(a, b)


def _shared_matrix_grad(xp, rows, grows, b2):
    """``rows.T @ grows``, the gradient of the (K, N) right operand. When that operand is the transposed view of a
    C-contiguous (N, K) matrix (``linear``'s ``weight.t()``), the product is computed as ``(grows.T @ rows).T``: the
    gradient that reaches the weight is then C-contiguous like the weight itself, and the optimizer's fused update
    takes it without a copy."""
    if isinstance(b2, np.ndarray) and b2.flags.f_contiguous and not b2.flags.c_contiguous:  # CPU arrays only
        return xp.swapaxes(xp.bmm(xp.swapaxes(grows, -1, -2), rows), -1, -2)
    return xp.bmm(xp.swapaxes(rows, -1, -2), grows)


class Matmul(Function):
    capture_role = "matmul"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        out = _bmm_arrays(a2, b2)
        if a.ndim == 1:
            out = out[..., 0, :]
        if b.ndim == 1:
            out = out[..., 0]
        return out

    @staticmethod
    def forward_cuda(ctx, a, b):
        ctx.save_for_backward(a, b)
        xp = ctx.xp
        a2 = xp.reshape(a, [1, a.shape[0]]) if a.ndim == 1 else a
        b2 = xp.reshape(b, [b.shape[0], 1]) if b.ndim == 1 else b
        if b2.ndim == 2 and a2.ndim > 2:  # (..., M, K) @ (K, N): one GEMM over all rows
            out = xp.matmul(xp.reshape(a2, [-1, a2.shape[-1]]), b2)
            out = xp.reshape(out, list(a2.shape[:-1]) + [b2.shape[-1]])
        else:
            out = xp.matmul(a2, b2)
        shape = list(out.shape)
        if a.ndim == 1:
            shape.pop(-2)
        if b.ndim == 1:
            shape.pop(-1)
        return xp.reshape(out, shape)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        xp = ctx.xp
        a2 = xp.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
        b2 = xp.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
        g2 = g  # undo the forward's squeezes in reverse order (last dim first: 1-D @ 1-D gives a 0-d g)
        if b.ndim == 1:
            g2 = xp.expand_dims(g2, -1)
        if a.ndim == 1:
            g2 = xp.expand_dims(g2, -2)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = xp.bmm(g2, xp.swapaxes(b2, -1, -2))
            ga = unbroadcast(ga, a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1] and b2.ndim == 2 and a2.ndim > 2:
            # a matrix shared by every batch element (a linear layer's weight): one GEMM over all rows, instead of
            # one small product per batch element and a reduction of those copies
            rows = xp.reshape(a2, (-1, a2.shape[-1]))
            gb = xp.reshape(_shared_matrix_grad(xp, rows, xp.reshape(g2, (-1, g2.shape[-1])), b2), b.shape)
        elif ctx.needs_input_grad[1] and b2.ndim == 2 and a2.ndim == 2:
            gb = xp.reshape(_shared_matrix_grad(xp, a2, g2, b2), b.shape)
        elif ctx.needs_input_grad[1]:
            gb = xp.bmm(xp.swapaxes(a2, -1, -2), g2)
            gb = unbroadcast(gb, b2.shape).reshape(b.shape)
        return ga, gb


def _check_mm(a, b, name):
    for x in (a, b):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): expected Tensor arguments, got {type(x).__name__}")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to {name} need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        sa = list(a.shape) if a.ndim > 1 else [1, a.shape[0]]
        raise RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, sa[-2:]))} and "
                           f"{'x'.join(map(str, (list(b.shape) if b.ndim > 1 else [b.shape[0], 1])[-2:]))}); "
                           f"full shapes {list(a.shape)} and {list(b.shape)}")
    if a.ndim > 2 or b.ndim > 2:
        broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]) if b.ndim > 1 else ())
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a._dtype} != {b._dtype}")


@_amp.lower_precision
def matmul(input, other):
    _check_mm(input, other, "matmul")
    return Matmul.apply(input, other)


@_amp.lower_precision
def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm(): self must be a matrix (got {input.ndim}D) and mat2 a matrix (got {mat2.ndim}D)")
    _check_mm(input, mat2, "mm")
    return Matmul.apply(input, mat2)


@_amp.lower_precision
def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm(): batch1 must be a 3D tensor (got {input.ndim}D) and batch2 too (got {mat2.ndim}D)")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm(): batch1 and batch2 must have same number of batches, got {input.shape[0]} and "
                           f"{mat2.shape[0]}")
    _check_mm(input, mat2, "bmm")
    return Matmul.apply(input, mat2)


def mv(input, vec):
    _check_mm(input, vec, "mv")
    return Matmul.apply(input, vec)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_mm(input, other, "dot")
    return Matmul.apply(input, other)


inner = dot


def outer(input, vec2):
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer


@_amp.lower_precision
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    out = mm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta) if beta != 0 else out


@_amp.lower_precision
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    out = bmm(batch1, batch2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta) if beta != 0 else out


@_amp.lower_precision
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    out = bmm(batch1, batch2).sum(0)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta) if beta != 0 else out


class Einsum(Function):
    @staticmethod
    def forward(ctx, *ops, spec):
        ins, out = spec
        ctx.save_for_backward(*ops)
        ctx.spec = spec
        return np.asarray(np.einsum(",".join(ins) + "->" + out, *ops, optimize=len(ops) > 2))

    @staticmethod
    def backward(ctx, g):
        ops = ctx.saved
        ins, out = ctx.spec
        grads = []
        for i, sub in enumerate(ins):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [ops[j] for j in range(len(ops)) if j != i]
            other_subs = [ins[j] for j in range(len(ops)) if j != i]
            full = "".join(dict.fromkeys(sub))  # unique letters in order
            avail = set(out).union(*other_subs)
            target = "".join(c for c in full if c in avail)
            gi = np.einsum(",".join([out] + other_subs) + "->" + target, g, *others, optimize=len(others) > 1)
            for c in full:  # letters summed out of this operand alone: the gradient is constant along them
                if c not in avail:
                    gi = np.expand_dims(gi, -1)
                    target += c
            gi = np.einsum(target + "->" + full, gi)
            sizes = {c: ops[i].shape[k] for k, c in enumerate(sub)}
            gi = np.broadcast_to(gi, [sizes[c] for c in full])
            if len(full) != len(sub):  # repeated letters (a diagonal): write into the diagonal
                res = np.zeros(ops[i].shape, g.dtype)
                np.einsum(sub + "->" + full, res)[...] = gi
                gi = res
            grads.append(np.ascontiguousarray(gi))
        return tuple(grads)


def _parse_einsum(equation, ops):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "").replace("...", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        if "..." in lhs:
            out = "..." + out
    ins = lhs.split(",")
    if len(ins) != len(ops):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation "
                           f"({len(ins)} subscripts, {len(ops)} operands)")
    if "..." in eq:
        # expand ellipses into explicit letters so the backward can work with plain subscripts
        used = set(eq)
        free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
        nell = 0
        for s, op in zip(ins, ops):
            if "..." in s:
                nell = max(nell, op.ndim - (len(s) - 3))
        ell = "".join(free[:nell])
        new_ins = []
        for s, op in zip(ins, ops):
            if "..." in s:
                k = op.ndim - (len(s) - 3)
                s = s.replace("...", ell[nell - k:])
            new_ins.append(s)
        ins, out = new_ins, out.replace("...", ell)
    for s, op in zip(ins, ops):
        if len(s) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the "
                               f"number of dimensions ({op.ndim}) for operand with shape {list(op.shape)}")
    return tuple(ins), out


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ins, out = _parse_einsum(equation, operands)
    rd = D.result_type(*operands)
    return Einsum.apply(*operands, spec=(ins, out), _dtype=rd)
