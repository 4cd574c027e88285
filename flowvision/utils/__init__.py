"""torchvision.utils equivalents: make_grid, save_image, draw_bounding_boxes, draw_segmentation_masks,
draw_keypoints, flow_to_image — on flowvision.backend tensors (numpy arrays are accepted too)."""
import math
import pathlib
import warnings
from typing import Any, BinaryIO, List, Optional, Sequence, Tuple, Union

import numpy as np
from PIL import Image, ImageColor, ImageDraw, ImageFont

__all__ = ["make_grid", "save_image", "draw_bounding_boxes", "draw_segmentation_masks", "draw_keypoints",
           "flow_to_image"]


def _fb():
    from flowvision import backend as fb

    return fb


def _is_tensor(x):
    return (type(x).__module__ or "").startswith("flowvision") and _fb().is_tensor(x)


def _np(x, name="tensor"):
    if _is_tensor(x):
        if getattr(x, "requires_grad", False):
            x = x.detach()
        try:
            from flowvision.backend import bfloat16
            if x.dtype == bfloat16:
                x = x.float()
        except ImportError:  # pragma: no cover
            pass
        return x.numpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{name}: Tensor expected, got {type(x)}")


def _wrap(a):
    return _fb().from_numpy(np.ascontiguousarray(a))


# ----------------------------------------------------------------------------- grids
def make_grid(tensor: Any, nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: Optional[Tuple[float, float]] = None, scale_each: bool = False,
              pad_value: float = 0.0) -> Any:
    """Arrange a (B, C, H, W) batch (or a list of (C, H, W) images) into one (C, H', W') grid image.

    Args:
        tensor: a (B, C, H, W) tensor or array, or a list of (C, H, W) images of one size.
        nrow: images per grid row.
        padding: pixels between images (and around the grid).
        normalize: shift each value range to [0, 1] (by ``value_range``, else the min/max).
        value_range: ``(min, max)`` used by ``normalize``.
        scale_each: normalise every image by its own min/max instead of the batch's.
        pad_value: value of the padding pixels.

    Returns:
        A (C, H', W') tensor (torchvision's layout: 1-channel images become 3-channel).

    Raises:
        ValueError: an empty list, or images of different sizes.

    Examples:
        >>> from flowvision import backend as flow
        >>> from flowvision.utils import make_grid
        >>> make_grid(flow.zeros(4, 3, 8, 8), nrow=2, padding=1).shape
        flowvision.Size([3, 19, 19])
    """
    if isinstance(tensor, (list, tuple)):
        if not tensor:
            raise ValueError("make_grid needs at least one image")
        arrs = [_np(t, "make_grid") for t in tensor]
        a = np.stack(arrs, 0)
    else:
        a = _np(tensor, "make_grid")
    if a.ndim == 2:
        a = a[None]
    if a.ndim == 3:
        if a.shape[0] == 1:
            a = np.concatenate([a, a, a], 0)
        a = a[None]
    if a.ndim != 4:
        raise ValueError(f"make_grid expects a (B, C, H, W) batch, got shape {a.shape}")
    if a.shape[1] == 1:
        a = np.concatenate([a, a, a], 1)
    if normalize is True:
        a = a.copy()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

        def norm_range(t):
            low, high = (value_range if value_range is not None else (float(t.min()), float(t.max())))
            np.clip(t, low, high, out=t)
            t -= t.dtype.type(low)
            t /= t.dtype.type(max(high - low, 1e-5))

        if scale_each is True:
            for t in a:
                norm_range(t)
        else:
            norm_range(a)
    if a.shape[0] == 1:
        return _wrap(a[0])
    nmaps = a.shape[0]
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(a.shape[2] + padding), int(a.shape[3] + padding)
    c = a.shape[1]
    grid = np.full((c, height * ymaps + padding, width * xmaps + padding), pad_value, dtype=a.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = a[k]
            k += 1
    return _wrap(grid)


def save_image(tensor: Any, fp: Union[str, pathlib.Path, BinaryIO], format: Optional[str] = None,
               **kwargs: Any) -> None:
    """Save a tensor (or batch / list, through ``make_grid``) with values in [0, 1] as an image file.

    Args:
        tensor: a (C, H, W) image, a (B, C, H, W) batch or a list of images, float in [0, 1].
        fp: a file name or a binary file object.
        format: the image format (PIL's name); default from the file name's extension.
        **kwargs: passed to :func:`make_grid` (``nrow``, ``padding``, ``normalize``, ...).

    Raises:
        ValueError: as :func:`make_grid`, or PIL cannot tell the format.
    """
    grid = _np(make_grid(tensor, **kwargs))
    nd = grid.astype(np.float32) * np.float32(255)
    nd += np.float32(0.5)
    np.clip(nd, 0, 255, out=nd)
    nd = np.ascontiguousarray(np.moveaxis(nd.astype(np.uint8), 0, -1))
    im = Image.fromarray(nd[:, :, 0] if nd.shape[2] == 1 else nd)
    if isinstance(fp, pathlib.Path):
        fp = str(fp)
    im.save(fp, format=format)


# ----------------------------------------------------------------------------- drawing
def _palette(n):
    p = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1], dtype=np.int64)
    return [tuple(int(v) for v in (i * p) % 255) for i in range(n)]


