"""Every loss of torch.nn.functional and torch.nn against torch on the same inputs: forward values for each
reduction, the gradients of every differentiable input, torch's errors on bad arguments, and the Module classes."""
import numpy as np
import pytest
import torch

import flowvision.backend as flow
import flowvision.backend.nn as fnn
import flowvision.backend.nn.functional as FF

REDUCTIONS = ["mean", "sum", "none"]
pytestmark = pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")


def _pair(arrays, grads):
    """The same arrays as torch and flow tensors; ``grads[i]`` says whether input i needs a gradient."""
    tt = [torch.tensor(a).requires_grad_(g) for a, g in zip(arrays, grads)]
    ft = [flow.tensor(a).requires_grad_(g) for a, g in zip(arrays, grads)]
    return tt, ft


def _check(fn_torch, fn_flow, arrays, grads, rtol=1e-6, atol=1e-8):
    tt, ft = _pair(arrays, grads)
    want, got = fn_torch(*tt), fn_flow(*ft)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    if not any(grads):
        return
    seed = np.random.default_rng(7).standard_normal(tuple(want.shape))
    want.backward(torch.tensor(seed, dtype=want.dtype))
    got.backward(flow.tensor(seed, dtype=got.dtype))
    for i, (a, b) in enumerate(zip(tt, ft)):
        if grads[i]:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i}")


def _rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.5])
def test_hinge_embedding_loss(reduction, margin):
    r = _rng()
    x = r.standard_normal((4, 5)) * 2
    t = np.where(r.random((4, 5)) < 0.5, -1.0, 1.0)
    _check(lambda a, b: torch.nn.functional.hinge_embedding_loss(a, b, margin, reduction=reduction),
           lambda a, b: FF.hinge_embedding_loss(a, b, margin, reduction=reduction), [x, t], [True, False])
    # other target values (here 0) add both terms in torch; a broadcast target
    t2 = np.array([1.0, -1.0, 0.0, 1.0, -1.0])
    _check(lambda a, b: torch.nn.functional.hinge_embedding_loss(a, b, margin, reduction=reduction),
           lambda a, b: FF.hinge_embedding_loss(a, b, margin, reduction=reduction), [x, t2], [True, False])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(reduction, p, weighted):
    r = _rng(1)
    x = r.standard_normal((6, 5))
    t = r.integers(0, 5, 6)
    w = r.random(5) + 0.5

    def call(F, L):
        def f(a):
            weight = L.tensor(w) if weighted else None
            return F.multi_margin_loss(a, L.tensor(t), p=p, margin=0.7, weight=weight, reduction=reduction)
        return f
    _check(call(torch.nn.functional, torch), call(FF, flow), [x], [True])
    # unbatched
    _check(lambda a: torch.nn.functional.multi_margin_loss(a, torch.tensor(2), p=p, reduction=reduction),
           lambda a: FF.multi_margin_loss(a, flow.tensor(2), p=p, reduction=reduction), [x[0]], [True])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    r = _rng(2)
    x = r.standard_normal((4, 5))
    # targets before the first -1 count (duplicates twice); what follows it is ignored
    t = np.array([[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [2, 2, -1, -1, -1]])
    _check(lambda a: torch.nn.functional.multilabel_margin_loss(a, torch.tensor(t), reduction=reduction),
           lambda a: FF.multilabel_margin_loss(a, flow.tensor(t), reduction=reduction), [x], [True])
    _check(lambda a: torch.nn.functional.multilabel_margin_loss(a, torch.tensor(t[0]), reduction=reduction),
           lambda a: FF.multilabel_margin_loss(a, flow.tensor(t[0]), reduction=reduction), [x[0]], [True])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction, weighted):
    r = _rng(3)
    x = r.standard_normal((4, 6)) * 3
    y = (r.random((4, 6)) < 0.4).astype(np.float64)
    w = r.random(6) + 0.2

    def call(F, L):
        return lambda a: F.multilabel_soft_margin_loss(a, L.tensor(y), weight=L.tensor(w) if weighted else None,
                                                       reduction=reduction)
    _check(call(torch.nn.functional, torch), call(FF, flow), [x], [True])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2, False), (2, True), (1, False), (3, True)])
