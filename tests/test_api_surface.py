"""The torch.* / torchvision.* entry points scripts touch most, each called as torch's docs show and compared
with torch/torchvision on the same inputs (values, dtypes, shapes). Every entry below is one check."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
import torchvision.transforms.v2  # noqa: E402,F401  (torchvision loads v2 only on import)

import flowvision  # noqa: E402
import flowvision.backend as fb  # noqa: E402

A = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
B = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
IMG = np.random.default_rng(2).uniform(0, 1, (2, 3, 8, 8)).astype(np.float32)
I8 = (np.random.default_rng(3).uniform(0, 255, (3, 10, 12))).astype(np.uint8)


def _t(lib, a):
    return lib.tensor(a)


def _seeded(fn):
    """Random functions: compare shape/dtype/range and reproducibility under manual_seed, not values."""
    def run(lib, _vision):
        lib.manual_seed(0)
        a = fn(lib)
        lib.manual_seed(0)
        b = fn(lib)
        assert np.array_equal(np.asarray(a), np.asarray(b)), "not reproducible under manual_seed"
        return ("shape", tuple(a.shape), str(a.dtype).split(".")[-1])
    return run


# name -> f(lib, tv) where lib is flowvision.backend or torch and tv is flowvision or torchvision
ENTRIES = {
    # ---------------- creation
    "tensor": lambda L, V: L.tensor([[1, 2], [3, 4]], dtype=L.float32),
    "as_tensor": lambda L, V: L.as_tensor(A),
    "from_numpy": lambda L, V: L.from_numpy(A.copy()),
    "zeros": lambda L, V: L.zeros(2, 3),
    "zeros(size=)": lambda L, V: L.zeros(size=(2, 3), dtype=L.int64),
    "ones": lambda L, V: L.ones((2, 3)),
    "full": lambda L, V: L.full((2, 2), 7.5),
    "empty.shape": lambda L, V: L.empty(2, 3).shape,
    "arange": lambda L, V: L.arange(0, 10, 3),
    "linspace": lambda L, V: L.linspace(0, 1, steps=5),
    "logspace": lambda L, V: L.logspace(0, 2, steps=3),
    "eye": lambda L, V: L.eye(3),
    "zeros_like": lambda L, V: L.zeros_like(_t(L, A)),
    "ones_like": lambda L, V: L.ones_like(_t(L, A)),
    "full_like": lambda L, V: L.full_like(_t(L, A), 2.0),
    "meshgrid": lambda L, V: L.stack(L.meshgrid(L.arange(3), L.arange(2), indexing="ij")),
    "rand": _seeded(lambda L: L.rand(2, 3)),
    "rand(size=)": _seeded(lambda L: L.rand(size=(2, 3))),
    "randn": _seeded(lambda L: L.randn(4)),
    "randint": _seeded(lambda L: L.randint(0, 10, (5,))),
    "randperm": _seeded(lambda L: L.randperm(6)),
    "randn_like": _seeded(lambda L: L.randn_like(L.zeros(3))),
    "normal": _seeded(lambda L: L.normal(0.0, 1.0, size=(3,))),
    "bernoulli": _seeded(lambda L: L.bernoulli(L.full((4,), 0.5))),
    "multinomial": _seeded(lambda L: L.multinomial(L.tensor([0.1, 0.2, 0.7]), 2)),
    # ---------------- math / reductions
    "add": lambda L, V: L.add(_t(L, A), 1.5, alpha=2) if False else L.add(_t(L, A), _t(L, A), alpha=2),
    "mul": lambda L, V: L.mul(_t(L, A), 3),
    "div(rounding_mode)": lambda L, V: L.div(_t(L, A) * 10, 3, rounding_mode="floor"),
    "matmul": lambda L, V: L.matmul(_t(L, A), _t(L, B)),
    "mm": lambda L, V: L.mm(_t(L, A), _t(L, B)),
    "bmm": lambda L, V: L.bmm(_t(L, A)[None], _t(L, B)[None]),
    "einsum": lambda L, V: L.einsum("ij,jk->ik", _t(L, A), _t(L, B)),
    "exp": lambda L, V: L.exp(_t(L, A)),
    "log": lambda L, V: L.log(_t(L, A).abs() + 1),
    "sqrt": lambda L, V: L.sqrt(_t(L, A).abs()),
    "pow": lambda L, V: L.pow(_t(L, A), 2),
    "abs": lambda L, V: L.abs(_t(L, A)),
    "clamp": lambda L, V: L.clamp(_t(L, A), min=-0.5, max=0.5),
    "sigmoid": lambda L, V: L.sigmoid(_t(L, A)),
    "tanh": lambda L, V: L.tanh(_t(L, A)),
    "softmax": lambda L, V: L.softmax(_t(L, A), dim=1),
    "log_softmax": lambda L, V: L.log_softmax(_t(L, A), dim=0),
    "where": lambda L, V: L.where(_t(L, A) > 0, _t(L, A), 0.0),
    "sum": lambda L, V: L.sum(_t(L, A), dim=1, keepdim=True),
    "mean": lambda L, V: L.mean(_t(L, A)),
    "std": lambda L, V: L.std(_t(L, A), dim=0),
    "var(correction)": lambda L, V: L.var(_t(L, A), dim=1, correction=0),
    "max(dim)": lambda L, V: L.max(_t(L, A), dim=1).values,
    "argmax": lambda L, V: L.argmax(_t(L, A), dim=1),
    "topk": lambda L, V: L.topk(_t(L, A), 2, dim=1).indices,
    "sort": lambda L, V: L.sort(_t(L, A), dim=1, descending=True).values,
    "cumsum": lambda L, V: L.cumsum(_t(L, A), dim=1),
    "norm": lambda L, V: L.norm(_t(L, A), p=2, dim=1),
    "logsumexp": lambda L, V: L.logsumexp(_t(L, A), dim=1),
    "allclose": lambda L, V: L.allclose(_t(L, A), _t(L, A) + 1e-9),
    "equal": lambda L, V: L.equal(_t(L, A), _t(L, A)),
    "isnan": lambda L, V: L.isnan(_t(L, A) / 0 * 0),
    "unique": lambda L, V: L.unique(L.tensor([3, 1, 3, 2])),
    "bincount": lambda L, V: L.bincount(L.tensor([0, 1, 1, 3])),
    "cdist": lambda L, V: L.cdist(_t(L, A), _t(L, A) * 2),
    "lgamma": lambda L, V: L.lgamma(_t(L, A).abs() + 0.5),
    "special.erf": lambda L, V: L.special.erf(_t(L, A)),
    # ---------------- shape
    "cat": lambda L, V: L.cat([_t(L, A), _t(L, A)], dim=0),
    "stack": lambda L, V: L.stack([_t(L, A), _t(L, A)], dim=1),
    "flatten": lambda L, V: L.flatten(_t(L, IMG), 1),
    "reshape": lambda L, V: L.reshape(_t(L, A), (4, 3)),
    "permute": lambda L, V: _t(L, IMG).permute(0, 2, 3, 1),
    "transpose": lambda L, V: L.transpose(_t(L, A), 0, 1),
    "squeeze/unsqueeze": lambda L, V: L.squeeze(L.unsqueeze(_t(L, A), 0)),
    "chunk": lambda L, V: L.chunk(_t(L, A), 2, dim=1)[1],
    "split": lambda L, V: L.split(_t(L, A), [1, 3], dim=1)[1],
    "gather": lambda L, V: L.gather(_t(L, A), 1, L.tensor([[0], [1], [3]])),
    "index_select": lambda L, V: L.index_select(_t(L, A), 1, L.tensor([0, 2])),
    "masked_fill": lambda L, V: _t(L, A).masked_fill(_t(L, A) > 0, -1.0),
    "tensor[range]": lambda L, V: _t(L, A)[range(2)],
    "tensor[bool]": lambda L, V: _t(L, A)[_t(L, A) > 0],
    "flip": lambda L, V: L.flip(_t(L, A), [0, 1]),
    "roll": lambda L, V: L.roll(_t(L, A), 1, 1),
    "tril": lambda L, V: L.tril(_t(L, A)),
    "repeat_interleave": lambda L, V: L.repeat_interleave(L.tensor([1, 2]), 2),
    # ---------------- tensor methods
    "Tensor.to(dtype)": lambda L, V: _t(L, A).to(L.float64),
    "Tensor.to(device, memory_format)": lambda L, V: _t(L, IMG).to("cpu", memory_format=L.channels_last),
    "Tensor.item": lambda L, V: _t(L, A)[0, 0].item(),
    "Tensor.tolist": lambda L, V: _t(L, A).tolist(),
    "Tensor.numpy": lambda L, V: _t(L, A).numpy(),
    "Tensor.view_as": lambda L, V: _t(L, A).view(12).view_as(_t(L, A)),
    "Tensor.expand_as": lambda L, V: L.tensor([1.0, 2.0, 3.0, 4.0]).expand_as(_t(L, A)),
    "Tensor.new_tensor": lambda L, V: _t(L, A).new_tensor([1, 2]),
    "Tensor.type_as": lambda L, V: L.tensor([1, 2]).type_as(_t(L, A)),
    "Tensor.clone().detach()": lambda L, V: _t(L, A).clone().detach(),
    "Tensor.is_pinned": lambda L, V: _t(L, A).is_pinned(),
    "Tensor.is_floating_point": lambda L, V: _t(L, A).is_floating_point(),
    "Tensor.size(dim)": lambda L, V: _t(L, A).size(1),
    "Tensor.fill_/zero_": lambda L, V: _t(L, A).fill_(2.0).add_(1).mul_(2),
    "Tensor.uniform_ range": lambda L, V: bool(((L.empty(100).uniform_(-1, 1) >= -1) & (L.empty(100).uniform_(-1, 1) < 1)).all()),
    "Tensor.float/long": lambda L, V: _t(L, A).long().float(),
    "Tensor.mT": lambda L, V: _t(L, A).mT,
    "Tensor.argmax(keepdim)": lambda L, V: _t(L, A).argmax(dim=1, keepdim=True),
    "Tensor.eq.sum.item": lambda L, V: _t(L, A).gt(0).eq(_t(L, A).gt(0.5)).sum().item(),
    # ---------------- autograd / misc
    "no_grad": lambda L, V: _nograd(L),
    "autograd.grad": lambda L, V: _agrad(L),
    "manual_seed+rand": _seeded(lambda L: L.rand(3)),
    "is_tensor": lambda L, V: L.is_tensor(_t(L, A)),
    "get_default_dtype": lambda L, V: str(L.get_default_dtype()).split(".")[-1],
    "finfo.eps": lambda L, V: L.finfo(L.float32).eps,
    "finfo(bfloat16)": lambda L, V: (L.finfo(L.bfloat16).eps, L.finfo(L.bfloat16).max, L.finfo(L.bfloat16).bits),
    "iinfo.max": lambda L, V: (L.iinfo(L.int32).max, L.iinfo(L.uint8).min),
    "device": lambda L, V: str(L.device("cpu")),
    "accelerator.is_available": lambda L, V: L.accelerator.is_available(),
    "backends.mps.is_available": lambda L, V: L.backends.mps.is_available(),
    "cuda.is_available": lambda L, V: L.cuda.is_available(),
    "get_float32_matmul_precision": lambda L, V: L.get_float32_matmul_precision(),
    "are_deterministic_algorithms_enabled": lambda L, V: L.are_deterministic_algorithms_enabled(),
    "linalg.norm": lambda L, V: L.linalg.norm(_t(L, A)),
    "linalg.inv": lambda L, V: L.linalg.inv(_t(L, A)[:, :3] + 3 * L.eye(3)),
    "fft.fftfreq": lambda L, V: L.fft.fftfreq(6),
    "distributions.Normal.log_prob": lambda L, V: L.distributions.Normal(0.0, 2.0).log_prob(_t(L, A)),
    "distributions.Beta.mean": lambda L, V: L.distributions.Beta(L.tensor(2.0), L.tensor(3.0)).mean,
    # ---------------- nn.functional
    "F.relu": lambda L, V: L.nn.functional.relu(_t(L, A)),
    "F.gelu": lambda L, V: L.nn.functional.gelu(_t(L, A)),
    "F.cross_entropy(label_smoothing)": lambda L, V: L.nn.functional.cross_entropy(
        _t(L, A), L.tensor([0, 3, 1]), label_smoothing=0.1),
    "F.nll_loss": lambda L, V: L.nn.functional.nll_loss(L.log_softmax(_t(L, A), 1), L.tensor([0, 3, 1])),
    "F.mse_loss": lambda L, V: L.nn.functional.mse_loss(_t(L, A), _t(L, A) * 0.5),
    "F.binary_cross_entropy_with_logits": lambda L, V: L.nn.functional.binary_cross_entropy_with_logits(
        _t(L, A), (_t(L, A) > 0).float()),
    "F.conv2d": lambda L, V: L.nn.functional.conv2d(_t(L, IMG), L.ones(4, 3, 3, 3) / 27, padding=1),
    "F.max_pool2d": lambda L, V: L.nn.functional.max_pool2d(_t(L, IMG), 2),
    "F.adaptive_avg_pool2d": lambda L, V: L.nn.functional.adaptive_avg_pool2d(_t(L, IMG), (1, 1)),
    "F.interpolate": lambda L, V: L.nn.functional.interpolate(_t(L, IMG), scale_factor=2, mode="bilinear",
                                                              align_corners=False),
    "F.pad": lambda L, V: L.nn.functional.pad(_t(L, IMG), (1, 2, 0, 1), mode="reflect"),
    "F.normalize": lambda L, V: L.nn.functional.normalize(_t(L, A), dim=1),
    "F.one_hot": lambda L, V: L.nn.functional.one_hot(L.tensor([0, 2]), 3),
    "F.grid_sample": lambda L, V: L.nn.functional.grid_sample(
        _t(L, IMG), L.nn.functional.affine_grid(L.tensor([[[0.8, 0.1, 0.0], [0.0, 0.9, 0.1]]] * 2), (2, 3, 5, 5),
                                                align_corners=False), align_corners=False),
    "F.pixel_shuffle": lambda L, V: L.nn.functional.pixel_shuffle(_t(L, IMG)[:, :1].repeat(1, 4, 1, 1), 2),
    "F.dropout(eval)": lambda L, V: L.nn.functional.dropout(_t(L, A), 0.5, training=False),
    # ---------------- nn modules / init / utils / optim
    "nn.Linear shapes": lambda L, V: [tuple(p.shape) for p in L.nn.Linear(4, 2).parameters()],
    "nn.Conv2d state_dict keys": lambda L, V: list(L.nn.Conv2d(3, 4, 3).state_dict()),
    "nn.LSTM param names": lambda L, V: [n for n, _ in L.nn.LSTM(3, 4, 2, bidirectional=True).named_parameters()],
    "nn.Sequential repr": lambda L, V: repr(L.nn.Sequential(L.nn.Linear(2, 3), L.nn.ReLU())),
    "nn.init.calculate_gain": lambda L, V: L.nn.init.calculate_gain("leaky_relu", 0.2),
    "nn.init.constant_": lambda L, V: L.nn.init.constant_(L.empty(2, 2), 0.3),
    "nn.utils.clip_grad_norm_": lambda L, V: _clip(L),
    "nn.utils.parameters_to_vector": lambda L, V: L.nn.utils.parameters_to_vector([_t(L, A), _t(L, B)]),
    "nn.CrossEntropyLoss": lambda L, V: L.nn.CrossEntropyLoss()(_t(L, A), L.tensor([1, 0, 2])),
    "optim.SGD step": lambda L, V: _opt(L, "SGD", lr=0.1, momentum=0.9),
    "optim.Adadelta step": lambda L, V: _opt(L, "Adadelta"),
    "optim.AdamW step": lambda L, V: _opt(L, "AdamW", lr=0.01),
    "optim.lr_scheduler.OneCycleLR": lambda L, V: _sched(L),
    "amp.GradScaler(cpu).scale": lambda L, V: L.amp.GradScaler("cpu", init_scale=8.0).scale(_t(L, A)),
    "utils.data.TensorDataset+DataLoader": lambda L, V: [b[0].sum().item() for b in L.utils.data.DataLoader(
        L.utils.data.TensorDataset(_t(L, A), L.arange(3)), batch_size=2)],
    "utils.data.random_split lengths": lambda L, V: [len(s) for s in L.utils.data.random_split(range(10), [0.7, 0.3])],
    # ---------------- torchvision
    "transforms.ToTensor": lambda L, V: V.transforms.ToTensor()(I8.transpose(1, 2, 0)),
    "transforms.Normalize": lambda L, V: V.transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.2))(_t(L, IMG[0])),
    "transforms.Resize": lambda L, V: V.transforms.Resize((5, 6), antialias=True)(_t(L, IMG[0])),
    "transforms.CenterCrop": lambda L, V: V.transforms.CenterCrop(5)(_t(L, IMG[0])),
    "transforms.functional.hflip": lambda L, V: V.transforms.functional.hflip(_t(L, IMG[0])),
    "transforms.v2.ToDtype": lambda L, V: V.transforms.v2.ToDtype(L.float32, scale=True)(L.tensor(I8)),
    "models.resnet18 param count": lambda L, V: sum(p.numel() for p in V.models.resnet18(weights=None).parameters()),
    "models.resnet18 keys": lambda L, V: list(V.models.resnet18(weights=None).state_dict())[:12],
    "models.list_models has resnet50": lambda L, V: "resnet50" in V.models.list_models(),
    "ops.nms": lambda L, V: V.ops.nms(L.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30.]]),
                                      L.tensor([0.9, 0.8, 0.7]), 0.5),
    "ops.box_iou": lambda L, V: V.ops.box_iou(L.tensor([[0, 0, 10, 10.]]), L.tensor([[5, 5, 15, 15.]])),
    "ops.roi_align": lambda L, V: V.ops.roi_align(_t(L, IMG), [L.tensor([[0, 0, 4, 4.]]), L.tensor([[1, 1, 6, 7.]])],
                                                  output_size=2, spatial_scale=1.0, sampling_ratio=2),
    "utils.make_grid": lambda L, V: V.utils.make_grid(_t(L, IMG), nrow=2, padding=1),
    "io.decode_image/encode_png": lambda L, V: V.io.decode_image(V.io.encode_png(L.tensor(I8))),
}


def _nograd(L):
    x = L.ones(2, requires_grad=True)
    with L.no_grad():
        y = x * 2
    return (y.requires_grad, x.requires_grad)


def _agrad(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    return L.autograd.grad((x ** 3).sum(), x)[0]


def _clip(L):
    p = L.nn.Parameter(L.ones(3))
    p.grad = L.tensor([3.0, 4.0, 0.0])
    return L.nn.utils.clip_grad_norm_([p], 1.0), p.grad


def _opt(L, name, **kw):
    p = L.nn.Parameter(L.tensor(A))
    o = getattr(L.optim, name)([p], **kw)
    for _ in range(3):
        o.zero_grad()
        (p ** 2).sum().backward()
        o.step()
    return p.detach()


def _sched(L):
    o = L.optim.SGD([L.nn.Parameter(L.zeros(1))], lr=0.1, momentum=0.9)
    s = L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10)
    out = []
    for _ in range(9):
        o.step()
        s.step()
        out.append(s.get_last_lr()[0])
    return out


def _norm(x):
    """Bring a result of either library to plain Python/numpy for comparison."""
    if isinstance(x, (fb.Tensor, torch.Tensor)):
        arr = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x.detach().numpy()
        return ("tensor", str(x.dtype).split(".")[-1], np.asarray(arr))
    if isinstance(x, (tuple, list)) and not isinstance(x, str):
        return type(x).__name__ if not hasattr(x, "_fields") else "tuple", [_norm(v) for v in x]
    if isinstance(x, (fb.Size, torch.Size)):
        return tuple(x)
    if hasattr(x, "size") and hasattr(x, "mode"):  # PIL
        return np.asarray(x)
    return x


def _same(a, b, path="result"):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor", f"{path}: tensor vs {b!r}"
        assert a[1] == b[1], f"{path}: dtype {a[1]} != {b[1]}"
        assert a[2].shape == b[2].shape, f"{path}: shape {a[2].shape} != {b[2].shape}"
        if a[2].dtype.kind == "f":
            np.testing.assert_allclose(a[2], b[2], rtol=1e-5, atol=1e-6, err_msg=path)
        else:
            np.testing.assert_array_equal(a[2], b[2], err_msg=path)
    elif isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], list):
        assert len(a[1]) == len(b[1]), f"{path}: length {len(a[1])} != {len(b[1])}"
        for i, (u, v) in enumerate(zip(a[1], b[1])):
            _same(u, v, f"{path}[{i}]")
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-6, abs=1e-7), f"{path}: {a} != {b}"
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, np.asarray(b), err_msg=path)
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def test_surface_has_at_least_120_entries():
    assert len(ENTRIES) >= 120


@pytest.mark.parametrize("name", list(ENTRIES))
def test_entry_point_matches_torch(name):
    fn = ENTRIES[name]
    ours = _norm(fn(fb, flowvision))
    ref = _norm(fn(torch, torchvision))
    _same(ours, ref, name)