def _parse_colors(colors, num_objects, floating=False):
    if colors is None:
        colors = _palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(
                f"Number of colors must be equal or larger than the number of objects, but got {len(colors)} < "
                f"{num_objects}."
            )
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got {colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else tuple(c) for c in colors]
    if floating:
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def _check_image(a, allow_gray):
    if a.dtype != np.uint8 and a.dtype.kind != "f":
        raise ValueError(f"The image dtype must be uint8 or float, got {a.dtype}")
    if a.ndim != 3:
        raise ValueError("Pass individual images, not batches")
    if allow_gray and a.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")
    if not allow_gray and a.shape[0] != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")


def _float_to_u8(a):
    return (a * a.dtype.type(255 + 1.0 - 1e-3)).astype(np.uint8)


def _u8_to_float(a, dtype):
    return a.astype(dtype) * dtype(1.0 / 255)


class _Draw(ImageDraw.ImageDraw):
    """ImageDraw plus the dashed-first-edge polygon torchvision uses for rotated (8-coordinate) boxes."""

    def oriented_rectangle(self, xy, fill=None, outline=None, width=1):
        self.dashed_line(((xy[0], xy[1]), (xy[2], xy[3])), width=width, fill=outline)
        n = len(xy)
        for i in range(2, n, 2):
            self.line(((xy[i], xy[i + 1]), (xy[(i + 2) % n], xy[(i + 3) % n])), width=width, fill=outline)
        self.polygon(xy, fill=fill, outline=None, width=0)

    def dashed_line(self, xy, fill=None, width=0, joint=None, dash_length=5, space_length=5):
        dash = True
        for (x1, y1), (x2, y2) in zip(xy[:-1], xy[1:]):
            remaining = math.hypot(x2 - x1, y2 - y1)
            angle = math.atan2(y2 - y1, x2 - x1)
            while remaining > 0:
                step = min(remaining, dash_length if dash else space_length)
                ex, ey = x1 + math.cos(angle) * step, y1 + math.sin(angle) * step
                if dash:
                    self.line([(x1, y1), (ex, ey)], fill, width, joint)
                remaining -= step
                x1, y1 = ex, ey
                dash = not dash