def test_triplet_margin_loss(reduction, p, swap):
    r = _rng(4)
    a, pos, neg = (r.standard_normal((5, 3)) for _ in range(3))
    _check(lambda *t: torch.nn.functional.triplet_margin_loss(*t, margin=0.8, p=p, swap=swap, reduction=reduction),
           lambda *t: FF.triplet_margin_loss(*t, margin=0.8, p=p, swap=swap, reduction=reduction),
           [a, pos, neg], [True, True, True])
    _check(lambda *t: torch.nn.functional.triplet_margin_loss(*t, p=p, swap=swap, reduction=reduction),
           lambda *t: FF.triplet_margin_loss(*t, p=p, swap=swap, reduction=reduction),
           [a[0], pos[0], neg[0]], [True, True, True])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(reduction, swap):
    r = _rng(5)
    a, pos, neg = (r.standard_normal((5, 3)) for _ in range(3))
    _check(lambda *t: torch.nn.functional.triplet_margin_with_distance_loss(*t, swap=swap, reduction=reduction),
           lambda *t: FF.triplet_margin_with_distance_loss(*t, swap=swap, reduction=reduction),
           [a, pos, neg], [True, True, True])

    def cos_dist(F):
        return lambda u, v: 1 - F.cosine_similarity(u, v)
    _check(lambda *t: torch.nn.functional.triplet_margin_with_distance_loss(
               *t, distance_function=cos_dist(torch.nn.functional), margin=0.3, swap=swap, reduction=reduction),
           lambda *t: FF.triplet_margin_with_distance_loss(
               *t, distance_function=cos_dist(FF), margin=0.3, swap=swap, reduction=reduction),
           [a, pos, neg], [True, True, True])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1), (1, 3)])
def test_gaussian_nll_loss(reduction, full, var_shape):
    r = _rng(6)
    x, y = r.standard_normal((4, 3)), r.standard_normal((4, 3))
    var = r.random(var_shape) + 0.1
    var.flat[0] = 1e-9  # below eps: the value is clamped, the gradient passes through
    _check(lambda a, b, v: torch.nn.functional.gaussian_nll_loss(a, b, v, full=full, reduction=reduction),
           lambda a, b, v: FF.gaussian_nll_loss(a, b, v, full=full, reduction=reduction),
           [x, y, var], [True, True, True])
    _check(lambda a, b: torch.nn.functional.gaussian_nll_loss(a, b, 0.5, full=full, reduction=reduction),
           lambda a, b: FF.gaussian_nll_loss(a, b, 0.5, full=full, reduction=reduction), [x, y], [True, False])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
def test_poisson_nll_loss_full(reduction, log_input):
    r = _rng(8)
    x = r.random((4, 5)) * 2 + 0.05
    t = np.floor(r.random((4, 5)) * 6)  # counts 0..5: the Stirling term applies where target > 1
    _check(lambda a, b: torch.nn.functional.poisson_nll_loss(a, b, log_input=log_input, full=True,
                                                             reduction=reduction),
           lambda a, b: FF.poisson_nll_loss(a, b, log_input=log_input, full=True, reduction=reduction),
           [x, t], [True, False])
    # torch's positional order: (input, target, log_input, full, size_average, eps, reduce, reduction)
    _check(lambda a, b: torch.nn.functional.poisson_nll_loss(a, b, False, True, None, 1e-3, False),
           lambda a, b: FF.poisson_nll_loss(a, b, False, True, None, 1e-3, False), [x, t], [True, False])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_regression_losses(reduction, name):
    r = _rng(9)
    x, y, w = r.standard_normal((3, 4)) * 2, r.standard_normal((3, 4)), r.random((3, 4))
    _check(lambda a, b, c: getattr(torch.nn.functional, name)(a, b, reduction=reduction, weight=c),
           lambda a, b, c: getattr(FF, name)(a, b, reduction=reduction, weight=c), [x, y, w], [True, True, True])
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        getattr(FF, name)(flow.tensor(x), flow.tensor(y), weight=flow.tensor(w[0]))


