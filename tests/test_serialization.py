"""flowvision.backend save/load: safetensors with structure metadata, round trips of state dicts and nested
containers, plain safetensors files, torch-written checkpoints, errors."""
import io
import math
from collections import Counter, OrderedDict, namedtuple

import numpy as np
import pytest

import flowvision.backend as fb
from flowvision.backend import nn, optim
from flowvision.backend.serialization import load, save

torch = pytest.importorskip("torch")


def _same(a, b):
    if isinstance(a, fb.Tensor):
        assert isinstance(b, fb.Tensor) and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        assert type(a) is type(b) and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach()._data, b.detach()._data)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b and type(a) is type(b)


def test_module_state_dict_round_trip_is_a_plain_safetensors_file(tmp_path):
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Linear(4, 2))
    path = tmp_path / "model.safetensors"
    sd = m.state_dict()
    save(sd, path)
    back = load(path)
    _same(OrderedDict(sd), OrderedDict(back))
    assert back._metadata == sd._metadata
    m2 = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Linear(4, 2))
    m2.load_state_dict(back)
    # other tools see an ordinary state dict under the same key names
    from safetensors.numpy import load_file
    plain = load_file(str(path))
    assert sorted(plain) == sorted(sd)
    np.testing.assert_array_equal(plain["0.weight"], sd["0.weight"].numpy())
    assert plain["1.num_batches_tracked"].shape == ()


def test_nested_containers_round_trip():
    Pair = namedtuple("Pair", "a b")
    p = nn.Parameter(fb.randn(3))
    obj = {
        "epoch": 7, "best": 0.25, "inf": math.inf, "ninf": -math.inf, "nan": math.nan, "name": "run", "none": None,
        "flag": True, "list": [1, 2.5, "x", [fb.zeros(2, dtype=fb.int64)]], "tuple": (1, (2, 3)),
        "ints": {0: {"step": fb.tensor(3.0), "exp_avg": fb.randn(2, 2)}, 1: {}},
        "counter": Counter({5: 2, 9: 1}), "od": OrderedDict([("b", 1), ("a", 2)]),
        "scalar0d": fb.tensor(4), "empty": fb.zeros(0, 3), "bf16": fb.randn(3, 2).bfloat16(),
        "f16": fb.randn(2).half(), "bool": fb.tensor([True, False]), "u8": fb.tensor([1, 255], dtype=fb.uint8),
        "np": np.arange(6, dtype=np.int32).reshape(2, 3), "param": p, "tied": p, "grad": fb.ones(2).requires_grad_(),
        "tkey": {(1, "a"): 3}, "bytes": b"\x00\xff", "dtype": fb.float16, "pair": Pair(1, fb.ones(1)),
        "size": fb.zeros(2, 3).shape,
    }
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    back = load(buf)
    for k in obj:
        if k in ("pair",):
            assert isinstance(back[k], tuple)  # namedtuples come back as tuples
            continue
        if k == "size":
            assert tuple(back[k]) == (2, 3)
            continue
        _same(obj[k], back[k])
    assert back["tied"] is back["param"]  # shared tensors stay shared
    assert isinstance(back["counter"], Counter) and back["dtype"] is fb.float16


def test_optimizer_and_scheduler_checkpoint_round_trip(tmp_path):
    m = nn.Linear(3, 2)
    o = optim.AdamW(m.parameters(), lr=0.01)
    s = optim.lr_scheduler.MultiStepLR(o, [2, 4], gamma=0.5)
    for _ in range(3):
        m(fb.randn(4, 3)).sum().backward()
        o.step()
        s.step()
    ckpt = {"model": m.state_dict(), "optimizer": o.state_dict(), "scheduler": s.state_dict(), "epoch": 3}
    save(ckpt, tmp_path / "ckpt.safetensors")
    back = load(tmp_path / "ckpt.safetensors")
    assert back["epoch"] == 3 and isinstance(back["scheduler"]["milestones"], Counter)
    o2 = optim.AdamW(nn.Linear(3, 2).parameters(), lr=0.01)
    o2.load_state_dict(back["optimizer"])
    assert list(o2.state_dict()["state"]) == [0, 1]


def test_load_plain_safetensors_and_torch_checkpoints(tmp_path):
    from safetensors.numpy import save_file
    save_file({"a": np.arange(4, dtype=np.float32), "b": np.ones((2, 2), np.int64)}, str(tmp_path / "x.st"))
    d = load(tmp_path / "x.st")
    assert sorted(d) == ["a", "b"] and d["a"].dtype == fb.float32 and d["b"].dtype == fb.int64
    ref = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    ref_sd = ref.state_dict()
    torch.save({"state_dict": ref_sd, "epoch": 5, "bf": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "t.pth")
    got = load(tmp_path / "t.pth")
    assert got["epoch"] == 5 and got["bf"].dtype == fb.bfloat16
    ours = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    ours.load_state_dict(got["state_dict"])
    for k, v in ref_sd.items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())
    with open(tmp_path / "t.pth", "rb") as f:  # file objects work too
        assert list(load(f)["state_dict"]) == list(ref_sd)


def test_save_errors(tmp_path):
    with pytest.raises(TypeError, match="can't store an object of type"):
        save({"f": object()}, tmp_path / "bad.st")
    with pytest.raises(TypeError, match="dict key"):
        save({object(): 1}, tmp_path / "bad.st")
    (tmp_path / "junk").write_bytes(b"not a checkpoint at all")
    with pytest.raises(Exception):
        load(tmp_path / "junk")
