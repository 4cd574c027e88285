"""torch.nn.functional for flowvision.backend.

Hot ops (conv, pooling, norms, softmax, interpolate, GELU/SiLU, unfold/fold) are ``Function``s over the
compiled kernels in ``_C``; the rest are compositions of differentiable tensor ops. The implementations live in
``nn/_functional/``, one module per concern (``conv``, ``pooling``, ``normalization``, ``activation``, ``loss``,
...); this module is the public namespace. A functional op that calls another one (``conv1d`` -> ``conv2d``,
``cross_entropy`` -> ``log_softmax``) looks it up here at call time, so a wrapper installed on
``functional.<name>`` (the node tracer, the MAC counter) sees those calls too.
"""
from ._functional.common import (  # noqa: F401
    DTypeError, ShapeError, _array, _batchify, _check_float, _check_same_dtype, _const, _ema_, _kin, _opt, _pair
)
from ._functional.linear import bilinear, linear, Linear, _linear_fast_ok, _linear_ops  # noqa: F401
from ._functional.conv import (  # noqa: F401
    conv1d, Conv2d, conv2d, conv_transpose1d, conv_transpose2d, ConvTranspose2d, fold, unfold, _direct_conv_ok,
    _Fold, _overlap, _same_padding, _Unfold
)
from ._functional.pooling import (  # noqa: F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, AdaptiveAvgPool2d,
    AdaptiveMaxPool2d, avg_pool1d, avg_pool2d, AvgPool2d, max_pool1d, max_pool2d, MaxPool2d, _adaptive_size,
    _check_pool, _pool_out
)
from ._functional.normalization import (  # noqa: F401
    batch_norm, BatchNormEval, BatchNormTrain, group_norm, GroupNorm, instance_norm, layer_norm, LayerNorm,
    local_response_norm, normalize, rms_norm
)
from ._functional.dropout import (  # noqa: F401
    alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, _channel_dropout, _check_p, _dropout_mask
)
from ._functional.activation import (  # noqa: F401
    celu, elu, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, logsigmoid, mish, prelu, relu,
    relu6, relu_, rrelu, rrelu_, selu, sigmoid, silu, softplus, softshrink, softsign, tanh, tanhshrink, threshold,
    _act, _Elu, _elu_params, _Gelu, _Hardsigmoid, _Hardswish, _Hardtanh, _LeakyRelu, _LogSigmoid, _maybe_inplace,
    _Mish, _no_params, _pointwise, _pointwise_in_storage, _Relu, _RRelu, _Silu, _Softplus, _softplus_np, _Softsign,
    _Threshold
)
from ._functional.softmax import gumbel_softmax, log_softmax, softmax, softmin, _Softmax, _softmax_dim  # noqa: F401
from ._functional.vision import (  # noqa: F401
    interpolate, pad, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest, _Interpolate,
    _MODES, _pad_index
)
from ._functional.sparse import embedding, one_hot, _Embedding  # noqa: F401
from ._functional.attention import scaled_dot_product_attention  # noqa: F401
from ._functional.distance import cosine_similarity, pairwise_distance  # noqa: F401
from ._functional.loss import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, cross_entropy, huber_loss,
    kl_div, l1_loss, margin_ranking_loss, mse_loss, nll_loss, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
    _BCE, _check_target_shape, _legacy_reduction, _NllPick, _reduce
)
from ._functional.ctc import ctc_loss  # noqa: F401
from ._functional.margin_loss import (  # noqa: F401
    gaussian_nll_loss, hinge_embedding_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
    triplet_margin_loss, triplet_margin_with_distance_loss
)

# torch's CPU kernels for these return channels_last outputs for channels_last inputs; the engine's write NCHW
from .._memory_format import follows_channels_last as _follows_cl  # noqa: E402
conv2d, conv_transpose2d = _follows_cl(conv2d, weight=True), _follows_cl(conv_transpose2d, weight=True)
batch_norm, group_norm = _follows_cl(batch_norm), _follows_cl(group_norm)
relu, relu6, hardswish, hardsigmoid, silu, gelu, sigmoid, dropout = (
    _follows_cl(f) for f in (relu, relu6, hardswish, hardsigmoid, silu, gelu, sigmoid, dropout))
max_pool2d, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d, interpolate, pad = (
    _follows_cl(f) for f in (max_pool2d, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d, interpolate, pad))

__all__ = [
    "conv1d", "conv2d", "conv_transpose2d", "linear", "bilinear", "max_pool1d", "max_pool2d", "avg_pool1d",
    "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "dropout", "dropout1d", "dropout2d", "alpha_dropout",
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "hardswish", "hardsigmoid",
    "hardtanh", "softplus", "sigmoid", "tanh", "logsigmoid", "softsign", "tanhshrink", "threshold", "prelu", "glu",
    "softmax", "log_softmax", "softmin", "interpolate", "upsample", "pad", "unfold", "fold", "embedding",
    "scaled_dot_product_attention", "normalize", "one_hot", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "relu_", "gumbel_softmax",
    "poisson_nll_loss", "gaussian_nll_loss", "soft_margin_loss", "margin_ranking_loss", "cosine_embedding_loss",
    "hinge_embedding_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss",
]
