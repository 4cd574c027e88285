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
    for part, n in (("qmnist-train", n_train), ("qmnist-test", n_test), ("xnist", n_test + 1)):
        write_idx(os.path.join(raw, f"{part}-images-idx3-ubyte"), rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(os.path.join(raw, f"{part}-labels-idx2-int"), rng.integers(0, 10, (n, 8)).astype(np.int32))
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


# ---------------------------------------------------------------------------------------------
# ImageNet, VOC, COCO

def _tar(path, files, mode="w"):
    """A tar holding ``{arcname: bytes}``."""
    import tarfile
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _jpeg_bytes(seed, size=(20, 16)):
    buf = io.BytesIO()
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(buf, format="JPEG")
    return buf.getvalue()


def make_imagenet_archives(root, n_val=5):
    """ILSVRC2012_devkit_t12.tar.gz (meta.mat + val ground truth), ILSVRC2012_img_train.tar (a tar per wnid)
    and ILSVRC2012_img_val.tar. Returns {"devkit"|"train"|"val": (file name, md5)}."""
    import scipy.io as sio
    os.makedirs(root, exist_ok=True)
    wnids = ["n01440764", "n01443537", "n01484850"]
    words = ["tench, Tinca tinca", "goldfish, Carassius auratus", "great white shark"]
    fields = ["ILSVRC2012_ID", "WNID", "words", "gloss", "num_children", "children", "wordnet_height",
              "num_train_images"]
    synsets = np.zeros((4, 1), dtype=[(f, "O") for f in fields])
    for i, (w, name) in enumerate(zip(wnids, words)):
        synsets[i, 0] = (np.array([[i + 1]], np.uint16), np.array([w]), np.array([name]), np.array(["a fish"]),
                         np.array([[0]], np.uint8), np.zeros((1, 0), np.uint8), np.array([[0]], np.uint8),
                         np.array([[1300]], np.uint16))
    synsets[3, 0] = (np.array([[1001]], np.uint16), np.array(["n00001740"]), np.array(["entity"]),
                     np.array(["root"]), np.array([[3]], np.uint8), np.array([[1, 2, 3]], np.uint16),
                     np.array([[19]], np.uint8), np.array([[0]], np.uint16))
    mat = io.BytesIO()
    sio.savemat(mat, {"synsets": synsets})
    rng = np.random.default_rng(RNG_SEED)
    val_ids = [int(x) for x in rng.integers(1, 4, n_val)]
    _tar(os.path.join(root, "ILSVRC2012_devkit_t12.tar.gz"), {
        "ILSVRC2012_devkit_t12/data/meta.mat": mat.getvalue(),
        "ILSVRC2012_devkit_t12/data/ILSVRC2012_validation_ground_truth.txt":
            ("\n".join(str(v) for v in val_ids) + "\n").encode()}, "w:gz")
    inner = {}
    for k, w in enumerate(wnids):
        buf = io.BytesIO()
        import tarfile
        with tarfile.open(fileobj=buf, mode="w") as t:
            for j in range(2):
                data = _jpeg_bytes(k * 10 + j)
                info = tarfile.TarInfo(f"{w}_{j + 10}.JPEG")
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        inner[f"{w}.tar"] = buf.getvalue()
    _tar(os.path.join(root, "ILSVRC2012_img_train.tar"), inner)
    _tar(os.path.join(root, "ILSVRC2012_img_val.tar"),
         {f"ILSVRC2012_val_{i + 1:08d}.JPEG": _jpeg_bytes(100 + i) for i in range(n_val)})
    return {k: (n, md5(os.path.join(root, n))) for k, n in
            (("devkit", "ILSVRC2012_devkit_t12.tar.gz"), ("train", "ILSVRC2012_img_train.tar"),
             ("val", "ILSVRC2012_img_val.tar"))}


VOC_XML = """<annotation>
\t<folder>VOC2012</folder>
\t<filename>{name}.jpg</filename>
\t<source><database>The VOC2007 Database</database><annotation>PASCAL VOC2007</annotation></source>
\t<size><width>{w}</width><height>{h}</height><depth>3</depth></size>
\t<segmented>{seg}</segmented>
{objects}</annotation>
"""
VOC_OBJ = """\t<object>
\t\t<name>{cls}</name><pose>Unspecified</pose><truncated>0</truncated><difficult>{diff}</difficult>
\t\t<bndbox><xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax></bndbox>
\t</object>
"""


def make_voc(root, year="2012", names=("2008_000001", "2008_000002", "2008_000003"), n_objects=(1, 2, 3)):
    base = os.path.join(root, "VOCdevkit", f"VOC{year}")
    rng = np.random.default_rng(RNG_SEED)
    classes = ["aeroplane", "bicycle", "bird", "person", "tvmonitor"]
    for sub in ("JPEGImages", "Annotations", "SegmentationClass", "ImageSets/Main", "ImageSets/Segmentation"):
        os.makedirs(os.path.join(base, sub), exist_ok=True)
    palette = (rng.integers(0, 256, 768)).astype(np.uint8).tolist()
    for k, name in enumerate(names):
        w, h = 24 + k, 18 + k
        with open(os.path.join(base, "JPEGImages", name + ".jpg"), "wb") as f:
            f.write(_jpeg_bytes(k, (w, h)))
        objs = ""
        for j in range(n_objects[k % len(n_objects)]):
            x0, y0 = int(rng.integers(1, w // 2)), int(rng.integers(1, h // 2))
            objs += VOC_OBJ.format(cls=classes[(k + j) % len(classes)], diff=j % 2, x0=x0, y0=y0,
                                   x1=x0 + int(rng.integers(2, w // 2)), y1=y0 + int(rng.integers(2, h // 2)))
        with open(os.path.join(base, "Annotations", name + ".xml"), "w") as f:
            f.write(VOC_XML.format(name=name, w=w, h=h, seg=k % 2, objects=objs))
        mask = Image.fromarray(rng.choice([0, 1, 15, 255], (h, w)).astype(np.uint8), mode="P")
        mask.putpalette(palette)
        mask.save(os.path.join(base, "SegmentationClass", name + ".png"))
    for split, sel in (("train", names[:2]), ("val", names[2:]), ("trainval", names)):
        for kind in ("Main", "Segmentation"):
            with open(os.path.join(base, "ImageSets", kind, split + ".txt"), "w") as f:
                f.write("\n".join(sel) + "\n")
    return base


def make_coco(root, n_images=4, captions=False):
    """``images/`` and an ``instances``-style (or ``captions``-style) json. Returns (image dir, json path)."""
    import json
    rng = np.random.default_rng(RNG_SEED)
    img_dir = os.path.join(root, "images")
    os.makedirs(img_dir, exist_ok=True)
    images, anns = [], []
    ann_id = 100
    for i in range(n_images):
        w, h = 30 + i, 20 + i
        image_id = [42, 7, 1000, 3][i % 4] + i // 4
        name = f"{image_id:012d}.jpg"
        with open(os.path.join(img_dir, name), "wb") as f:
            f.write(_jpeg_bytes(i, (w, h)))
        images.append({"id": image_id, "file_name": name, "width": w, "height": h, "license": 1})
        for j in range(i % 3):  # image 0 has no annotation
            ann_id += 1
            if captions:
                anns.append({"id": ann_id, "image_id": image_id, "caption": f"a picture {i} {j}"})
                continue
            x, y = float(rng.uniform(0, w / 2)), float(rng.uniform(0, h / 2))
            bw, bh = float(rng.uniform(1, w / 2)), float(rng.uniform(1, h / 2))
            anns.append({"id": ann_id, "image_id": image_id, "category_id": int(rng.choice([1, 3, 18])),
                         "bbox": [x, y, bw, bh], "area": bw * bh, "iscrowd": 0,
                         "segmentation": [[x, y, x + bw, y, x + bw, y + bh, x, y + bh]]})
    rng.shuffle(anns)  # annotations of one image are not contiguous in real files
    data = {"info": {"year": 2017}, "licenses": [{"id": 1, "name": "x"}], "images": images, "annotations": anns}
    if not captions:
        data["categories"] = [{"id": 1, "name": "person", "supercategory": "person"},
                              {"id": 3, "name": "car", "supercategory": "vehicle"},
                              {"id": 18, "name": "dog", "supercategory": "animal"}]
    path = os.path.join(root, "captions.json" if captions else "instances.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return img_dir, path