def draw_bounding_boxes(image: Any, boxes: Any, labels: Optional[List[str]] = None, colors: Any = None,
                        fill: bool = False, width: int = 1, font: Optional[str] = None,
                        font_size: Optional[int] = None, label_colors: Any = None,
                        label_background_colors: Any = None, fill_labels: bool = False) -> Any:
    """Draw (N, 4) xyxy boxes (or (N, 8) rotated corner boxes) on a uint8/float (C, H, W) image.

    Args:
        image: a (3, H, W) or (1, H, W) uint8 (or float in [0, 1]) tensor or array; it is not modified.
        boxes: (N, 4) ``x1, y1, x2, y2`` in pixels, or (N, 8) corner points of rotated boxes.
        labels: one text per box, drawn at its top-left corner.
        colors: one colour for all boxes or one per box (names, ``"#rrggbb"`` or RGB tuples); default a palette.
        fill: fill the boxes semi-transparently.
        width: outline width in pixels.
        font: a TrueType font file for the labels (default PIL's built-in font).
        font_size: size for ``font``.
        label_colors: text colours (default: the box colours).
        label_background_colors: colours of a filled rectangle behind each label.
        fill_labels: draw that rectangle.

    Returns:
        A new (C, H, W) uint8 tensor with the boxes drawn.

    Raises:
        TypeError: ``image`` is not a tensor or array.
        ValueError: a wrong shape or dtype, or a box with ``x2 < x1`` or ``y2 < y1``.

    Examples:
        >>> from flowvision import backend as flow
        >>> from flowvision.utils import draw_bounding_boxes
        >>> img = flow.zeros(3, 20, 20, dtype=flow.uint8)
        >>> out = draw_bounding_boxes(img, flow.tensor([[2., 2., 10., 10.]]), colors="red")
        >>> out[:, 2, 5].tolist()
        [255, 0, 0]
    """
    if not (_is_tensor(image) or isinstance(image, np.ndarray)):
        raise TypeError(f"Tensor expected, got {type(image)}")
    a = _np(image)
    _check_image(a, allow_gray=True)
    b = _np(boxes, "boxes")
    if b.ndim != 2 or b.shape[-1] not in (4, 8):
        raise ValueError(f"boxes should have shape (N, 4) or (N, 8), got {tuple(b.shape)}")
    if b.shape[-1] == 4 and ((b[:, 0] > b[:, 2]).any() or (b[:, 1] > b[:, 3]).any()):
        raise ValueError(
            "Boxes need to be in (xmin, ymin, xmax, ymax) format. Use torchvision.ops.box_convert to convert them"
        )
    n = b.shape[0]
    if n == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * n  # type: ignore[list-item]  # no text for any box
    elif len(labels) != n:
        raise ValueError(
            f"Number of boxes ({n}) and labels ({len(labels)}) mismatch. Please specify labels for each box."
        )
    colors = _parse_colors(colors, n)
    label_colors = (_parse_colors(label_colors if label_colors else "black", n) if (label_colors or fill_labels)
                    else list(colors))
    label_bg = (_parse_colors(label_background_colors, n) if (fill_labels and label_background_colors)
                else list(colors))
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    if a.shape[0] == 1:
        a = np.tile(a, (3, 1, 1))
    orig_dtype = a.dtype
    if orig_dtype.kind == "f":
        a = _float_to_u8(a)
    pil = Image.fromarray(np.ascontiguousarray(np.moveaxis(a, 0, -1)))
    draw = _Draw(pil, "RGBA") if fill else _Draw(pil)
    for bbox, color, label, lc, lbg in zip(b.astype(np.int64).tolist(), colors, labels, label_colors, label_bg):
        method = draw.oriented_rectangle if len(bbox) > 4 else draw.rectangle
        method(bbox, width=width, outline=color, fill=(color + (100,)) if fill else None)
        if label is not None:
            margin = width + 1
            if fill_labels:
                left, top, right, bottom = draw.textbbox((bbox[0] + margin, bbox[1] + margin), label, font=txt_font)
                draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=lbg)
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=lc, font=txt_font)
    out = np.moveaxis(np.asarray(pil), -1, 0)
    if orig_dtype.kind == "f":
        out = _u8_to_float(out, orig_dtype.type)
    return _wrap(out)


