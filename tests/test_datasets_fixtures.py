"""Builders of miniature datasets in the exact on-disk formats of the originals (used by tests/test_datasets*.py).

Nothing here is downloaded: every file is written from the documented format (python-2 protocol-2 pickles for
CIFAR, big-endian idx files for MNIST, raw column-major bytes for STL10, bz2 libsvm text for USPS, MATLAB v5
files for SVHN, ...). The tests at the bottom check the builders against the stdlib readers.
"""
import bz2
import gzip
import hashlib
import io
import os
import pickle
import struct

import numpy as np
from PIL import Image

RNG_SEED = 1234


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


# ---------------------------------------------------------------------------------------------
# python-2 pickles (what cPickle.dump(obj, f, 2) wrote for the CIFAR batches)

def _p2_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    return b"J" + struct.pack("<i", v)


def _p2_str(s):
    b = s.encode("latin-1") if isinstance(s, str) else bytes(s)
    if len(b) < 256:
        return b"U" + bytes([len(b)]) + b
    return b"T" + struct.pack("<i", len(b)) + b


def _p2_obj(obj):
    if isinstance(obj, bool):
        return b"\x88" if obj else b"\x89"
    if isinstance(obj, (int, np.integer)):
        return _p2_int(int(obj))
    if isinstance(obj, (str, bytes)):
        return _p2_str(obj)
    if obj is None:
        return b"N"
    if isinstance(obj, list):
        return b"](" + b"".join(_p2_obj(x) for x in obj) + b"e"
    if isinstance(obj, tuple):
        return b"(" + b"".join(_p2_obj(x) for x in obj) + b"t"
    if isinstance(obj, dict):
        return b"}(" + b"".join(_p2_obj(k) + _p2_obj(v) for k, v in obj.items()) + b"u"
    if isinstance(obj, np.ndarray):
        assert obj.dtype == np.uint8
        dtype = (b"cnumpy\ndtype\n" + _p2_str("u1") + _p2_int(0) + _p2_int(1) + b"\x87R"
                 + b"(" + _p2_int(3) + _p2_str("|") + b"NNN" + _p2_int(-1) + _p2_int(-1) + _p2_int(0) + b"tb")
        head = (b"cnumpy.core.multiarray\n_reconstruct\n" + b"cnumpy\nndarray\n" + _p2_int(0) + b"\x85"
                + _p2_str("b") + b"\x87R")
        state = b"(" + _p2_int(1) + _p2_obj(tuple(obj.shape)) + dtype + b"\x89" + _p2_str(obj.tobytes()) + b"t"
        return head + state + b"b"
    raise TypeError(type(obj))


def py2_pickle(obj):
    """A protocol-2 pickle as Python 2's cPickle wrote it (str as BINSTRING, numpy arrays via _reconstruct)."""
    return b"\x80\x02" + _p2_obj(obj) + b"."


# ---------------------------------------------------------------------------------------------
# builders

def make_cifar(root, n_train=(3, 2), n_test=4, hundred=False, seed=RNG_SEED):
    """``cifar-10-batches-py`` (or ``cifar-100-python``) with tiny batches. Returns the folder."""
    rng = np.random.default_rng(seed)
    folder = os.path.join(root, "cifar-100-python" if hundred else "cifar-10-batches-py")
    os.makedirs(folder, exist_ok=True)

    def batch(n, label):
        d = {"batch_label": label, "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
             "filenames": [f"img_{i}.png" for i in range(n)]}
        if hundred:
            d["fine_labels"] = [int(x) for x in rng.integers(0, 100, n)]
            d["coarse_labels"] = [int(x) for x in rng.integers(0, 20, n)]
        else:
            d["labels"] = [int(x) for x in rng.integers(0, 10, n)]
        return d

    if hundred:
        files = {"train": batch(sum(n_train), "training batch 1 of 1"), "test": batch(n_test, "testing batch 1 of 1"),
                 "meta": {"fine_label_names": [f"fine{i}" for i in range(100)],
                          "coarse_label_names": [f"coarse{i}" for i in range(20)]}}
    else:
        files = {f"data_batch_{i + 1}": batch(n_train[i % len(n_train)], f"training batch {i + 1} of 5")
                 for i in range(5)}
        files["test_batch"] = batch(n_test, "testing batch 1 of 1")
        files["batches.meta"] = {"num_cases_per_batch": 10000,
                                 "label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                                                 "horse", "ship", "truck"], "num_vis": 3072}
    for name, obj in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(py2_pickle(obj))
    return folder


def with_md5s(cls, folder):
    """A subclass of a CIFAR/STL10 class (flowvision's or torchvision's) whose md5 lists match the fixture."""
    attrs = {}
    for key in ("train_list", "test_list"):
        if hasattr(cls, key):
            attrs[key] = [[name, md5(os.path.join(folder, name))] for name, _ in getattr(cls, key)]
    if hasattr(cls, "meta"):
        meta = dict(cls.meta)
        meta["md5"] = md5(os.path.join(folder, meta["filename"]))
        attrs["meta"] = meta
    return type(cls.__name__, (cls,), attrs)


def write_idx(path, arr, compress=False):
    """An idx file: 0x0000, the type code, ndim, big-endian uint32 sizes, then big-endian data."""
    codes = {np.dtype(np.uint8): 8, np.dtype(np.int8): 9, np.dtype(np.int16): 11, np.dtype(np.int32): 12,
             np.dtype(np.float32): 13, np.dtype(np.float64): 14}
    arr = np.asarray(arr)
    head = bytes([0, 0, codes[arr.dtype], arr.ndim]) + b"".join(struct.pack(">I", s) for s in arr.shape)
    data = head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    if compress:
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)


