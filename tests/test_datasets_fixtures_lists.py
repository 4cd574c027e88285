"""Builders of miniature file-list, face, scene and detection datasets in their original formats (folders,
txt/csv/json lists, MATLAB and HDF5 files), used by tests/test_datasets*.py."""
import os

import numpy as np
from PIL import Image

from test_datasets_fixtures import RNG_SEED, md5, write_image


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


def make_flickr(root):
    """Flickr8k's annotation HTML page and Flickr30k's token file over the same images."""
    imgs = makedirs(os.path.join(root, "images"))
    ids = [("1000268201", "693b08cb0e"), ("1001773457", "577c3a7d70"), ("1002674143", "1b742ab4b8")]
    rows = []
    tokens = []
    for k, (pid, secret) in enumerate(ids):
        write_image(os.path.join(imgs, f"{pid}_{secret}.jpg"), seed=k, fmt="JPEG")
        caps = [f"caption {k} {j}" for j in range(k + 1)]
        url = f"http://www.flickr.com/photos/user{k}/{pid}/"
        rows.append(f'<tr><td><a href="{url}">{url}</a></td>\n<td><ul>'
                    + "".join(f"<li>{c} </li>" for c in caps) + "</ul></td></tr>\n")
        tokens += [f"{pid}_{secret}.jpg#{j}\t{c}" for j, c in enumerate(caps)]
    rows.insert(1, '<tr><td><a href="http://www.flickr.com/photos/x/99/">Image Not Found</a></td></tr>\n')
    html = os.path.join(root, "flickr8k.html")
    with open(html, "w") as f:
        f.write("<html><body><h1>Flickr 8k</h1>\n<table>\n" + "".join(rows) + "</table></body></html>\n")
    token = os.path.join(root, "results_20130124.token")
    with open(token, "w") as f:
        f.write("\n".join(tokens) + "\n")
    return imgs, html, token


def make_clevr(root):
    import json
    base = os.path.join(root, "clevr", "CLEVR_v1.0")
    rng = np.random.default_rng(RNG_SEED)
    for split, n in (("train", 3), ("val", 2), ("test", 2)):
        scenes = []
        for i in range(n):
            name = f"CLEVR_{split}_{i:06d}.png"
            write_image(os.path.join(base, "images", split, name), size=(12, 8), seed=i)
            scenes.append({"image_filename": name, "objects": [{"shape": "cube"}] * int(rng.integers(3, 10))})
        if split != "test":
            with open(os.path.join(makedirs(os.path.join(base, "scenes")), f"CLEVR_{split}_scenes.json"), "w") as f:
                json.dump({"info": {}, "scenes": scenes[::-1]}, f)


def make_moving_mnist(root, n=3):
    base = makedirs(os.path.join(root, "MovingMNIST"))
    arr = np.random.default_rng(RNG_SEED).integers(0, 256, (20, n, 64, 64), dtype=np.uint8)
    np.save(os.path.join(base, "mnist_test_seq.npy"), arr)


def make_sbu(root, n=4):
    base = makedirs(os.path.join(root, "dataset"))
    urls, caps = [], []
    for i in range(n):
        name = f"{1000 + i}_abc.jpg"
        urls.append(f"http://static.flickr.com/1/{name}")
        caps.append(f"a photo number {i}")
        if i != 2:  # one photo is gone, as on Flickr
            write_image(os.path.join(base, name), seed=i, fmt="JPEG")
    with open(os.path.join(base, "SBU_captioned_photo_dataset_urls.txt"), "w") as f:
        f.write("\n".join(urls) + "\n")
    with open(os.path.join(base, "SBU_captioned_photo_dataset_captions.txt"), "w") as f:
        f.write("\n".join(caps) + "\n")
    archive = os.path.join(root, "SBUCaptionedPhotoDataset.tar.gz")
    with open(archive, "wb") as f:
        f.write(b"already extracted")
    return md5(archive)


def make_phototour(root, name="liberty"):
    base = makedirs(os.path.join(root, name))
    rng = np.random.default_rng(RNG_SEED)
    for k, (h, w) in enumerate(((128, 192), (64, 128))):  # 6 + 2 patches
        Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8)).save(os.path.join(base, f"patches{k:04d}.bmp"))
    with open(os.path.join(base, "info.txt"), "w") as f:
        f.write("".join(f"{i // 2} 0\n" for i in range(8)))
    with open(os.path.join(base, "m50_100000_100000_0.txt"), "w") as f:
        for a, b in ((0, 1), (2, 5), (3, 4), (5, 6)):
            f.write(f"{a} {a // 2} 0 {b} {b // 2} 0 0\n")


# ---------------------------------------------------------------------------------------------
# optical flow

def write_flo(path, h=6, w=8, seed=0):
    flow = np.random.default_rng(seed).normal(0, 3, (h, w, 2)).astype("<f4")
    makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(b"PIEH" + np.array([w, h], "<i4").tobytes() + flow.tobytes())


