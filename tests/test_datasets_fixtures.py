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


# ---------------------------------------------------------------------------------------------
# file-list datasets

def make_food101(root):
    import json
    base = os.path.join(root, "food-101")
    meta = {"train": {"apple_pie": ["apple_pie/1", "apple_pie/7"], "sushi": ["sushi/3"]},
            "test": {"apple_pie": ["apple_pie/9"], "sushi": ["sushi/4", "sushi/5"]}}
    os.makedirs(os.path.join(base, "meta"), exist_ok=True)
    k = 0
    for split, d in meta.items():
        with open(os.path.join(base, "meta", f"{split}.json"), "w") as f:
            json.dump(d, f)
        for paths in d.values():
            for p in paths:
                write_image(os.path.join(base, "images", p + ".jpg"), seed=k, fmt="JPEG")
                k += 1
    with open(os.path.join(base, "meta", "classes.txt"), "w") as f:
        f.write("apple_pie\nsushi\n")


def make_dtd(root):
    base = os.path.join(root, "dtd", "dtd")
    os.makedirs(os.path.join(base, "labels"), exist_ok=True)
    files = {"banded": ["banded_0002.jpg", "banded_0004.jpg"], "zigzagged": ["zigzagged_0010.jpg"],
             "dotted": ["dotted_0001.jpg"]}
    k = 0
    for cls, names in files.items():
        for n in names:
            write_image(os.path.join(base, "images", cls, n), seed=k, fmt="JPEG")
            k += 1
    allf = [f"{c}/{n}" for c, ns in files.items() for n in ns]
    for split, sel in (("train1", allf[:3]), ("val1", allf[3:]), ("test1", allf[1:]), ("train2", allf)):
        with open(os.path.join(base, "labels", split + ".txt"), "w") as f:
            f.write("\n".join(sel) + "\n")


def make_fgvc(root):
    base = os.path.join(root, "fgvc-aircraft-2013b", "data")
    os.makedirs(os.path.join(base, "images"), exist_ok=True)
    variants, families, makers = ["707-320", "A300B4", "Cessna 172"], ["Boeing 707", "A300", "Cessna 172"], \
        ["Boeing", "Airbus", "Cessna"]
    for name, vals in (("variants.txt", variants), ("families.txt", families), ("manufacturers.txt", makers)):
        with open(os.path.join(base, name), "w") as f:
            f.write("\n".join(vals) + "\n")
    ids = ["0034309", "0034958", "0037511", "0037512"]
    for i, image_id in enumerate(ids):
        write_image(os.path.join(base, "images", image_id + ".jpg"), seed=i, fmt="JPEG")
    for level, vals in (("variant", variants), ("family", families), ("manufacturer", makers)):
        for split, sel in (("train", ids[:2]), ("val", ids[2:]), ("trainval", ids), ("test", ids[1:3])):
            with open(os.path.join(base, f"images_{level}_{split}.txt"), "w") as f:
                f.write("".join(f"{i} {vals[int(i) % 3]}\n" for i in sel))


def make_sun397(root):
    base = os.path.join(root, "SUN397")
    classes = ["/a/abbey", "/b/bakery/shop", "/z/zen_garden"]
    with open(os.path.join(makedirs(base), "ClassName.txt"), "w") as f:
        f.write("\n".join(classes) + "\n")
    k = 0
    for c in classes:
        for j in range(2):
            write_image(os.path.join(base, c.strip("/"), f"sun_a{k:04d}.jpg"), seed=k, fmt="JPEG")
            k += 1


def makedirs(path):
    os.makedirs(path, exist_ok=True)
    return path


