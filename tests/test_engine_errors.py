"""Bad input gives a clear error of the same exception type as torch, naming the offending shapes / dtypes.

One test per mistake. Each checks the exception type against torch doing the same thing, and that the
flowvision message names what was wrong (shapes as ``[2, 3]``-style lists or ``2x3``, dtype names).
"""
import re

import numpy as np
import pytest
import torch

import flowvision.backend as flow

F = flow.nn.functional
TF = torch.nn.functional


def same_error(fn, *must_contain):
    """Run ``fn(m)`` for torch and flow: both raise the same exception type; flow's message names the parts."""
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(Exception) as f_info:
        fn(flow)
    t_exc, f_exc = t_info.value, f_info.value
    assert isinstance(f_exc, type(t_exc)) or type(f_exc).__name__ == type(t_exc).__name__, \
        f"flow raised {type(f_exc).__name__}: {f_exc}; torch {type(t_exc).__name__}: {t_exc}"
    msg = str(f_exc)
    for part in must_contain:
        if isinstance(part, re.Pattern):
            assert part.search(msg), f"{part.pattern!r} not in flow's message: {msg}"
        else:
            assert part in msg, f"{part!r} not in flow's message: {msg}"
    return msg


def fn_of(m):
    return TF if m is torch else F


def r(m, *shape, dtype=None, grad=False):
    a = np.random.default_rng(0).standard_normal(shape)
    dt = getattr(m, dtype) if dtype else m.float32
    return m.tensor(a, dtype=dt, requires_grad=grad)


# ------------------------------------------------------------------ shapes
def test_matmul_shape_mismatch():
    same_error(lambda m: m.matmul(r(m, 2, 3), r(m, 4, 5)), "2x3", "4x5")


def test_mm_shape_mismatch():
    same_error(lambda m: m.mm(r(m, 2, 3), r(m, 2, 3)), "2x3")


def test_bmm_batch_mismatch():
    same_error(lambda m: m.bmm(r(m, 2, 3, 4), r(m, 3, 4, 5)), "2", "3")


def test_matmul_batch_broadcast_mismatch():
    same_error(lambda m: r(m, 2, 3, 4) @ r(m, 3, 4, 5), "2", "3")


def test_linear_feature_mismatch():
    same_error(lambda m: fn_of(m).linear(r(m, 5, 3), r(m, 4, 7)), "[5, 3]", "[4, 7]")


def test_broadcast_mismatch():
    msg = same_error(lambda m: r(m, 2, 3) + r(m, 4, 3), "(2)", "(4)", "dimension 0")
    assert "[2, 3]" in msg and "[4, 3]" in msg


def test_broadcast_mismatch_inplace():
    same_error(lambda m: r(m, 2, 3).add_(r(m, 4, 1)), "[2, 3]")


def test_inplace_result_not_broadcastable_to_self():
    same_error(lambda m: r(m, 1, 3).add_(r(m, 4, 3)), "[1, 3]", "[4, 3]")


def test_conv2d_channel_mismatch():
    same_error(lambda m: fn_of(m).conv2d(r(m, 1, 3, 8, 8), r(m, 4, 2, 3, 3)), "[4, 2, 3, 3]", "[1, 3, 8, 8]",
               "3 channels")


def test_conv2d_groups_mismatch():
    same_error(lambda m: fn_of(m).conv2d(r(m, 1, 4, 8, 8), r(m, 4, 2, 3, 3), groups=3), "groups=3", "[4, 2, 3, 3]")


def test_conv2d_kernel_larger_than_input():
    same_error(lambda m: fn_of(m).conv2d(r(m, 1, 1, 2, 2), r(m, 1, 1, 3, 3)), "(2 x 2)", "(3 x 3)")


def test_conv2d_weight_rank():
    same_error(lambda m: fn_of(m).conv2d(r(m, 1, 2, 5, 5), r(m, 4, 2, 3)), "[4, 2, 3]")


def test_cat_size_mismatch():
    same_error(lambda m: m.cat([r(m, 2, 3), r(m, 2, 4)], 0), "Sizes of tensors must match", "3", "4")


def test_stack_size_mismatch():
    same_error(lambda m: m.stack([r(m, 2, 3), r(m, 3, 2)]), "[2, 3]", "[3, 2]")


def test_view_incompatible_stride():
    same_error(lambda m: r(m, 3, 4).t().view(12), "view size is not compatible", "[4, 3]")


def test_reshape_wrong_numel():
    same_error(lambda m: r(m, 3, 4).reshape(5, 2), "[5, 2]", "12")


def test_expand_non_singleton():
    same_error(lambda m: r(m, 3, 2).expand(3, 4), "(4)", "(2)", "[3, 4]")


def test_layer_norm_shape_mismatch():
    same_error(lambda m: fn_of(m).layer_norm(r(m, 2, 3, 4), (3,)), "[3]", "[2, 3, 4]")