@pytest.mark.parametrize("name", ["soft_margin_loss", "margin_ranking_loss", "cosine_embedding_loss",
                                  "hinge_embedding_loss", "multilabel_soft_margin_loss", "triplet_margin_loss"])
def test_legacy_reduction_flags(name):
    r = _rng(10)
    x = r.standard_normal((4, 3))
    sign = np.where(r.random(4) < 0.5, -1.0, 1.0)
    args = {"soft_margin_loss": [x, np.where(x > 0, 1.0, -1.0)], "margin_ranking_loss": [x[:, 0], x[:, 1], sign],
            "cosine_embedding_loss": [x, x[::-1].copy(), sign], "hinge_embedding_loss": [x, np.sign(x)],
            "multilabel_soft_margin_loss": [x, (x > 0).astype(np.float64)],
            "triplet_margin_loss": [x, x[::-1].copy(), x * 2]}[name]
    for flags in [dict(reduce=False), dict(size_average=False), dict(size_average=True, reduce=True)]:
        _check(lambda *t: getattr(torch.nn.functional, name)(*t, **flags), lambda *t: getattr(FF, name)(*t, **flags),
               args, [True] + [False] * (len(args) - 1))


def _raises_like_torch(call):
    """Both libraries raise the same exception class (the message compared when torch's is a ValueError)."""
    with pytest.raises(Exception) as want:
        call(torch.nn.functional, torch)
    with pytest.raises(type(want.value)) as got:
        call(FF, flow)
    if isinstance(want.value, ValueError):
        assert str(got.value) == str(want.value)