def make_gtsrb(root):
    base = os.path.join(root, "gtsrb")
    k = 0
    for cls in ("00000", "00001", "00042"):
        for j in range(2):
            write_image(os.path.join(base, "GTSRB", "Training", cls, f"00000_{j:05d}.ppm"), seed=k, fmt="PPM")
            k += 1
    rows = []
    for j in range(3):
        write_image(os.path.join(base, "GTSRB", "Final_Test", "Images", f"{j:05d}.ppm"), seed=50 + j, fmt="PPM")
        rows.append(f"{j:05d}.ppm;12;13;1;1;11;12;{[3, 0, 42][j]}")
    with open(os.path.join(base, "GT-final_test.csv"), "w") as f:
        f.write("Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n" + "\n".join(rows) + "\n")


def make_fer2013(root, kind="split"):
    """``train.csv``/``test.csv`` (kind="split"), ``fer2013.csv`` (kind="fer") or ``icml_face_data.csv``."""
    base = makedirs(os.path.join(root, "fer2013"))
    rng = np.random.default_rng(RNG_SEED)

    def pixels():
        return " ".join(str(v) for v in rng.integers(0, 256, 48 * 48))
    if kind == "split":
        with open(os.path.join(base, "train.csv"), "w") as f:
            f.write("emotion,pixels\n" + "".join(f"{i % 7},{pixels()}\n" for i in range(3)))
        with open(os.path.join(base, "test.csv"), "w") as f:
            f.write("pixels\n" + "".join(f"{pixels()}\n" for _ in range(2)))
        return [os.path.join(base, "train.csv"), os.path.join(base, "test.csv")]
    usage = ["Training", "PublicTest", "Training", "PrivateTest"]
    if kind == "fer":
        path = os.path.join(base, "fer2013.csv")
        body = "emotion,pixels,Usage\n" + "".join(f"{i % 7},{pixels()},{u}\n" for i, u in enumerate(usage))
    else:
        path = os.path.join(base, "icml_face_data.csv")
        body = "emotion, Usage, pixels\n" + "".join(f"{i % 7},{u},{pixels()}\n" for i, u in enumerate(usage))
    with open(path, "w") as f:
        f.write(body)
    return [path]


def make_pets(root):
    base = os.path.join(root, "oxford-iiit-pet")
    ids = [("Abyssinian_1", 1, 1), ("Abyssinian_10", 1, 1), ("american_bulldog_100", 2, 2), ("yorkshire_terrier_9", 37, 2)]
    rng = np.random.default_rng(RNG_SEED)
    for k, (i, _, _) in enumerate(ids):
        write_image(os.path.join(base, "images", i + ".jpg"), seed=k, fmt="JPEG")
        makedirs(os.path.join(base, "annotations", "trimaps"))
        Image.fromarray(rng.integers(1, 4, (10, 12)).astype(np.uint8)).save(
            os.path.join(base, "annotations", "trimaps", i + ".png"))
    for split, sel in (("trainval", ids[:3]), ("test", ids[1:])):
        with open(os.path.join(base, "annotations", split + ".txt"), "w") as f:
            f.write("".join(f"{i} {c} {s} 1\n" for i, c, s in sel))


def make_rendered_sst2(root):
    k = 0
    for folder in ("train", "valid", "test"):
        for cls in ("negative", "positive"):
            for j in range(2):
                write_image(os.path.join(root, "rendered-sst2", folder, cls, f"{k}.png"), seed=k)
                k += 1


def make_imagenette(root, size_dir="imagenette2-160"):
    k = 0
    for split in ("train", "val"):
        for wnid in ("n01440764", "n03888257", "n02979186"):
            for j in range(2):
                write_image(os.path.join(root, size_dir, split, wnid, f"{wnid}_{k}.JPEG"), seed=k, fmt="JPEG")
                k += 1


def make_simple_folders(root, folder, classes=("AnnualCrop", "Forest"), ext=".jpg"):
    k = 0
    for c in classes:
        for j in range(2):
            write_image(os.path.join(root, folder, c, f"{c}_{j}{ext}"), seed=k, fmt="JPEG")
            k += 1