def make_mnist(root, name="MNIST", n_train=5, n_test=3, seed=RNG_SEED):
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        write_idx(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), rng.integers(0, 10, n).astype(np.uint8))
    return raw


def make_emnist(root, split, n_train=4, n_test=3, seed=RNG_SEED):
    raw = os.path.join(root, "EMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(seed)
    for part, n in (("train", n_train), ("test", n_test)):
        write_idx(os.path.join(raw, f"emnist-{split}-{part}-images-idx3-ubyte"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(os.path.join(raw, f"emnist-{split}-{part}-labels-idx1-ubyte"), rng.integers(0, 26, n).astype(np.uint8))
    return raw


def make_qmnist(root, n_train=4, n_test=6, seed=RNG_SEED):
    raw = os.path.join(root, "QMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(seed)
    for part, n in (("train", n_train), ("test", n_test)):
        write_idx(os.path.join(raw, f"qmnist-{part}-images-idx3-ubyte"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(os.path.join(raw, f"qmnist-{part}-labels-idx2-int"),
                  rng.integers(0, 10, (n, 8)).astype(np.int32))
    return raw


def make_svhn(root, split="train", n=5, seed=RNG_SEED):
    import scipy.io as sio
    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    x = rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8)
    y = rng.integers(1, 11, (n, 1)).astype(np.uint8)
    path = os.path.join(root, f"{split}_32x32.mat")
    sio.savemat(path, {"X": x, "y": y})
    return path


def make_stl10(root, n_train=4, n_test=3, n_unlabeled=2, seed=RNG_SEED):
    rng = np.random.default_rng(seed)
    folder = os.path.join(root, "stl10_binary")
    os.makedirs(folder, exist_ok=True)
    for name, n in (("train_X.bin", n_train), ("test_X.bin", n_test), ("unlabeled_X.bin", n_unlabeled)):
        rng.integers(0, 256, n * 3 * 96 * 96, dtype=np.uint8).tofile(os.path.join(folder, name))
    for name, n in (("train_y.bin", n_train), ("test_y.bin", n_test)):
        rng.integers(1, 11, n).astype(np.uint8).tofile(os.path.join(folder, name))
    with open(os.path.join(folder, "class_names.txt"), "w") as f:
        f.write("\n".join(["airplane", "bird", "car", "cat", "deer", "dog", "horse", "monkey", "ship", "truck"]) + "\n")
    with open(os.path.join(folder, "fold_indices.txt"), "w") as f:
        for k in range(10):
            f.write(" ".join(str(i) for i in rng.permutation(n_train)[:2]) + " \n")
    return folder


def make_usps(root, train=True, n=4, seed=RNG_SEED):
    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    lines = []
    for _ in range(n):
        vals = rng.uniform(-1, 1, 256)
        lines.append(f"{int(rng.integers(1, 11))} " + " ".join(f"{i + 1}:{v:.6f}" for i, v in enumerate(vals)))
    path = os.path.join(root, "usps.bz2" if train else "usps.t.bz2")
    with open(path, "wb") as f:
        f.write(bz2.compress(("\n".join(lines) + "\n").encode()))
    return path


def make_semeion(root, n=5, seed=RNG_SEED):
    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, "semeion.data")
    with open(path, "w") as f:
        for _ in range(n):
            pix = rng.integers(0, 2, 256).astype(float)
            onehot = np.zeros(10)
            onehot[rng.integers(0, 10)] = 1
            f.write(" ".join(f"{v:.4f}" for v in pix) + " " + " ".join(str(int(v)) for v in onehot) + " \n")
    return path


def write_image(path, size=(12, 10), mode="RGB", seed=0, fmt=None):
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ch = {"RGB": 3, "L": 1, "RGBA": 4}[mode]
    arr = rng.integers(0, 256, (size[1], size[0], ch), dtype=np.uint8)
    img = Image.fromarray(arr[:, :, 0] if ch == 1 else arr)
    img.save(path, format=fmt)
    return path


def make_image_folder(root, classes=("cat", "dog", "zebra"), per_class=3, size=(40, 32)):
    exts = [".png", ".jpg", ".bmp"]
    k = 0
    for c in classes:
        for i in range(per_class):
            write_image(os.path.join(root, c, f"img{i}{exts[(i + k) % 3]}"), size=size, seed=k * 10 + i)
        k += 1
    return root


# ---------------------------------------------------------------------------------------------
# the builders themselves

def test_py2_pickle_matches_stdlib_reading():
    arr = np.arange(12, dtype=np.uint8).reshape(3, 4)
    obj = pickle.loads(py2_pickle({"data": arr, "labels": [1, 300, 70000], "name": "x"}), encoding="latin1")
    assert obj["labels"] == [1, 300, 70000] and obj["name"] == "x"
    np.testing.assert_array_equal(obj["data"], arr)


def test_idx_writer_round_trip(tmp_path):
    arr = np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 5
    write_idx(tmp_path / "x", arr)
    raw = (tmp_path / "x").read_bytes()
    assert raw[:4] == b"\x00\x00\x0c\x03" and struct.unpack(">3I", raw[4:16]) == (2, 3, 4)
    np.testing.assert_array_equal(np.frombuffer(raw[16:], ">i4").reshape(2, 3, 4), arr)
    assert io.BytesIO(raw).read(1) == b"\x00"
