"""torchvision.io image functions on flowvision.backend uint8 CHW tensors (codecs: Pillow)."""
import io as _io
import os
import struct
from enum import Enum
from typing import Any, List, Union

import numpy as np
from PIL import Image

__all__ = [
    "ImageReadMode", "read_file", "write_file", "decode_image", "read_image", "decode_jpeg", "decode_png",
    "decode_webp", "decode_gif", "encode_jpeg", "encode_png", "write_jpeg", "write_png",
]


class ImageReadMode(Enum):
    """How decoded images are converted: keep the file's channels, or force gray, gray+alpha, RGB or RGBA.

    torchvision's enum; the decoders also accept the member names as strings (``mode="RGB"``).
    """

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


def _fb():
    from flowvision import backend as fb

    return fb


def _is_tensor(x):
    return (type(x).__module__ or "").startswith("flowvision") and _fb().is_tensor(x)


def _to_numpy(x):
    if _is_tensor(x):
        return x.numpy() if not getattr(x, "requires_grad", False) else x.detach().numpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"Expected a Tensor, got {type(x)}")


def _parse_mode(mode):
    if isinstance(mode, str):
        try:
            return ImageReadMode[mode.upper()]
        except KeyError:
            raise ValueError(f"Unknown ImageReadMode {mode!r}; use one of {[m.name for m in ImageReadMode]}") from None
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode should be an ImageReadMode or a string, got {type(mode)}")
    return mode


# ----------------------------------------------------------------------------- files
def read_file(path: Union[str, os.PathLike]) -> Any:
    """Bytes of a file as a 1-D uint8 tensor.

    Raises:
        FileNotFoundError: no such file.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise RuntimeError(f"File {path!r} does not exist or is not a file")
    with open(path, "rb") as f:
        data = f.read()
    return _fb().from_numpy(np.frombuffer(bytearray(data), dtype=np.uint8))


def write_file(filename: Union[str, os.PathLike], data: Any) -> None:
    """Write a 1-D uint8 tensor (or array) of bytes to ``filename``.

    Raises:
        ValueError: ``data`` is not 1-D uint8.
    """
    arr = _to_numpy(data)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError(f"Input data should be a 1-dimensional uint8 tensor, got {arr.dtype} {arr.shape}")
    with open(os.fspath(filename), "wb") as f:
        f.write(arr.tobytes())


# ----------------------------------------------------------------------------- decode
def _bytes_of(data):
    arr = _to_numpy(data)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError(f"Expected a 1-dimensional uint8 tensor of encoded bytes, got {arr.dtype} {arr.shape}")
    if arr.size == 0:
        raise ValueError("Input tensor must not be empty")
    return arr.tobytes()


def _gray(rgb):
    """RGB -> gray like libpng's rgb_to_gray in torchvision (ITU-R 601 weights, 15-bit fixed point, truncated)."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(np.uint8)


def _exif_transpose(arr, orientation):
    if orientation in (2, 4, 5, 7):  # mirrored
        pass
    ops = {
        2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1], 4: lambda a: a[::-1],
        5: lambda a: np.swapaxes(a, 0, 1), 6: lambda a: np.swapaxes(a, 0, 1)[:, ::-1],
        7: lambda a: np.swapaxes(a, 0, 1)[::-1, ::-1], 8: lambda a: np.swapaxes(a, 0, 1)[::-1],
    }
    fn = ops.get(orientation)
    return fn(arr) if fn is not None else arr


# what Pillow's parsers raise on damaged bytes (a truncated GIF frame table gives IndexError, a bad TIFF tag
# ValueError or struct.error): all become the decoders' RuntimeError, as with torchvision's decoders
# what Pillow raises on damaged data (its TIFF reader raises TypeError for a frame that declares no dimensions;
# convert() asserts on a palette image whose palette is missing)
_DECODE_ERRORS = (OSError, EOFError, SyntaxError, ValueError, IndexError, TypeError, AssertionError, struct.error,
                  Image.DecompressionBombError)


def _decode_pil(data, mode, apply_exif_orientation, expect=None):
    try:
        im = Image.open(_io.BytesIO(data))
        if expect is not None and im.format not in expect:
            raise RuntimeError(f"Expected a {'/'.join(expect)} image, got {im.format}")
        orientation = im.getexif().get(0x0112, 1) if apply_exif_orientation else 1
        if im.format == "JPEG" and mode in (ImageReadMode.GRAY_ALPHA, ImageReadMode.RGB_ALPHA):
            raise RuntimeError(f"decode_jpeg: mode {mode.name} is not supported for JPEG images")
        if mode == ImageReadMode.GRAY and im.format == "JPEG" and im.mode in ("RGB", "YCbCr"):
            im.draft("L", im.size)  # libjpeg emits the Y channel, like torchvision
        im.load()
    except _DECODE_ERRORS as e:
        raise RuntimeError(f"Could not decode the image: {e}") from e
    arr = _convert(im, mode)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    arr = _exif_transpose(arr, orientation)
    return np.ascontiguousarray(np.moveaxis(arr, -1, 0))