def make_flowers102(root, n=8):
    import scipy.io as sio
    base = makedirs(os.path.join(root, "flowers-102"))
    rng = np.random.default_rng(RNG_SEED)
    for i in range(1, n + 1):
        write_image(os.path.join(base, "jpg", f"image_{i:05d}.jpg"), seed=i, fmt="JPEG")
    sio.savemat(os.path.join(base, "imagelabels.mat"), {"labels": rng.integers(1, 103, (1, n)).astype(np.uint8)})
    perm = rng.permutation(np.arange(1, n + 1))
    sio.savemat(os.path.join(base, "setid.mat"), {"trnid": perm[None, :3].astype(np.uint16),
                                                  "valid": perm[None, 3:5].astype(np.uint16),
                                                  "tstid": perm[None, 5:].astype(np.uint16)})
    return {k: md5(os.path.join(base, f)) for k, f in (("label", "imagelabels.mat"), ("setid", "setid.mat"))}


def make_stanford_cars(root):
    import scipy.io as sio
    base = os.path.join(root, "stanford_cars")
    devkit = makedirs(os.path.join(base, "devkit"))
    names = np.empty((1, 3), dtype=object)
    names[0, :] = ["AM General Hummer SUV 2000", "Acura RL Sedan 2012", "smart fortwo Convertible 2012"]
    sio.savemat(os.path.join(devkit, "cars_meta.mat"), {"class_names": names})
    fields = ["bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2", "class", "fname"]
    for split, folder, mat, n in (("train", "cars_train", os.path.join(devkit, "cars_train_annos.mat"), 4),
                                  ("test", "cars_test", os.path.join(base, "cars_test_annos_withlabels.mat"), 3)):
        ann = np.zeros((1, n), dtype=[(f, "O") for f in fields])
        for i in range(n):
            fname = f"{i + 1:05d}.jpg"
            write_image(os.path.join(base, folder, fname), seed=i, fmt="JPEG")
            ann[0, i] = (np.array([[1]]), np.array([[2]]), np.array([[10]]), np.array([[9]]),
                         np.array([[(i % 3) + 1]], np.uint8), np.array([fname]))
        sio.savemat(mat, {"annotations": ann})


def make_caltech101(root):
    import scipy.io as sio
    base = os.path.join(root, "caltech101")
    k = 0
    for cls, n in (("BACKGROUND_Google", 1), ("Faces", 2), ("accordion", 3), ("airplanes", 1)):
        ann_cls = {"Faces": "Faces_2", "airplanes": "Airplanes_Side_2"}.get(cls, cls)
        for i in range(1, n + 1):
            write_image(os.path.join(base, "101_ObjectCategories", cls, f"image_{i:04d}.jpg"), seed=k, fmt="JPEG",
                        mode="L" if k % 3 == 0 else "RGB")
            k += 1
            sio.savemat(os.path.join(makedirs(os.path.join(base, "Annotations", ann_cls)), f"annotation_{i:04d}.mat"),
                        {"box_coord": np.array([[1, 9, 2, 11]], np.uint16),
                         "obj_contour": np.random.default_rng(k).uniform(0, 9, (2, 5))})


def make_caltech256(root):
    base = os.path.join(root, "caltech256", "256_ObjectCategories")
    k = 0
    for c, n in (("001.ak47", 2), ("002.american-flag", 1), ("003.clutter", 2)):
        for i in range(1, n + 1):
            write_image(os.path.join(base, c, f"{c[:3]}_{i:04d}.jpg"), seed=k, fmt="JPEG")
            k += 1
    with open(os.path.join(base, "001.ak47", "Thumbs.db"), "wb") as f:
        f.write(b"junk")


