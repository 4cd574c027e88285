"""Regenerate the seed corpora in ``tests/fuzz/corpus/`` (small, valid inputs of every format).

    python tests/fuzz/make_seeds.py

Needs torch (the reference writer of .pth files) and Pillow; the outputs are committed, so the fuzzers and the
replay test need neither this script nor torch.
"""
import gzip
import io
import json
import os
import pickle
import struct
import sys
import tarfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def _put(target: str, name: str, data: bytes) -> None:
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def _state():
    import torch
    g = torch.Generator().manual_seed(0)
    w = torch.randn(3, 2, generator=g)
    return {"conv.weight": w, "conv.bias": torch.zeros(3, dtype=torch.float16), "bn.num_batches": torch.tensor(7),
            "view": w[1:], "bf": torch.ones(2, dtype=torch.bfloat16)}


def checkpoints() -> None:
    import torch
    from safetensors.numpy import save as st_save
    sd = _state()
    buf = io.BytesIO()
    torch.save(sd, buf)
    _put("torch_zip", "state.pth", buf.getvalue())
    buf = io.BytesIO()
    torch.save({"model": {"w": sd["conv.weight"]}, "epoch": 3, "ema": None}, buf)
    _put("torch_zip", "nested.pth", buf.getvalue())
    buf = io.BytesIO()
    torch.save({"w": sd["conv.weight"], "b": sd["conv.bias"]}, buf, _use_new_zipfile_serialization=False)
    _put("torch_legacy", "legacy.pth", buf.getvalue())
    arrays = {"w": np.arange(6, dtype=np.float32).reshape(3, 2), "b": np.zeros(3, np.float16),
              "n": np.array(7, np.int64)}
    _put("safetensors", "model.safetensors", st_save(arrays, metadata={"format": "pt"}))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    _put("npz", "stored.npz", buf.getvalue())
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    _put("npz", "deflated.npz", buf.getvalue())


def images() -> None:
    from PIL import Image
    rgb = Image.fromarray((np.arange(4 * 5 * 3) * 7 % 256).astype(np.uint8).reshape(4, 5, 3))
    # selector byte: bit 0-2 read mode, bits 3-6 decoder, bit 7 EXIF orientation (see targets.image)
    for fmt, sel in (("JPEG", 0x08), ("PNG", 0x10), ("WEBP", 0x18), ("GIF", 0x20), ("BMP", 0x00), ("TIFF", 0x00)):
        for im, tag in ((rgb, "rgb"), (rgb.convert("L"), "l"), (rgb.convert("RGBA"), "rgba")):
            if fmt == "JPEG" and tag == "rgba":
                continue
            buf = io.BytesIO()
            im.save(buf, fmt)
            _put("image", f"{tag}.{fmt.lower()}", bytes([sel | 0x81]) + buf.getvalue())
    buf = io.BytesIO()
    Image.fromarray(np.arange(16, dtype=np.uint16).reshape(4, 4) * 4000).save(buf, "PNG")
    _put("image", "i16.png", bytes([0x10]) + buf.getvalue())
    buf = io.BytesIO()
    rgb.convert("P").save(buf, "PNG", transparency=0)
    _put("image", "palette.png", bytes([0x12]) + buf.getvalue())
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    rgb.save(buf, "JPEG", exif=exif)
    _put("image", "exif.jpeg", bytes([0x89]) + buf.getvalue())
    frames = [rgb, rgb.transpose(Image.FLIP_LEFT_RIGHT)]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    _put("image", "anim.gif", bytes([0x20]) + buf.getvalue())


def datasets() -> None:
    _put("idx", "images", struct.pack(">HBB3I", 0, 8, 3, 2, 2, 3) + bytes(range(12)))
    _put("idx", "labels", struct.pack(">HBBI", 0, 8, 1, 4) + bytes([1, 2, 3, 4]))
    _put("idx", "floats", struct.pack(">HBBI", 0, 13, 1, 2) + struct.pack(">2f", 1.5, -2.0))
    batch = {"batch_label": "training batch 1 of 5", "labels": [3, 1],
             "data": np.arange(2 * 12, dtype=np.uint8).reshape(2, 12), "filenames": ["a.png", "b.png"]}
    _put("dataset_pickle", "data_batch_1", pickle.dumps(batch, protocol=2))
    _put("dataset_pickle", "meta", pickle.dumps({"label_names": ["cat", "dog"], "num_vis": 3072}, protocol=2))

    def tar_bytes(mode, links=False):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode=mode) as t:
            for name, payload in (("d/a.txt", b"hello"), ("b.bin", bytes(range(40)))):
                info = tarfile.TarInfo(name)
                info.size = len(payload)
                t.addfile(info, io.BytesIO(payload))
            if links:
                for name, target, kind in (("d/l", "a.txt", tarfile.SYMTYPE), ("h", "b.bin", tarfile.LNKTYPE)):
                    info = tarfile.TarInfo(name)
                    info.type, info.linkname = kind, target
                    t.addfile(info)
        return buf.getvalue()

    names = ("a.tar", "a.tar.gz", "a.tgz", "a.tar.bz2", "a.tar.xz", "a.zip", "a.gz", "a.xz")
    _put("archive", "plain.tar", bytes([names.index("a.tar")]) + tar_bytes("w", links=True))
    _put("archive", "gz.tar", bytes([names.index("a.tar.gz")]) + tar_bytes("w:gz"))
    _put("archive", "xz.tar", bytes([names.index("a.tar.xz")]) + tar_bytes("w:xz"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("d/a.txt", b"hello")
        z.writestr("e/", b"")
    _put("archive", "a.zip", bytes([names.index("a.zip")]) + buf.getvalue())
    _put("archive", "a.gz", bytes([names.index("a.gz")]) + gzip.compress(b"x" * 50))


def manifest() -> None:
    sha = "a" * 64
    data = {"schema_version": 1, "weights": {
        "resnet18.tv_in1k": {"license": "bsd-3-clause", "sources": [
            {"kind": "hf_hub", "hub_id": "org/repo", "file": "model.safetensors", "sha256": sha, "size": 10,
             "format": "safetensors", "remap": None},
            {"kind": "url", "url": "https://example.org/resnet18-aaaaaaaa.pth", "hash_prefix": "aaaaaaaa",
             "sha256": sha, "size": None, "format": "torch_zip", "remap": None}]},
        "lite0.pkg": {"license": "apache-2.0", "notes": "x", "sources": [
            {"kind": "package", "package": "p", "module": "p", "path": "w/m.pth", "sha256": sha, "size": 3,
             "format": "torch_legacy", "remap": None}]}}}
    _put("manifest", "manifest.json", json.dumps(data, indent=1).encode())


def http() -> None:
    # byte 0: partial-file length / 9; then replies of 7 bytes each (see targets._reply)
    _put("http_resume", "fresh", bytes([0, 0, 0, 0x00, 0x08, 0, 0, 0]))
    _put("http_resume", "resume", bytes([30, 1, 17, 0x00, 0x08, 3, 0, 0]))
    _put("http_resume", "retry", bytes([0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x08, 0, 0, 0]))
    _put("http_resume", "garbled", bytes([50, 0x51, 3, 0, 4, 0, 0, 10]) + b"bytes 9-" + bytes([0, 0, 8, 0, 0, 0, 0]))


if __name__ == "__main__":
    for fn in (checkpoints, images, datasets, manifest, http):
        fn()
    sys.stdout.write("seeds written to %s\n" % CORPUS)