def _convert(im, mode):
    m = im.mode
    if m == "1":
        im, m = im.convert("L"), "L"
    if m in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(im).astype(np.int32)  # the backend has no uint16: 16-bit images come back as int32
        if mode in (ImageReadMode.UNCHANGED, ImageReadMode.GRAY):
            return arr
        raise RuntimeError(f"Mode {mode.name} is not supported for 16-bit images")
    if mode == ImageReadMode.UNCHANGED:
        if m in ("L", "LA", "RGB", "RGBA"):
            return np.asarray(im)
        if m == "P" and im.format == "PNG":
            return np.asarray(im)  # palette indices, like libpng without expansion
        if m == "CMYK":
            return np.asarray(im)
        return np.asarray(im.convert("RGBA" if "transparency" in im.info or m == "PA" else "RGB"))
    if mode == ImageReadMode.RGB:
        return np.asarray(im.convert("RGB"))
    if mode == ImageReadMode.RGB_ALPHA:
        return np.asarray(im.convert("RGBA"))
    # gray modes
    if m in ("L", "LA"):
        base = im
    else:
        base = im.convert("RGBA") if (m in ("RGBA", "PA") or "transparency" in im.info) else im.convert("RGB")
    a = np.asarray(base)
    if base.mode in ("L", "LA"):
        gray = a if a.ndim == 2 else a[..., 0]
        alpha = a[..., 1] if base.mode == "LA" else None
    else:
        gray = _gray(a)
        alpha = a[..., 3] if base.mode == "RGBA" else None
    if mode == ImageReadMode.GRAY:
        return gray
    if alpha is None:
        alpha = np.full(gray.shape, 255, np.uint8)
    return np.stack([gray, alpha], -1)


def decode_image(input: Union[Any, str, os.PathLike], mode: Union[ImageReadMode, str] = ImageReadMode.UNCHANGED,
                 apply_exif_orientation: bool = False) -> Any:
    """Decode JPEG / PNG / GIF / WEBP / BMP / TIFF bytes (a 1-D uint8 tensor, or a path) into uint8 CHW.

    Args:
        input: encoded bytes as a 1-D uint8 tensor/array, or a file path.
        mode: channel conversion (:class:`ImageReadMode` or its name).
        apply_exif_orientation: rotate/flip by the EXIF orientation tag.

    Returns:
        A (C, H, W) uint8 tensor.

    Raises:
        ValueError: the bytes are not a readable image, or the mode is unknown.

    Examples:
        >>> from flowvision.io import decode_image, encode_png
        >>> from flowvision import backend as flow
        >>> img = flow.zeros(3, 4, 5, dtype=flow.uint8)
        >>> decode_image(encode_png(img)).shape
        flowvision.Size([3, 4, 5])
    """
    if isinstance(input, (str, os.PathLike)):
        input = read_file(input)
    mode = _parse_mode(mode)
    out = _decode_pil(_bytes_of(input), mode, apply_exif_orientation)
    return _fb().from_numpy(out)