def test_batch_norm_channel_mismatch():
    same_error(lambda m: fn_of(m).batch_norm(r(m, 2, 3, 4), r(m, 4), r(m, 4)), "3", "4")


def test_index_out_of_range():
    same_error(lambda m: r(m, 3, 4)[5], "5", "size 3")


def test_gather_index_rank_mismatch():
    same_error(lambda m: m.gather(r(m, 3, 4), 1, m.zeros(3, dtype=m.int64)), "[3]", "[3, 4]")


def test_negative_index_for_gather():
    same_error(lambda m: m.gather(r(m, 3, 4), 1, m.full((3, 1), -1, dtype=m.int64)), "-1", "size 4")


def test_dim_out_of_range():
    same_error(lambda m: r(m, 3, 4).sum(2), "[-2, 1]", "2")


def test_cross_entropy_target_out_of_bounds():
    same_error(lambda m: fn_of(m).cross_entropy(r(m, 2, 3), m.tensor([0, 7])), "7")


def test_loss_shape_mismatch():
    same_error(lambda m: fn_of(m).binary_cross_entropy_with_logits(r(m, 2, 3), r(m, 3, 2)), "[3, 2]", "[2, 3]")


# ------------------------------------------------------------------ dtypes
def test_float_index_tensor():
    same_error(lambda m: r(m, 3, 4)[m.tensor([0.0, 1.0])], "long", "bool")


def test_float_index_for_gather():
    same_error(lambda m: m.gather(r(m, 3, 4), 1, m.zeros(3, 4)), "int64", "float")


def test_float_index_for_index_select():
    same_error(lambda m: m.index_select(r(m, 3, 4), 0, m.tensor([0.0])), "int64", "float")


def test_int_input_to_conv2d():
    same_error(lambda m: fn_of(m).conv2d(m.ones(1, 2, 5, 5, dtype=m.int64), r(m, 3, 2, 3, 3)), "int64")


def test_matmul_dtype_mismatch():
    same_error(lambda m: r(m, 2, 3) @ r(m, 3, 4, dtype="float64"), "float32", "float64")


def test_int_tensor_cannot_require_grad():
    same_error(lambda m: m.ones(3, dtype=m.int64).requires_grad_(), "floating point", "int64")


def test_masked_fill_with_non_bool_mask():
    same_error(lambda m: r(m, 2, 3).masked_fill(m.ones(2, 3, dtype=m.int64), 0.0), "bool", "int64")


def test_inplace_result_type_cannot_be_cast():
    same_error(lambda m: m.ones(3, dtype=m.int64).add_(r(m, 3)), "Float32", "Int64")


def test_mean_of_integer_tensor():
    same_error(lambda m: m.ones(3, dtype=m.int64).mean(), "int64")


def test_one_hot_of_float_tensor():
    same_error(lambda m: fn_of(m).one_hot(m.ones(3)), "LongTensor")


def test_embedding_with_float_indices():
    same_error(lambda m: fn_of(m).embedding(m.ones(3), r(m, 4, 2)), "Long", "float32")


# ------------------------------------------------------------------ autograd misuse
def test_backward_on_tensor_that_does_not_require_grad():
    same_error(lambda m: (r(m, 2, 3) * 2).sum().backward(), "does not require grad", "float32[]")


def test_backward_non_scalar_without_gradient():
    same_error(lambda m: (r(m, 2, 3, grad=True) * 2).backward(), "scalar outputs", "[2, 3]")


def test_backward_gradient_shape_mismatch():
    same_error(lambda m: (r(m, 2, 3, grad=True) * 2).backward(m.ones(3, 2)), "[3, 2]", "[2, 3]")


def test_inplace_on_leaf_that_requires_grad():
    same_error(lambda m: r(m, 2, 3, grad=True).mul_(2), "leaf Variable that requires grad",
               "float32[2, 3]")


def test_inplace_on_view_of_leaf_that_requires_grad():
    same_error(lambda m: r(m, 2, 3, grad=True)[0].zero_(), "view of a leaf Variable", "float32[3]")


def test_second_backward_without_retain_graph():
    def f(m):
        x = r(m, 2, 3, grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    same_error(f, "backward through the graph a second time", "retain_graph=True", "Backward0")


def test_modified_saved_tensor():
    def f(m):
        x = r(m, 2, 3, grad=True)
        y = x.exp()
        z = y * y
        y.add_(1)
        z.sum().backward()
    same_error(f, "modified by an inplace operation", "[2, 3]", "version 1", "version 0")


def test_autograd_grad_of_unused_input():
    def f(m):
        x, y = r(m, 2, grad=True), r(m, 3, grad=True)
        m.autograd.grad((x * 2).sum(), [x, y])
    same_error(f, "not have been used in the graph", "allow_unused=True")


def test_numpy_of_tensor_that_requires_grad():
    same_error(lambda m: r(m, 2, grad=True).numpy(), "requires grad", "detach")


def test_item_of_many_elements():
    same_error(lambda m: r(m, 2, 3).item(), "6 elements")