def make_celeba(root, n=7):
    base = makedirs(os.path.join(root, "celeba"))
    rng = np.random.default_rng(RNG_SEED)
    names = [f"{i + 1:06d}.jpg" for i in range(n)]
    for i, name in enumerate(names):
        write_image(os.path.join(base, "img_align_celeba", name), size=(18, 22), seed=i, fmt="JPEG")
    attrs = ["5_o_Clock_Shadow", "Arched_Eyebrows", "Attractive", "Bags_Under_Eyes", "Bald"]
    marks = ["lefteye_x", "lefteye_y", "righteye_x", "righteye_y", "nose_x", "nose_y"]
    files = {
        "list_eval_partition.txt": "".join(f"{nm} {[0, 0, 1, 2, 0, 1, 2][i % 7]}\n" for i, nm in enumerate(names)),
        "identity_CelebA.txt": "".join(f"{nm} {int(rng.integers(1, 10000))}\n" for nm in names),
        "list_bbox_celeba.txt": f"{n}\nimage_id x_1 y_1 width height\n" + "".join(
            f"{nm}    {' '.join(f'{v:3d}' for v in rng.integers(0, 300, 4))}\n" for nm in names),
        "list_landmarks_align_celeba.txt": f"{n}\n" + " ".join(marks) + " \n" + "".join(
            f"{nm}" + "".join(f"{v:5d}" for v in rng.integers(60, 120, 6)) + "\n" for nm in names),
        "list_attr_celeba.txt": f"{n}\n" + " ".join(attrs) + " \n" + "".join(
            f"{nm} " + " ".join(f"{v:2d}" for v in rng.choice([-1, 1], 5)) + "\n" for nm in names),
    }
    for name, body in files.items():
        with open(os.path.join(base, name), "w") as f:
            f.write(body)
    return {name: md5(os.path.join(base, name)) for name in files}


def make_lfw(root):
    base = makedirs(os.path.join(root, "lfw-py"))
    people = {"Aaron_Eckhart": 1, "Abel_Pacheco": 3, "Zico": 2, "Adam_Sandler": 2}
    k = 0
    for name, n in people.items():
        for i in range(1, n + 1):
            write_image(os.path.join(base, "lfw_funneled", name, f"{name}_{i:04d}.jpg"), seed=k, fmt="JPEG")
            k += 1
    with open(os.path.join(base, "lfw-funneled.tgz"), "wb") as f:
        f.write(b"not used once extracted")
    files = {
        "lfw-names.txt": "".join(f"{nm}\t{n}\n" for nm, n in people.items()),
        "people.txt": "2\n2\nAaron_Eckhart\t1\nAbel_Pacheco\t3\n2\nZico\t2\nAdam_Sandler\t2\n",
        "peopleDevTrain.txt": "2\nAbel_Pacheco\t3\nZico\t2\n",
        "peopleDevTest.txt": "1\nAdam_Sandler\t2\n",
        "pairs.txt": "2\t1\nAbel_Pacheco\t1\t3\nZico\t1\tAaron_Eckhart\t1\nAdam_Sandler\t1\t2\n"
                     "Abel_Pacheco\t2\tAdam_Sandler\t2\n",
        "pairsDevTrain.txt": "1\nAbel_Pacheco\t2\t3\nZico\t2\tAdam_Sandler\t1\n",
        "pairsDevTest.txt": "1\nAdam_Sandler\t1\t2\nAaron_Eckhart\t1\tZico\t1\n",
    }
    for name, body in files.items():
        with open(os.path.join(base, name), "w") as f:
            f.write(body)
    out = {name: md5(os.path.join(base, name)) for name in files}
    out["lfw-funneled.tgz"] = md5(os.path.join(base, "lfw-funneled.tgz"))
    return out


def make_omniglot(root, background=True):
    import zipfile
    base = makedirs(os.path.join(root, "omniglot-py"))
    name = "images_background" if background else "images_evaluation"
    k = 0
    for alphabet in ("Latin", "Greek", "Braille"):
        for ch in ("character01", "character02"):
            for j in range(2):
                write_image(os.path.join(base, name, alphabet, ch, f"{k:04d}_{j + 1:02d}.png"), size=(9, 9),
                            mode="L", seed=k)
            k += 1
    with zipfile.ZipFile(os.path.join(base, name + ".zip"), "w") as zf:
        zf.writestr("placeholder", b"x")
    return md5(os.path.join(base, name + ".zip"))