def write_pfm(path, h=6, w=8, seed=0, channels=3):
    data = np.random.default_rng(seed).normal(0, 3, (h, w, channels)).astype("<f4")
    makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write((b"PF" if channels == 3 else b"Pf") + f"\n{w} {h}\n-1.0\n".encode() + data.tobytes())


def write_flow_png16(path, h=6, w=8, seed=0):
    import cv2
    rng = np.random.default_rng(seed)
    rgb = np.stack([rng.integers(2 ** 15 - 640, 2 ** 15 + 640, (h, w)), rng.integers(2 ** 15 - 640, 2 ** 15 + 640, (h, w)),
                    rng.integers(0, 2, (h, w))], axis=-1).astype(np.uint16)
    makedirs(os.path.dirname(path))
    assert cv2.imwrite(path, rgb[:, :, ::-1])


def make_flow_datasets(root):
    k = 0
    for split, folder in (("training", "clean"), ("training", "final"), ("test", "clean")):
        for i in range(3):
            write_image(os.path.join(root, "Sintel", split, folder, "alley_1", f"frame_{i + 1:04d}.png"), (8, 6), seed=k)
            k += 1
    for i in range(2):
        write_flo(os.path.join(root, "Sintel", "training", "flow", "alley_1", f"frame_{i + 1:04d}.flo"), seed=i)
    for split in ("training", "testing"):
        for i in range(2):
            for j in (10, 11):
                write_image(os.path.join(root, "KittiFlow", split, "image_2", f"{i:06d}_{j}.png"), (8, 6), seed=k)
                k += 1
            if split == "training":
                write_flow_png16(os.path.join(root, "KittiFlow", split, "flow_occ", f"{i:06d}_10.png"), seed=i)
    for i in range(3):
        for j in (1, 2):
            write_image(os.path.join(root, "FlyingChairs", "data", f"{i + 1:05d}_img{j}.ppm"), (8, 6), seed=k, fmt="PPM")
            k += 1
        write_flo(os.path.join(root, "FlyingChairs", "data", f"{i + 1:05d}_flow.flo"), seed=10 + i)
    with open(os.path.join(root, "FlyingChairs", "FlyingChairs_train_val.txt"), "w") as f:
        f.write("1\n2\n1\n")
    for p in ("frames_cleanpass", "frames_finalpass"):
        for cam in ("left", "right"):
            for i in range(3):
                write_image(os.path.join(root, "FlyingThings3D", p, "TRAIN", "A", "0000", cam, f"{6 + i:04d}.png"),
                            (8, 6), seed=k)
                k += 1
    for direction, tag in (("into_future", "IntoFuture"), ("into_past", "IntoPast")):
        for cam in ("left", "right"):
            for i in range(3):
                write_pfm(os.path.join(root, "FlyingThings3D", "optical_flow", "TRAIN", "A", "0000", direction, cam,
                                       f"OpticalFlow{tag}_{6 + i:04d}_{cam[0].upper()}.pfm"), seed=k)
                k += 1
    for i in range(3):
        write_image(os.path.join(root, "hd1k", "hd1k_input", "image_2", f"000000_{i:04d}.png"), (8, 6), seed=k)
        write_flow_png16(os.path.join(root, "hd1k", "hd1k_flow_gt", "flow_occ", f"000000_{i:04d}.png"), seed=k)
        k += 1
    for j in (10, 11):
        write_image(os.path.join(root, "hd1k", "hd1k_challenge", "image_2", f"000000_{j}.png"), (8, 6), seed=k)
        k += 1


def make_lsun(root, classes=("bedroom_train", "church_outdoor_train", "test"), per_db=(3, 2, 2)):
    import io
    import lmdb
    k = 0
    for c, n in zip(classes, per_db):
        env = lmdb.open(os.path.join(makedirs(root), f"{c}_lmdb"), map_size=1 << 24)
        with env.begin(write=True) as txn:
            for i in range(n):
                buf = io.BytesIO()
                arr = np.random.default_rng(k).integers(0, 256, (6, 8, 3), dtype=np.uint8)
                Image.fromarray(arr).save(buf, format="JPEG")
                txn.put(f"{c}-{i:04x}".encode(), buf.getvalue())
                k += 1
        env.close()


# ---------------------------------------------------------------------------------------------
# stereo

def _png16(path, arr):
    makedirs(os.path.dirname(path))
    Image.fromarray(arr.astype(np.uint16)).save(path)


