"""flowvision.io vs torchvision.io (0.29): decode/encode parity on JPEG/PNG, modes, EXIF orientation."""
import io
import warnings

import numpy as np
import pytest
import torch
import torchvision.io as tio
from PIL import Image

import flowvision.backend as fb
import flowvision.io as fio

from test_transforms_helpers import assert_u8_close, rand_u8, to_np

warnings.filterwarnings("ignore", category=DeprecationWarning)  # torchvision 0.29 deprecates its codecs
warnings.filterwarnings("ignore", category=UserWarning)

MODES = ["UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA"]


def _encode(a, fmt, pil_mode, **kw):
    b = io.BytesIO()
    Image.fromarray(a).convert(pil_mode).save(b, fmt, **kw)
    return b.getvalue()


def _both(data):
    return fb.from_numpy(np.frombuffer(bytearray(data), np.uint8)), torch.frombuffer(bytearray(data), dtype=torch.uint8)


CASES = [("JPEG", "RGB"), ("JPEG", "L"), ("PNG", "RGB"), ("PNG", "L"), ("PNG", "RGBA"), ("PNG", "LA"), ("PNG", "P")]


@pytest.mark.parametrize("fmt,pil_mode", CASES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("hw", [(1, 1), (61, 83)])
def test_decode_image(fmt, pil_mode, mode, hw):
    data = _encode(rand_u8(*hw, smooth=True), fmt, pil_mode)
    ours_in, ref_in = _both(data)
    if pil_mode == "P" and mode in ("GRAY_ALPHA", "RGB_ALPHA"):
        # torchvision 0.29 returns scrambled channels for palette PNGs without tRNS in the alpha modes
        # (documented deviation); we return the palette colours plus an opaque alpha channel.
        ours = to_np(fio.decode_image(ours_in, mode=mode))
        rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        assert (ours[-1] == 255).all()
        if mode == "RGB_ALPHA":
            np.testing.assert_array_equal(np.moveaxis(ours[:3], 0, -1), rgb)
        return
    try:
        ref = tio.decode_image(ref_in, mode=mode).numpy()
    except RuntimeError:
        with pytest.raises(RuntimeError):
            fio.decode_image(ours_in, mode=mode)
        return
    ours = fio.decode_image(ours_in, mode=getattr(fio.ImageReadMode, mode))
    assert fb.is_tensor(ours)
    assert_u8_close(to_np(ours), ref)
    # string modes and the format-specific decoders agree
    dec = fio.decode_jpeg if fmt == "JPEG" else fio.decode_png
    np.testing.assert_array_equal(to_np(dec(ours_in, mode=mode.lower())), to_np(ours))


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_exif_orientation(tmp_path, orientation, fmt):
    a = rand_u8(20, 31, smooth=True)
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = _encode(a, fmt, "RGB", exif=exif)
    path = tmp_path / f"x.{fmt.lower()}"
    path.write_bytes(data)
    for apply in (False, True):
        ref = tio.read_image(str(path), apply_exif_orientation=apply).numpy()
        ours = to_np(fio.read_image(str(path), apply_exif_orientation=apply))
        assert_u8_close(ours, ref)


def test_read_write_file(tmp_path):
    data = bytes(range(256)) * 3
    p = tmp_path / "f.bin"
    p.write_bytes(data)
    t = fio.read_file(str(p))
    np.testing.assert_array_equal(to_np(t), tio.read_file(str(p)).numpy())
    fio.write_file(str(tmp_path / "g.bin"), t)
    assert (tmp_path / "g.bin").read_bytes() == data
    with pytest.raises(RuntimeError):
        fio.read_file(str(tmp_path / "missing.png"))


@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("quality", [10, 75, 95])
def test_encode_jpeg(c, quality):
    a = np.moveaxis(rand_u8(33, 47, c=c, smooth=True), -1, 0).copy()
    ours = fio.encode_jpeg(fb.from_numpy(a), quality=quality)
    ref = tio.encode_jpeg(torch.from_numpy(a), quality=quality)
    dec_ours = tio.decode_jpeg(torch.from_numpy(to_np(ours).copy())).numpy()
    dec_ref = tio.decode_jpeg(ref).numpy()
    assert_u8_close(dec_ours, dec_ref)
    batch = fio.encode_jpeg([fb.from_numpy(a), fb.from_numpy(a)], quality=quality)
    assert len(batch) == 2


@pytest.mark.parametrize("c", [1, 2, 3, 4])
@pytest.mark.parametrize("level", [0, 6, 9])
def test_encode_png_roundtrip(tmp_path, c, level):
    a = np.moveaxis(rand_u8(17, 29, c=c), -1, 0).copy()
    ours = fio.encode_png(fb.from_numpy(a), compression_level=level)
    np.testing.assert_array_equal(tio.decode_png(torch.from_numpy(to_np(ours).copy())).numpy(), a)
    fio.write_png(fb.from_numpy(a), str(tmp_path / "x.png"), level)
    np.testing.assert_array_equal(tio.read_image(str(tmp_path / "x.png")).numpy(), a)
    fio.write_jpeg(fb.from_numpy(a[:1]), str(tmp_path / "x.jpg"))
    assert tio.read_image(str(tmp_path / "x.jpg")).shape == (1, 17, 29)


def test_16bit_png():
    a = (np.arange(12 * 10, dtype=np.uint16).reshape(12, 10) * 500)
    b = io.BytesIO()
    Image.fromarray(a).save(b, "PNG")
    ours, ref = _both(b.getvalue())
    r = tio.decode_png(ref).numpy()
    o = to_np(fio.decode_png(ours))
    assert o.dtype == np.int32  # documented: the backend has no uint16
    np.testing.assert_array_equal(o, r.astype(np.int32))


def test_gif_and_webp():
    a = rand_u8(10, 12)
    b = io.BytesIO()
    Image.fromarray(a).save(b, "WEBP", lossless=True)
    ours, ref = _both(b.getvalue())
    np.testing.assert_array_equal(to_np(fio.decode_webp(ours)), tio.decode_webp(ref).numpy())
    b = io.BytesIO()
    frames = [Image.fromarray(a).convert("P"), Image.fromarray(a[::-1].copy()).convert("P")]
    frames[0].save(b, "GIF", save_all=True, append_images=frames[1:])
    ours, ref = _both(b.getvalue())
    np.testing.assert_array_equal(to_np(fio.decode_gif(ours)), tio.decode_gif(ref).numpy())


def test_bad_inputs():
    good = fb.from_numpy(np.zeros((3, 4, 5), np.uint8))
    with pytest.raises(TypeError):
        fio.encode_jpeg(fb.from_numpy(np.zeros((3, 4, 5), np.float32)))
    with pytest.raises(ValueError):
        fio.encode_jpeg(good, quality=0)
    with pytest.raises(ValueError):
        fio.encode_png(good, compression_level=10)
    with pytest.raises(ValueError):
        fio.encode_jpeg(fb.from_numpy(np.zeros((2, 4, 5), np.uint8)))
    with pytest.raises(ValueError):
        fio.encode_png(fb.from_numpy(np.zeros((3, 0, 5), np.uint8)))
    with pytest.raises(RuntimeError):
        fio.decode_image(fb.from_numpy(np.frombuffer(b"not an image", np.uint8).copy()))
    with pytest.raises(ValueError):
        fio.decode_image(fb.from_numpy(np.zeros(0, np.uint8)))
    with pytest.raises(ValueError):
        fio.decode_image(good)
    with pytest.raises(TypeError):
        fio.decode_image(b"\x89PNG")
    with pytest.raises(ValueError):
        fio.decode_image(fb.from_numpy(np.zeros(4, np.uint8)), mode="BGR")
    png = _encode(rand_u8(4, 4), "PNG", "RGB")
    with pytest.raises(RuntimeError):
        fio.decode_jpeg(fb.from_numpy(np.frombuffer(bytearray(png), np.uint8)))