BAD = {
    "mm_target_range": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 3])),
    "mm_negative_target": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([-1, 1])),
    "mm_target_size": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 1, 2])),
    "mm_target_2d": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([[0], [1]])),
    "mm_input_3d": lambda F, L: F.multi_margin_loss(L.randn(2, 3, 4), L.tensor([0, 1])),
    "mm_input_empty_classes": lambda F, L: F.multi_margin_loss(L.randn(2, 0), L.tensor([0, 1])),
    "mm_p": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 1]), p=3),
    "mm_weight_2d": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 1]), weight=L.ones(3, 1)),
    "mm_weight_size": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 1]), weight=L.ones(4)),
    "mm_float_target": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0.0, 1.0])),
    "mm_reduction": lambda F, L: F.multi_margin_loss(L.randn(2, 3), L.tensor([0, 1]), reduction="bad"),
    "ml_target_range": lambda F, L: F.multilabel_margin_loss(L.randn(2, 3), L.tensor([[0, 5, -1], [0, 1, 2]])),
    "ml_range_after_pad": lambda F, L: F.multilabel_margin_loss(L.randn(2, 3), L.tensor([[0, -1, 5], [0, 1, 2]])),
    "ml_target_size": lambda F, L: F.multilabel_margin_loss(L.randn(2, 3), L.tensor([[0, 1], [0, 1]])),
    "ml_input_3d": lambda F, L: F.multilabel_margin_loss(L.randn(2, 3, 2), L.zeros(2, 3, 2, dtype=L.long)),
    "triplet_dims": lambda F, L: F.triplet_margin_loss(L.randn(2, 3), L.randn(2, 3), L.randn(3)),
    "triplet_margin": lambda F, L: F.triplet_margin_loss(L.randn(2, 3), L.randn(2, 3), L.randn(2, 3), margin=-1.0),
    "triplet_reduction": lambda F, L: F.triplet_margin_loss(L.randn(2, 3), L.randn(2, 3), L.randn(2, 3),
                                                            reduction="bad"),
    "triplet_dist_margin": lambda F, L: F.triplet_margin_with_distance_loss(L.randn(2, 3), L.randn(2, 3),
                                                                           L.randn(2, 3), margin=0.0),
    "hinge_reduction": lambda F, L: F.hinge_embedding_loss(L.randn(2, 3), L.ones(2, 3), reduction="bad"),
    "hinge_broadcast": lambda F, L: F.hinge_embedding_loss(L.randn(2, 3), L.ones(4)),
    "gauss_var_size": lambda F, L: F.gaussian_nll_loss(L.randn(2, 3), L.randn(2, 3), L.ones(2, 2)),
    "gauss_var_negative": lambda F, L: F.gaussian_nll_loss(L.randn(2, 3), L.randn(2, 3), -L.ones(2, 3)),
    "gauss_var_float_negative": lambda F, L: F.gaussian_nll_loss(L.randn(2, 3), L.randn(2, 3), -1.0),
    "gauss_reduction": lambda F, L: F.gaussian_nll_loss(L.randn(2, 3), L.randn(2, 3), L.ones(2, 3),
                                                        reduction="bad"),
    "soft_multilabel_reduction": lambda F, L: F.multilabel_soft_margin_loss(L.randn(2, 3), L.rand(2, 3),
                                                                            reduction="bad"),
    "poisson_reduction": lambda F, L: F.poisson_nll_loss(L.randn(2, 3), L.rand(2, 3), reduction="bad"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_arguments_raise_like_torch(case):
    _raises_like_torch(BAD[case])


def test_empty_batch():
    # torch's margin kernels return uninitialised memory for the mean over an empty batch; ours is NaN (the mean of
    # no value, as torch's nll_loss), the sum 0 and the per-sample losses empty
    for name, target in (("multi_margin_loss", flow.zeros(0, dtype=flow.long)),
                         ("multilabel_margin_loss", flow.zeros(0, 3, dtype=flow.long))):
        x = flow.zeros(0, 3)
        assert np.isnan(float(getattr(FF, name)(x, target)))
        assert float(getattr(FF, name)(x, target, reduction="sum")) == 0.0
        assert tuple(getattr(FF, name)(x, target, reduction="none").shape) == (0,)


def test_every_torch_functional_loss_exists():
    names = [n for n in dir(torch.nn.functional) if n.endswith("loss")]
    missing = [n for n in names if not hasattr(FF, n)]
    assert missing == [], missing


def _module_cases():
    r = _rng(11)
    x, y = r.standard_normal((4, 5)), r.standard_normal((4, 5))
    sign = np.where(r.random((4, 5)) < 0.5, -1.0, 1.0)
    prob = r.random((4, 5)) * 0.9 + 0.05
    cls = r.integers(0, 5, 4)
    w = r.random(5) + 0.5
    ml = np.array([[3, 0, -1, 1, 4], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [2, -1, -1, -1, -1]])
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    return [
        ("L1Loss", {}, [x, y]), ("MSELoss", {"reduction": "sum"}, [x, y]),
        ("CrossEntropyLoss", {"label_smoothing": 0.1}, [x, cls]), ("NLLLoss", {"weight": w}, [logp, cls]),
        ("BCELoss", {"weight": w}, [prob, (y > 0) * 1.0]), ("BCEWithLogitsLoss", {"pos_weight": w}, [x, prob]),
        ("SmoothL1Loss", {"beta": 0.5}, [x, y]), ("HuberLoss", {"delta": 0.7}, [x, y]),
        ("KLDivLoss", {"reduction": "batchmean"}, [logp, prob / prob.sum(1, keepdims=True)]),
        ("SoftMarginLoss", {}, [x, sign]), ("MultiLabelSoftMarginLoss", {"weight": w}, [x, (y > 0) * 1.0]),
        ("CosineEmbeddingLoss", {"margin": 0.2}, [x, y, sign[:, 0]]),
        ("MarginRankingLoss", {"margin": 0.1}, [x[:, 0], y[:, 0], sign[:, 0]]),
        ("HingeEmbeddingLoss", {"margin": 0.5}, [x, sign]),
        ("TripletMarginLoss", {"margin": 0.5, "swap": True}, [x, y, x * 0.5 + y]),
        ("TripletMarginWithDistanceLoss", {"margin": 0.5}, [x, y, x * 0.5 + y]),
        ("PoissonNLLLoss", {"full": True}, [x, np.floor(prob * 6)]),
        ("GaussianNLLLoss", {"full": True}, [x, y, prob]),
        ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": w}, [x, cls]),
        ("MultiLabelMarginLoss", {}, [x, ml]),
    ]


@pytest.mark.parametrize("case", _module_cases(), ids=lambda c: c[0])
def test_loss_modules_end_to_end(case):
    name, kwargs, arrays = case
    grads = [a.dtype.kind == "f" for a in arrays]
    grads[1:] = [g and name in ("L1Loss", "MSELoss", "CosineEmbeddingLoss", "MarginRankingLoss",
                                "TripletMarginLoss", "TripletMarginWithDistanceLoss", "GaussianNLLLoss")
                 for g in grads[1:]]
    if name in ("CosineEmbeddingLoss", "MarginRankingLoss"):
        grads[2] = False

    def build(nn, L):
        kw = {k: L.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return getattr(nn, name)(**kw)
    mt, mf = build(torch.nn, torch), build(fnn, flow)
    _check(lambda *t: mt(*t), lambda *t: mf(*t), arrays, grads)


def test_every_torch_loss_module_exists():
    names = [n for n in dir(torch.nn) if n.endswith("Loss")]
    missing = sorted(n for n in names if not hasattr(fnn, n))
    # not implemented: the adaptive softmax, the fused linear + cross-entropy
    assert missing == ["AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyLoss"], missing


def _autocast_cases(L, F):
    g = L.Generator().manual_seed(0)
    x, y = L.randn(4, 5, generator=g).to(L.bfloat16), L.randn(4, 5, generator=g).to(L.bfloat16)
    sign = L.where(x > 0, 1.0, -1.0).to(L.bfloat16)
    t, ml = L.tensor([0, 1, 2, 3]), L.tensor([[3, 0, -1, 1, 4]] * 4)
    return {
        "hinge_embedding_loss": lambda: F.hinge_embedding_loss(x, sign),
        "multi_margin_loss": lambda: F.multi_margin_loss(x, t),
        "multilabel_margin_loss": lambda: F.multilabel_margin_loss(x, ml),
        "multilabel_soft_margin_loss": lambda: F.multilabel_soft_margin_loss(x, (y > 0).to(L.bfloat16)),
        "triplet_margin_loss": lambda: F.triplet_margin_loss(x, y, x + y),
        "triplet_margin_with_distance_loss": lambda: F.triplet_margin_with_distance_loss(x, y, x + y),
        "gaussian_nll_loss": lambda: F.gaussian_nll_loss(x, y, x.abs()),
        "poisson_nll_loss": lambda: F.poisson_nll_loss(x, y.abs(), full=True),
        "soft_margin_loss": lambda: F.soft_margin_loss(x, sign),
        "margin_ranking_loss": lambda: F.margin_ranking_loss(x, y, sign),
        "mse_loss": lambda: F.mse_loss(x, y), "mse_loss_weight": lambda: F.mse_loss(x, y, weight=y.abs()),
        "l1_loss": lambda: F.l1_loss(x, y), "l1_loss_weight": lambda: F.l1_loss(x, y, weight=y.abs()),
        "huber_loss_weight": lambda: F.huber_loss(x, y, weight=y.abs()),
    }


@pytest.mark.parametrize("name", sorted(_autocast_cases(torch, torch.nn.functional)))
def test_autocast_dtype_like_torch(name):
    dtypes = []
    for L, F in ((torch, torch.nn.functional), (flow, FF)):
        case = _autocast_cases(L, F)[name]
        with L.autocast("cpu", dtype=L.bfloat16):
            dtypes.append(str(case().dtype).split(".")[-1])
    assert dtypes[1] == dtypes[0]


def _ctc_case(seed=12, t=12, n=4, c=5):
    r = _rng(seed)
    x = r.standard_normal((t, n, c))
    targets = r.integers(1, c, (n, 6))
    targets[0, :3] = [2, 2, 3]  # a repeated label needs a blank between its frames
    target_lengths = np.array([3, 6, 1, 0])
    input_lengths = np.array([12, 10, 7, 5])
    return x, targets, input_lengths, target_lengths


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "lists"])
def test_ctc_loss(reduction, zero_infinity, layout):
    x, targets, input_lengths, target_lengths = _ctc_case()
    # sample 3 cannot be aligned: two equal labels need a blank between them, 3 frames, and it has 2
    targets[3, :2], target_lengths[3], input_lengths[3] = [1, 1], 2, 2

    def call(F, L):
        def f(logits):
            lp = F.log_softmax(logits, 2)
            if layout == "concatenated":
                tg = L.tensor(np.concatenate([targets[i, :k] for i, k in enumerate(target_lengths)]))
            else:
                tg = L.tensor(targets)
            lens = ((input_lengths.tolist(), target_lengths.tolist()) if layout == "lists"
                    else (L.tensor(input_lengths), L.tensor(target_lengths)))
            return F.ctc_loss(lp, tg, *lens, reduction=reduction, zero_infinity=zero_infinity)
        return f
    if not zero_infinity:  # an infinite loss: compare the finite samples' values and gradients only
        x_fin = x[:, :3]
        input_lengths, target_lengths, targets = input_lengths[:3], target_lengths[:3], targets[:3]
        _check(call(torch.nn.functional, torch), call(FF, flow), [x_fin], [True], rtol=1e-9, atol=1e-12)
        return
    _check(call(torch.nn.functional, torch), call(FF, flow), [x], [True], rtol=1e-9, atol=1e-12)