def draw_segmentation_masks(image: Any, masks: Any, alpha: float = 0.8, colors: Any = None) -> Any:
    """Overlay boolean masks ((N, H, W) or (H, W)) on an RGB (3, H, W) uint8/float image.

    Args:
        image: a (3, H, W) uint8 (or float in [0, 1]) tensor or array; it is not modified.
        masks: boolean (N, H, W) or (H, W) masks of the image's size.
        alpha: opacity of the masks (0 = invisible, 1 = opaque).
        colors: one colour for all masks or one per mask; default a palette.

    Returns:
        A new tensor of the image's dtype with the masks blended in.

    Raises:
        TypeError: ``image`` is not a tensor or array.
        ValueError: wrong shapes, a non-boolean mask, or too few colours.

    Examples:
        >>> from flowvision import backend as flow
        >>> from flowvision.utils import draw_segmentation_masks
        >>> img = flow.zeros(3, 20, 20, dtype=flow.uint8)
        >>> draw_segmentation_masks(img, flow.ones(20, 20, dtype=flow.bool), alpha=1.0, colors="blue")[:, 0, 0].tolist()
        [0, 0, 255]
    """
    if not (_is_tensor(image) or isinstance(image, np.ndarray)):
        raise TypeError(f"The image must be a tensor, got {type(image)}")
    a = _np(image)
    _check_image(a, allow_gray=False)
    m = _np(masks, "masks")
    if m.ndim == 2:
        m = m[None]
    if m.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if m.dtype != np.bool_:
        raise ValueError(f"The masks must be of dtype bool. Got {m.dtype}")
    if m.shape[-2:] != a.shape[-2:]:
        raise ValueError("The image and the masks must have the same height and width")
    n = m.shape[0]
    if n == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    floating = a.dtype.kind == "f"
    colors = [np.asarray(c, dtype=a.dtype) for c in _parse_colors(colors, n, floating)]
    drawn = np.moveaxis(a, 0, -1).copy()
    for mask, color in zip(m, colors):
        drawn[mask] = color
    drawn[m.sum(0) > 1] = 0
    wdt = a.dtype.type if floating else np.float32
    out = a.astype(wdt) * wdt(1 - alpha) + np.moveaxis(drawn, -1, 0).astype(wdt) * wdt(alpha)
    return _wrap(out.astype(a.dtype))


def draw_keypoints(image: Any, keypoints: Any, connectivity: Optional[Sequence[Tuple[int, int]]] = None,
                   colors: Any = None, radius: int = 2, width: int = 3, visibility: Any = None) -> Any:
    """Draw (N, K, 2) keypoints (and optional skeleton ``connectivity``) on an RGB (3, H, W) image.

    Args:
        image: a (3, H, W) uint8 (or float) tensor or array; it is not modified.
        keypoints: (N, K, 2) ``x, y`` pixel positions of K keypoints of N instances.
        connectivity: pairs of keypoint indices joined by a line.
        colors: one colour for all keypoints.
        radius: keypoint radius in pixels.
        width: line width of the connections.
        visibility: (N, K) booleans; invisible keypoints and their lines are not drawn.

    Returns:
        A new (3, H, W) uint8 tensor.

    Raises:
        TypeError: ``image`` is not a tensor or array.
        ValueError: wrong shapes or dtypes.
    """
    if not (_is_tensor(image) or isinstance(image, np.ndarray)):
        raise TypeError(f"The image must be a tensor, got {type(image)}")
    a = _np(image)
    _check_image(a, allow_gray=False)
    k = _np(keypoints, "keypoints")
    if k.ndim != 3:
        raise ValueError("keypoints must be of shape (num_instances, K, 2)")
    vis = np.ones(k.shape[:-1], bool) if visibility is None else _np(visibility, "visibility")
    if vis.ndim == 3:
        vis = vis[..., 0]
    if vis.ndim != 2:
        raise ValueError(f"visibility must be of shape (num_instances, K). Got ndim={vis.ndim}")
    if vis.shape != k.shape[:-1]:
        raise ValueError(
            "keypoints and visibility must have the same dimensionality for num_instances and K. "
            f"Got visibility.shape={vis.shape} and keypoints.shape={k.shape}"
        )
    orig_dtype = a.dtype
    if orig_dtype.kind == "f":
        a = _float_to_u8(a)
    pil = Image.fromarray(np.ascontiguousarray(np.moveaxis(a, 0, -1)))
    draw = ImageDraw.Draw(pil)
    for inst, vis_inst in zip(k.astype(np.int64).tolist(), vis.astype(bool).tolist()):
        for pt, v in zip(inst, vis_inst):  # (x, y) or (x, y, score) rows, as torchvision reads them
            if v:
                x, y = pt[0], pt[1]
                draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors, outline=None, width=0)
        if connectivity:
            for i, j in connectivity:
                if not (vis_inst[i] and vis_inst[j]):
                    continue
                draw.line(((inst[i][0], inst[i][1]), (inst[j][0], inst[j][1])), width=width)
    out = np.moveaxis(np.asarray(pil), -1, 0)
    if orig_dtype.kind == "f":
        out = _u8_to_float(out, orig_dtype.type)
    return _wrap(out)