def make_stereo_datasets(root):
    rng = np.random.default_rng(RNG_SEED)
    k = [0]

    def img(path, fmt=None):
        k[0] += 1
        write_image(path, (8, 6), seed=k[0], fmt=fmt)

    def pfm(path):
        k[0] += 1
        write_pfm(path, seed=k[0], channels=1)
    for s in ("scene_a", "scene_b"):  # Carla
        d = os.path.join(root, "carla-highres", "trainingF", s)
        img(os.path.join(d, "im0.png")), img(os.path.join(d, "im1.png"))
        pfm(os.path.join(d, "disp0GT.pfm")), pfm(os.path.join(d, "disp1GT.pfm"))
    for split in ("training", "testing"):  # Kitti 2012 / 2015
        for i in range(2):
            img(os.path.join(root, "Kitti2012", split, "colored_0", f"{i:06d}_10.png"))
            img(os.path.join(root, "Kitti2012", split, "colored_1", f"{i:06d}_10.png"))
            img(os.path.join(root, "Kitti2015", split, "image_2", f"{i:06d}_10.png"))
            img(os.path.join(root, "Kitti2015", split, "image_3", f"{i:06d}_10.png"))
            if split == "training":
                _png16(os.path.join(root, "Kitti2012", split, "disp_noc", f"{i:06d}_10.png"),
                       rng.integers(0, 60000, (6, 8)))
                for side in ("0", "1"):
                    _png16(os.path.join(root, "Kitti2015", split, f"disp_occ_{side}", f"{i:06d}_10.png"),
                           rng.integers(0, 60000, (6, 8)))
    for split, scenes in (("train", ["Adirondack-perfect", "Piano-perfect", "Piano-imperfect"]),
                          ("test", ["Plants", "Hoops"])):  # Middlebury
        for s in scenes:
            d = os.path.join(root, "Middlebury2014", split, s)
            img(os.path.join(d, "im0.png")), img(os.path.join(d, "im1.png"))
            if split == "train":
                for n in ("disp0.pfm", "disp1.pfm"):
                    k[0] += 1
                    path = os.path.join(d, n)
                    write_pfm(path, seed=k[0], channels=1)
                    data = bytearray(open(path, "rb").read())
                    data[-4:] = np.array([np.inf], "<f4").tobytes()  # an unknown disparity
                    open(path, "wb").write(bytes(data))
    for s in ("shapenet", "reflective", "tree", "hole"):  # CREStereo
        for i in range(1 + (s == "tree")):
            d = os.path.join(root, "CREStereo", s)
            img(os.path.join(d, f"{i}_left.jpg"), "JPEG"), img(os.path.join(d, f"{i}_right.jpg"), "JPEG")
            for side in ("left", "right"):
                _png16(os.path.join(d, f"{i}_{side}.disp.png"), rng.integers(0, 4000, (6, 8)))
    import json  # FallingThings
    for d in (os.path.join(root, "FallingThings", "single", "obj", "scene"),
              os.path.join(root, "FallingThings", "mixed", "scene")):
        makedirs(d)
        with open(os.path.join(d, "_camera_settings.json"), "w") as f:
            json.dump({"camera_settings": [{"intrinsic_settings": {"fx": 768.16}}]}, f)
        for i in range(2):
            img(os.path.join(d, f"{i:06d}.left.jpg"), "JPEG"), img(os.path.join(d, f"{i:06d}.right.jpg"), "JPEG")
            for side in ("left", "right"):
                _png16(os.path.join(d, f"{i:06d}.{side}.depth.png"), rng.integers(100, 60000, (6, 8)))
    for variant, prefix in (("FlyingThings3D", ("TRAIN", "A", "0000")), ("Monkaa", ("a_rain",))):  # SceneFlow
        base = os.path.join(root, "SceneFlow", variant)
        for p in ("frames_cleanpass", "frames_finalpass"):
            for side in ("left", "right"):
                for i in range(2):
                    img(os.path.join(base, p, *prefix, side, f"{6 + i:04d}.png"))
        for side in ("left", "right"):
            for i in range(2):
                pfm(os.path.join(base, "disparity", *prefix, side, f"{6 + i:04d}.pfm"))
    base = os.path.join(root, "Sintel", "training")  # Sintel stereo
    for i in range(2):
        for p in ("final_left", "final_right", "clean_left", "clean_right"):
            img(os.path.join(base, p, "alley_1", f"frame_{i + 1:04d}.png"))
        write_image(os.path.join(base, "disparities", "alley_1", f"frame_{i + 1:04d}.png"), (8, 6), seed=70 + i)
        for m in ("occlusions", "outofframe"):
            makedirs(os.path.join(base, m, "alley_1"))
            Image.fromarray((rng.integers(0, 2, (6, 8)) * 255).astype(np.uint8)).save(
                os.path.join(base, m, "alley_1", f"frame_{i + 1:04d}.png"))
    for split in ("train", "test"):  # InStereo2k
        for s in ("000001", "000002"):
            d = os.path.join(root, "InStereo2k", split, s)
            img(os.path.join(d, "left.png")), img(os.path.join(d, "right.png"))
            for side in ("left", "right"):
                _png16(os.path.join(d, f"{side}_disp.png"), rng.integers(0, 60000, (6, 8)))
    for split_dir in ("two_view_training", "two_view_test"):  # ETH3D
        for s in ("delivery_area_1l", "electro_1s"):
            d = os.path.join(root, "ETH3D", split_dir, s)
            img(os.path.join(d, "im0.png")), img(os.path.join(d, "im1.png"))
            if split_dir == "two_view_training":
                gt = os.path.join(root, "ETH3D", "two_view_training_gt", s)
                pfm(os.path.join(gt, "disp0GT.pfm"))
                Image.fromarray((rng.integers(0, 2, (6, 8)) * 255).astype(np.uint8)).save(
                    os.path.join(gt, "mask0nocc.png"))