def read_image(path: Union[str, os.PathLike], mode: Union[ImageReadMode, str] = ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> Any:
    """Read and decode an image file into a (C, H, W) uint8 tensor (see :func:`decode_image`).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a readable image.
    """
    return decode_image(read_file(path), mode, apply_exif_orientation=apply_exif_orientation)


def decode_jpeg(input: Union[Any, List[Any]], mode: Union[ImageReadMode, str] = ImageReadMode.UNCHANGED,
                device: str = "cpu", apply_exif_orientation: bool = False) -> Any:
    """Decode JPEG bytes (or a list of them) into (C, H, W) uint8 tensors.

    Raises:
        ValueError: not JPEG data, or ``device`` is not ``"cpu"``.
    """
    if str(device) != "cpu":
        raise ValueError("flowvision decodes on the CPU only (device='cpu')")
    mode = _parse_mode(mode)
    if mode in (ImageReadMode.GRAY_ALPHA, ImageReadMode.RGB_ALPHA):
        raise RuntimeError(f"decode_jpeg: mode {mode.name} is not supported for JPEG images")
    if isinstance(input, list):
        if not input:
            raise ValueError("Input list must contain at least one element")
        return [decode_jpeg(x, mode, device, apply_exif_orientation) for x in input]
    return _fb().from_numpy(_decode_pil(_bytes_of(input), mode, apply_exif_orientation, expect=("JPEG", "MPO")))


def decode_png(input: Any, mode: Union[ImageReadMode, str] = ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> Any:
    """Decode PNG bytes into a (C, H, W) uint8 tensor.

    Raises:
        ValueError: not PNG data.
    """
    mode = _parse_mode(mode)
    return _fb().from_numpy(_decode_pil(_bytes_of(input), mode, apply_exif_orientation, expect=("PNG",)))


def decode_webp(input: Any, mode: Union[ImageReadMode, str] = ImageReadMode.UNCHANGED) -> Any:
    """Decode WEBP bytes into a (C, H, W) uint8 tensor.

    Raises:
        ValueError: not WEBP data.
    """
    mode = _parse_mode(mode)
    return _fb().from_numpy(_decode_pil(_bytes_of(input), mode, False, expect=("WEBP",)))


def decode_gif(input: Any) -> Any:
    """All frames as (N, C, H, W) uint8 (or (C, H, W) for a single frame), RGB.

    Raises:
        RuntimeError: not GIF data, or damaged data.
    """
    data = _bytes_of(input)
    frames = []
    try:
        im = Image.open(_io.BytesIO(data))
        if im.format != "GIF":
            raise RuntimeError(f"Expected a GIF image, got {im.format}")
        # a damaged frame fails in seek/convert, after the header parsed: the same clear error as a bad header
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i)
            # Pillow checks the pixel count at open() only; a later frame may declare a larger canvas
            # (65531 x 1531 in a 300-byte file): the same decompression-bomb limit applies to every frame
            limit = Image.MAX_IMAGE_PIXELS
            if limit and im.size[0] * im.size[1] > 2 * limit:
                raise Image.DecompressionBombError(f"frame {i} is {im.size[0]} x {im.size[1]} pixels, more than "
                                                   f"twice PIL.Image.MAX_IMAGE_PIXELS ({limit})")
            frames.append(np.moveaxis(np.asarray(im.convert("RGB")), -1, 0))
    except _DECODE_ERRORS as e:
        raise RuntimeError(f"Could not decode the image: {e}") from e
    out = np.stack(frames) if len(frames) > 1 else frames[0]
    return _fb().from_numpy(np.ascontiguousarray(out))


# ----------------------------------------------------------------------------- encode
def _image_for_encode(input, allow_alpha):
    arr = _to_numpy(input)
    if arr.dtype != np.uint8:
        raise TypeError(f"Input tensor dtype should be uint8, got {arr.dtype}")
    if arr.ndim != 3:
        raise ValueError(f"Input data should be a 3-dimensional tensor (C, H, W), got {arr.ndim} dimensions")
    c = arr.shape[0]
    if c not in ((1, 3) if not allow_alpha else (1, 2, 3, 4)):
        raise ValueError(f"The number of channels should be {'1 or 3' if not allow_alpha else '1, 2, 3 or 4'}, got {c}")
    if arr.shape[1] == 0 or arr.shape[2] == 0:
        raise ValueError("Cannot encode an empty image")
    hwc = np.ascontiguousarray(np.moveaxis(arr, 0, -1))
    return Image.fromarray(hwc[:, :, 0] if c == 1 else hwc, mode={1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[c])


def _encoded(im, fmt, **kw):
    buf = _io.BytesIO()
    im.save(buf, fmt, **kw)
    return _fb().from_numpy(np.frombuffer(bytearray(buf.getvalue()), dtype=np.uint8))


def encode_jpeg(input: Union[Any, List[Any]], quality: int = 75) -> Any:
    """Encode a (C, H, W) uint8 image (or a list of them) as JPEG bytes (1-D uint8 tensors).

    Raises:
        ValueError: ``quality`` outside 1..100, or a wrong shape.
        TypeError: the image is not uint8.
    """
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, list):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is passed")
        return [encode_jpeg(x, quality) for x in input]
    return _encoded(_image_for_encode(input, False), "JPEG", quality=int(quality))


def encode_png(input: Any, compression_level: int = 6) -> Any:
    """Encode a (C, H, W) uint8 image (1 to 4 channels) as PNG bytes (a 1-D uint8 tensor).

    Raises:
        ValueError: ``compression_level`` outside 0..9, or a wrong shape.
        TypeError: the image is not uint8.
    """
    if compression_level < 0 or compression_level > 9:
        raise ValueError("Compression level should be between 0 and 9")
    return _encoded(_image_for_encode(input, True), "PNG", compress_level=int(compression_level))


def write_jpeg(input: Any, filename: Union[str, os.PathLike], quality: int = 75) -> None:
    """Encode a (C, H, W) uint8 image as JPEG (:func:`encode_jpeg`) and write it to ``filename``."""
    write_file(filename, encode_jpeg(input, quality))


def write_png(input: Any, filename: Union[str, os.PathLike], compression_level: int = 6) -> None:
    """Encode a (C, H, W) uint8 image as PNG (:func:`encode_png`) and write it to ``filename``."""
    write_file(filename, encode_png(input, compression_level))