# ----------------------------------------------------------------------------- optical flow
def _colorwheel():
    ry, yg, gc, cb, bm, mr = 15, 6, 4, 11, 13, 6
    wheel = np.zeros((ry + yg + gc + cb + bm + mr, 3), np.float32)
    ramp = lambda n: np.floor(255 * np.arange(n, dtype=np.float32) / n)  # noqa: E731
    c = 0
    wheel[c:c + ry, 0], wheel[c:c + ry, 1] = 255, ramp(ry)
    c += ry
    wheel[c:c + yg, 0], wheel[c:c + yg, 1] = 255 - ramp(yg), 255
    c += yg
    wheel[c:c + gc, 1], wheel[c:c + gc, 2] = 255, ramp(gc)
    c += gc
    wheel[c:c + cb, 1], wheel[c:c + cb, 2] = 255 - ramp(cb), 255
    c += cb
    wheel[c:c + bm, 2], wheel[c:c + bm, 0] = 255, ramp(bm)
    c += bm
    wheel[c:c + mr, 2], wheel[c:c + mr, 0] = 255 - ramp(mr), 255
    return wheel


def flow_to_image(flow: Any) -> Any:
    """(2, H, W) or (N, 2, H, W) float32 flow -> uint8 RGB visualisation (Middlebury colour wheel).

    Args:
        flow: optical flow, float32, (2, H, W) or (N, 2, H, W).

    Returns:
        uint8 (3, H, W) or (N, 3, H, W): hue is the direction, saturation the magnitude (normalised by the largest).

    Raises:
        ValueError: not float32, or a wrong shape.

    Examples:
        >>> from flowvision import backend as flow
        >>> from flowvision.utils import flow_to_image
        >>> flow_to_image(flow.zeros(2, 4, 4))[:, 0, 0].tolist()
        [255, 255, 255]
    """
    f = _np(flow, "flow")
    if f.dtype != np.float32:
        raise ValueError(f"Flow should be of dtype float32, got {f.dtype}.")
    orig = f.shape
    if f.ndim == 3:
        f = f[None]
    if f.ndim != 4 or f.shape[1] != 2:
        raise ValueError(f"Input flow should have shape (2, H, W) or (N, 2, H, W), got {orig}.")
    max_norm = np.sqrt((f ** 2).sum(1)).max()
    nf = f / (max_norm + np.finfo(np.float32).eps)
    wheel = _colorwheel()
    ncols = wheel.shape[0]
    norm = np.sqrt((nf ** 2).sum(1))
    ang = np.arctan2(-nf[:, 1], -nf[:, 0]) / np.float32(np.pi)
    fk = (ang + 1) / 2 * (ncols - 1)
    k0 = np.floor(fk).astype(np.int64)
    k1 = k0 + 1
    k1[k1 == ncols] = 0
    frac = fk - k0
    img = np.zeros((nf.shape[0], 3, nf.shape[2], nf.shape[3]), np.uint8)
    for c in range(3):
        col0 = wheel[k0, c] / 255.0
        col1 = wheel[k1, c] / 255.0
        col = (1 - frac) * col0 + frac * col1
        col = 1 - norm * (1 - col)
        img[:, c] = np.floor(255 * col)
    return _wrap(img[0] if len(orig) == 3 else img)