def make_places365(root, small=False):
    cats = ["/a/airfield", "/b/bakery/shop", "/z/zen_garden"]
    size = "256" if small else "large"
    with open(os.path.join(makedirs(root), "categories_places365.txt"), "w") as f:
        f.write("".join(f"{c} {i}\n" for i, c in enumerate(cats)))
    lists = {}
    k = 0
    train = []
    for i, c in enumerate(cats):
        for j in range(2):
            rel = f"{c}/{j + 1:08d}.jpg"
            write_image(os.path.join(root, f"data_{size}_standard", rel.lstrip("/")), seed=k, fmt="JPEG")
            train.append(f"{rel} {i}")
            k += 1
    lists["places365_train_standard.txt"] = train
    val, test = [], []
    for j in range(3):
        name = f"Places365_val_{j + 1:08d}.jpg"
        write_image(os.path.join(root, f"val_{size}", name), seed=50 + j, fmt="JPEG")
        val.append(f"{name} {j % 3}")
        name = f"Places365_test_{j + 1:08d}.jpg"
        write_image(os.path.join(root, f"test_{size}", name), seed=60 + j, fmt="JPEG")
        test.append(name)
    lists["places365_val.txt"], lists["places365_test.txt"] = val, test
    for name, lines in lists.items():
        with open(os.path.join(root, name), "w") as f:
            f.write("\n".join(lines) + "\n")
    return {n: md5(os.path.join(root, n)) for n in list(lists) + ["categories_places365.txt"]}


def make_inaturalist(root, version):
    base = os.path.join(root, version)
    k = 0
    if version.startswith("2021"):
        dirs = ["00000_Animalia_Chordata_Aves_Passeriformes_Corvidae_Corvus_corax",
                "00001_Animalia_Chordata_Aves_Passeriformes_Corvidae_Pica_pica",
                "00002_Plantae_Tracheophyta_Magnoliopsida_Rosales_Rosaceae_Rosa_canina"]
    elif version == "2017":
        dirs = ["Aves/Corvus corax", "Aves/Pica pica", "Plantae/Rosa canina"]
    else:
        dirs = ["Aves/2", "Aves/0", "Plantae/1"]
    for d in dirs:
        for j in range(2):
            write_image(os.path.join(base, d, f"{k:03d}abc.jpg"), seed=k, fmt="JPEG")
            k += 1


def make_pcam(root, split="train", n=4):
    import h5py
    base = makedirs(os.path.join(root, "pcam"))
    names = {"train": "train", "test": "test", "val": "valid"}[split]
    rng = np.random.default_rng(RNG_SEED)
    with h5py.File(os.path.join(base, f"camelyonpatch_level_2_split_{names}_x.h5"), "w") as f:
        f.create_dataset("x", data=rng.integers(0, 256, (n, 96, 96, 3), dtype=np.uint8))
    with h5py.File(os.path.join(base, f"camelyonpatch_level_2_split_{names}_y.h5"), "w") as f:
        f.create_dataset("y", data=rng.integers(0, 2, (n, 1, 1, 1)).astype(np.uint8))


def make_cityscapes(root):
    import json
    rng = np.random.default_rng(RNG_SEED)
    k = 0
    for split, mode in (("train", "gtFine"), ("val", "gtFine"), ("train", "gtCoarse")):
        for city in ("aachen", "bochum"):
            for j in range(2 if city == "aachen" else 1):
                stem = f"{city}_{j:06d}_000019"
                write_image(os.path.join(root, "leftImg8bit", split, city, f"{stem}_leftImg8bit.png"), size=(16, 8),
                            seed=k)
                d = makedirs(os.path.join(root, mode, split, city))
                Image.fromarray(rng.integers(0, 34, (8, 16)).astype(np.uint8)).save(
                    os.path.join(d, f"{stem}_{mode}_labelIds.png"))
                Image.fromarray((rng.integers(0, 3, (8, 16)) * 1000 + 26).astype(np.uint16)).save(
                    os.path.join(d, f"{stem}_{mode}_instanceIds.png"))
                write_image(os.path.join(d, f"{stem}_{mode}_color.png"), size=(16, 8), mode="RGBA", seed=k + 100)
                with open(os.path.join(d, f"{stem}_{mode}_polygons.json"), "w") as f:
                    json.dump({"imgHeight": 8, "imgWidth": 16, "objects": [
                        {"label": "car", "polygon": [[1, 1], [5, 1], [5, 4]]}]}, f)
                k += 1