def test_ctc_loss_log_probs_gradient_and_unbatched():
    # torch's gradient with respect to log_probs themselves (exp(lp) - posterior), and the (T, C) form
    x, targets, input_lengths, target_lengths = _ctc_case(seed=13)
    lp = x - np.log(np.exp(x).sum(2, keepdims=True))
    _check(lambda a: torch.nn.functional.ctc_loss(a, torch.tensor(targets), torch.tensor(input_lengths),
                                                  torch.tensor(target_lengths), blank=0, reduction="none"),
           lambda a: FF.ctc_loss(a, flow.tensor(targets), flow.tensor(input_lengths), flow.tensor(target_lengths),
                                 blank=0, reduction="none"), [lp], [True], rtol=1e-9, atol=1e-12)
    _check(lambda a: torch.nn.functional.ctc_loss(a, torch.tensor(targets[1]), torch.tensor(10), torch.tensor(6)),
           lambda a: FF.ctc_loss(a, flow.tensor(targets[1]), flow.tensor(10), flow.tensor(6)), [lp[:, 1]], [True],
           rtol=1e-9, atol=1e-12)
    # another blank index (labels avoid it), float32, the module
    tg = np.where(targets == 4, 1, targets)
    lp32 = lp.astype(np.float32)
    _check(lambda a: torch.nn.CTCLoss(blank=4)(a, torch.tensor(tg), torch.tensor(input_lengths),
                                              torch.tensor(target_lengths)),
           lambda a: fnn.CTCLoss(blank=4)(a, flow.tensor(tg), flow.tensor(input_lengths),
                                         flow.tensor(target_lengths)), [lp32], [True], rtol=1e-5, atol=1e-6)