def make_sbd(root, n=3):
    import scipy.io as sio
    import scipy.sparse as sp
    rng = np.random.default_rng(RNG_SEED)
    names = [f"2008_{i:06d}" for i in range(n)]
    for k, name in enumerate(names):
        write_image(os.path.join(root, "img", name + ".jpg"), size=(12, 9), seed=k, fmt="JPEG")
        seg = rng.integers(0, 21, (9, 12)).astype(np.uint8)
        bounds = np.empty((20, 1), dtype=object)
        for c in range(20):
            bounds[c, 0] = sp.csc_matrix((rng.random((9, 12)) > 0.8).astype(np.uint8))
        gt = {"Boundaries": bounds, "Segmentation": seg, "CategoriesPresent": np.array([[1, 15]], np.uint8)}
        sio.savemat(os.path.join(makedirs(os.path.join(root, "cls")), name + ".mat"), {"GTcls": gt})
    for split, sel in (("train", names[:2]), ("val", names[2:]), ("train_noval", names[1:])):
        with open(os.path.join(root, split + ".txt"), "w") as f:
            f.write("\n".join(sel) + "\n")


def make_kitti(root):
    base = os.path.join(root, "Kitti", "raw")
    rng = np.random.default_rng(RNG_SEED)
    for loc, n in (("training", 3), ("testing", 2)):
        for i in range(n):
            write_image(os.path.join(base, loc, "image_2", f"{i:06d}.png"), size=(20, 6), seed=i)
            if loc == "training":
                d = makedirs(os.path.join(base, loc, "label_2"))
                with open(os.path.join(d, f"{i:06d}.txt"), "w") as f:
                    for j in range(i + 1):
                        vals = " ".join(f"{v:.2f}" for v in rng.uniform(0, 100, 11))
                        f.write(f"{['Car', 'Pedestrian', 'DontCare'][j % 3]} {j * 0.1:.2f} {j % 3} {-1.58 + j:.2f} "
                                f"{vals}\n")


def make_widerface(root):
    base = os.path.join(root, "widerface")
    rng = np.random.default_rng(RNG_SEED)
    ann = makedirs(os.path.join(base, "wider_face_split"))
    for split in ("train", "val"):
        lines = []
        for k, (event, n_boxes) in enumerate((("0--Parade", 2), ("1--Handshaking", 0), ("0--Parade", 1))):
            rel = f"{event}/{event[3:]}_{split}_{k}.jpg"
            write_image(os.path.join(base, f"WIDER_{split}", "images", rel), size=(14, 10), seed=k, fmt="JPEG")
            lines += [rel, str(n_boxes)]
            for _ in range(max(n_boxes, 1)):
                row = rng.integers(0, 50, 4).tolist() + rng.integers(0, 3, 6).tolist() if n_boxes else [0] * 10
                lines.append(" ".join(str(v) for v in row) + " ")
        with open(os.path.join(ann, f"wider_face_{split}_bbx_gt.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    tests = []
    for k in range(2):
        rel = f"0--Parade/0_Parade_test_{k}.jpg"
        write_image(os.path.join(base, "WIDER_test", "images", rel), size=(14, 10), seed=20 + k, fmt="JPEG")
        tests.append(rel)
    with open(os.path.join(ann, "wider_face_test_filelist.txt"), "w") as f:
        f.write("\n".join(tests) + "\n")
