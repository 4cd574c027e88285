"""v2 geometric transform classes: resize, crops, flips, pad, zoom-out, rotation, affine, perspective, elastic,
IoU crop and the scale jitters; bounding boxes and masks follow the image.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image as _PILImage

from .. import _random
from .. import functional as F1
from .. import transforms as T1
from .._transforms_geometry import _setup_angle
from ..functional import InterpolationMode
from . import functional as F
from . import tv_tensors
from ._transform import (Transform, _RandomApplyTransform, _is_image_like, get_bounding_boxes, has_all, has_any,
                         query_size)
from .tv_tensors import BoundingBoxes, Mask, Video
from ._utils import _check_sequence_input, _get_fill, _interp, _setup_fill_arg, _setup_size


class Resize(Transform):
    """Resize the input (images, videos, masks, boxes) to ``size``.

    Args:
        size (int, sequence of int or None): ``(h, w)``; an int or 1-element sequence gives the smaller edge; ``None``
            resizes so that the longer edge is ``max_size``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        max_size (int, optional): upper bound of the longer edge. Default ``None``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.

    Raises:
        ValueError: if ``size`` or ``max_size`` is invalid.
    """

    def __init__(self, size: int | Sequence[int] | None,
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, max_size: int | None = None,
                 antialias: bool | None = True) -> None:
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in {1, 2}:
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        else:
            raise ValueError(f"size can be an integer, a sequence of one or two integers, or None, but got {size}")
        if size is not None:
            F1._check_size_arg(size)
        if size is not None and max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size is None or specifies the length of the smaller"
                             " edge, i.e. size should be an int or a sequence of length 1 in torchscript mode.")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def transform(self, inpt, params):
        return F.resize(inpt, self.size, interpolation=self.interpolation, max_size=self.max_size,
                        antialias=self.antialias)


class CenterCrop(Transform):
    """Crop the center of the input; images smaller than ``size`` are zero-padded.

    Args:
        size (int or sequence of int): ``(h, w)`` of the crop; an int gives a square crop.
    """

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def transform(self, inpt, params):
        return F.center_crop(inpt, output_size=self.size)


class RandomResizedCrop(Transform):
    """Crop a random area and aspect ratio and resize it to ``size`` (Inception-style crop).

    Args:
        size (int or sequence of int): ``(h, w)`` of the output; an int gives a square output.
        scale (sequence of 2 float): range of the crop area as a fraction of the image area. Default ``(0.08, 1.0)``.
        ratio (sequence of 2 float): range of the crop's aspect ratio, sampled log-uniformly. Default ``(3/4, 4/3)``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.
    """

    def __init__(self, size: int | Sequence[int], scale: Sequence[float] = (0.08, 1.0),
                 ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        self._v1 = T1.RandomResizedCrop(size, scale, ratio, antialias=antialias)
        self.size, self.scale, self.ratio = self._v1.size, scale, ratio
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        i, j, hh, ww = T1.RandomResizedCrop.get_params(np.empty((h, w, 0), np.uint8), self.scale, self.ratio)
        return dict(top=i, left=j, height=hh, width=ww)

    def transform(self, inpt, params):
        return F.resized_crop(inpt, **params, size=self.size, interpolation=self.interpolation,
                              antialias=self.antialias)


class FiveCrop(Transform):
    """Crop the four corners and the center of images and videos (a tuple of five per input).

    Args:
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.

    Raises:
        TypeError: at call time, for bounding boxes and masks.
    """

    _transformed_types = (tv_tensors.Image, Video, _PILImage.Image, np.ndarray, "tensor")

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, BoundingBoxes, Mask):
            raise TypeError(f"BoundingBoxes'es and Mask's are not supported by {type(self).__name__}()")

    def transform(self, inpt, params):
        return F.five_crop(inpt, self.size)


class TenCrop(FiveCrop):
    """The five crops of :class:`FiveCrop` of the input and of its flipped version.

    Args:
        size (int or sequence of int): ``(h, w)`` of the crops; an int gives square crops.
        vertical_flip (bool): flip vertically instead of horizontally. Default ``False``.
    """

    def __init__(self, size: int | Sequence[int], vertical_flip: bool = False) -> None:
        super().__init__(size)
        self.vertical_flip = vertical_flip

    def transform(self, inpt, params):
        return F.ten_crop(inpt, self.size, vertical_flip=self.vertical_flip)


class RandomHorizontalFlip(_RandomApplyTransform):
    """Flip the input horizontally with probability ``p`` (boxes and masks with it).

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.horizontal_flip(inpt)


class RandomVerticalFlip(_RandomApplyTransform):
    """Flip the input vertically with probability ``p`` (boxes and masks with it).

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.vertical_flip(inpt)


class Pad(Transform):
    """Pad the input on all sides.

    Args:
        padding (int or sequence of int): one value for all borders, two for left/right and top/bottom, or four for
            left, top, right and bottom.
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.
        padding_mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default ``"constant"``.

    Raises:
        TypeError, ValueError: if ``padding``, ``fill`` or ``padding_mode`` is invalid.
    """

    def __init__(self, padding: int | Sequence[int], fill: float | Sequence[float] | dict[Any, Any] | None = 0,
                 padding_mode: str = "constant") -> None:
        F1._parse_padding(padding)
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("`padding_mode` must be one of 'constant', 'edge', 'reflect' or 'symmetric'.")
        self.padding = padding
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        self.padding_mode = padding_mode

    def transform(self, inpt, params):
        return F.pad(inpt, padding=self.padding, fill=_get_fill(self._fill, type(inpt)),
                     padding_mode=self.padding_mode)


class RandomZoomOut(_RandomApplyTransform):
    """Zoom out with probability ``p``: place the input at a random spot of a larger canvas filled with ``fill``.

    Args:
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.
        side_range (sequence of 2 float): range of the canvas side as a multiple of the input side, ``>= 1``.
            Default ``(1.0, 4.0)``.
        p (float): probability of applying the transform. Default ``0.5``.

    Raises:
        ValueError: if ``side_range`` is invalid or ``p`` outside ``[0, 1]``.
    """

    def __init__(self, fill: float | Sequence[float] | dict[Any, Any] | None = 0,
                 side_range: Sequence[float] = (1.0, 4.0), p: float = 0.5) -> None:
        super().__init__(p=p)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        _check_sequence_input(side_range, "side_range", req_sizes=(2,))
        self.side_range = side_range
        if side_range[0] < 1.0 or side_range[0] > side_range[1]:
            raise ValueError(f"Invalid side range provided {side_range}.")

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        r = self.side_range[0] + _random.rand() * (self.side_range[1] - self.side_range[0])
        cw, ch = int(orig_w * r), int(orig_h * r)
        r0, r1 = _random.rand(), _random.rand()
        left = int((cw - orig_w) * r0)
        top = int((ch - orig_h) * r1)
        return dict(padding=[left, top, cw - (left + orig_w), ch - (top + orig_h)])

    def transform(self, inpt, params):
        return F.pad(inpt, **params, fill=_get_fill(self._fill, type(inpt)))


class RandomCrop(Transform):
    """Crop the input at a random location.

    Args:
        size (int or sequence of int): ``(h, w)`` of the crop; an int gives a square crop.
        padding (int or sequence of int, optional): padding applied first, as in :class:`Pad`. Default ``None``.
        pad_if_needed (bool): pad an input smaller than ``size`` so that the crop fits. Default ``False``.
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.
        padding_mode (str): ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"``. Default ``"constant"``.

    Raises:
        ValueError: if ``padding_mode`` is unknown; at call time, if the crop is larger than the (padded) input.
    """

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: float | Sequence[float] | dict[Any, Any] | None = 0,
                 padding_mode: str = "constant") -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if padding is not None:
            F1._parse_padding(padding)
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("`padding_mode` must be one of 'constant', 'edge', 'reflect' or 'symmetric'.")
        self.padding = F1._parse_padding(padding) if padding is not None else None
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        self.padding_mode = padding_mode

    def make_params(self, flat_inputs):
        ph, pw = query_size(flat_inputs)
        if self.padding is not None:
            pl, pt, pr, pb = self.padding
            ph += pt + pb
            pw += pl + pr
        else:
            pl = pt = pr = pb = 0
        ch, cw = self.size
        if self.pad_if_needed:
            if ph < ch:
                diff = ch - ph
                pt += diff
                pb += diff
                ph += 2 * diff
            if pw < cw:
                diff = cw - pw
                pl += diff
                pr += diff
                pw += 2 * diff
        if ph < ch or pw < cw:
            raise ValueError(f"Required crop size {(ch, cw)} is larger than input image size {(ph, pw)}.")
        needs_pad = any([pl, pt, pr, pb])
        needs_vert = ph > ch
        needs_horz = pw > cw
        top = _random.randint(0, ph - ch + 1) if needs_vert else 0
        left = _random.randint(0, pw - cw + 1) if needs_horz else 0
        return dict(needs_crop=needs_vert or needs_horz, top=top, left=left, height=ch, width=cw,
                    needs_pad=needs_pad, padding=[pl, pt, pr, pb])

    def transform(self, inpt, params):
        if params["needs_pad"]:
            inpt = F.pad(inpt, padding=params["padding"], fill=_get_fill(self._fill, type(inpt)),
                         padding_mode=self.padding_mode)
        if params["needs_crop"]:
            inpt = F.crop(inpt, top=params["top"], left=params["left"], height=params["height"],
                          width=params["width"])
        return inpt


class RandomRotation(Transform):
    """Rotate the input by a random angle.

    Args:
            degrees (number or (min, max)): range of the angle in degrees; a number ``d`` gives ``(-d, d)``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.NEAREST``.
        expand (bool): enlarge the output to hold the whole rotated image. Default ``False``.
        center (sequence of float, optional): ``(x, y)`` center of rotation. Default ``None``: the image center.
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.
    """

    def __init__(self, degrees: float | Sequence[float],
                 interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST, expand: bool = False,
                 center: Sequence[float] | None = None,
                 fill: float | Sequence[float] | dict[Any, Any] | None = 0) -> None:
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        self.interpolation = _interp(interpolation)
        self.expand = expand
        self.fill = fill
        self._fill = _setup_fill_arg(fill)
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    def make_params(self, flat_inputs):
        return dict(angle=_random.uniform(self.degrees[0], self.degrees[1]))

    def transform(self, inpt, params):
        return F.rotate(inpt, **params, interpolation=self.interpolation, expand=self.expand, center=self.center,
                        fill=_get_fill(self._fill, type(inpt)))


class RandomAffine(Transform):
    """Apply a random affine transform (rotation, translation, scale, shear).

    Args:
            degrees (number or (min, max)): range of the rotation in degrees; a number ``d`` gives ``(-d, d)``.
        translate (tuple of 2 float, optional): maximum shifts as fractions of width and height. Default ``None``.
        scale (tuple of 2 float, optional): range of the scale factor. Default ``None``: 1.
        shear (number or sequence of 2 or 4 numbers, optional): shear range in degrees. Default ``None``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.NEAREST``.
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.
        center (sequence of float, optional): ``(x, y)`` center of the transform. Default ``None``: the image center.

    Raises:
        TypeError, ValueError: if an argument is invalid.
    """

    def __init__(self, degrees: float | Sequence[float], translate: Sequence[float] | None = None,
                 scale: Sequence[float] | None = None, shear: float | Sequence[float] | None = None,
                 interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST,
                 fill: float | Sequence[float] | dict[Any, Any] | None = 0,
                 center: Sequence[float] | None = None) -> None:
        v1 = T1.RandomAffine(degrees, translate, scale, shear, fill=0, center=center)
        self.degrees, self.translate, self.scale, self.shear, self.center = (v1.degrees, v1.translate, v1.scale,
                                                                              v1.shear, center)
        self.interpolation = _interp(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        angle, translate, scale, shear = T1.RandomAffine.get_params(self.degrees, self.translate, self.scale,
                                                                     self.shear, [w, h])
        return dict(angle=angle, translate=translate, scale=scale, shear=shear)

    def transform(self, inpt, params):
        return F.affine(inpt, **params, interpolation=self.interpolation, fill=_get_fill(self._fill, type(inpt)),
                        center=self.center)


class RandomPerspective(_RandomApplyTransform):
    """Apply a random perspective transform with probability ``p``.

    Args:
        distortion_scale (float): degree of distortion, in ``[0, 1]``. Default ``0.5``.
        p (float): probability of applying the transform. Default ``0.5``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.

    Raises:
        ValueError: if ``distortion_scale`` or ``p`` is outside ``[0, 1]``.
    """

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5,
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 fill: float | Sequence[float] | dict[Any, Any] | None = 0) -> None:
        super().__init__(p=p)
        if not (0 <= distortion_scale <= 1):
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = _interp(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        start, end = T1.RandomPerspective.get_params(w, h, self.distortion_scale)
        return dict(coefficients=F1._get_perspective_coeffs(start, end))

    def transform(self, inpt, params):
        return F.perspective(inpt, None, None, fill=_get_fill(self._fill, type(inpt)),
                             interpolation=self.interpolation, **params)


class ElasticTransform(Transform):
    """Move every pixel by a random smooth displacement field (elastic deformation).

    Args:
        alpha (float or sequence of 2 float): magnitude of the displacement. Default ``50.0``.
        sigma (float or sequence of 2 float): smoothness of the field. Default ``5.0``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        fill (number, sequence or dict): value of pixels outside the image; a dict maps input types to fills
            (``"others"`` for the rest). Default ``0``.

    Raises:
        TypeError, ValueError: if ``alpha``, ``sigma`` or ``fill`` is invalid.
    """

    def __init__(self, alpha: float | Sequence[float] = 50.0, sigma: float | Sequence[float] = 5.0,
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 fill: float | Sequence[float] | dict[Any, Any] | None = 0) -> None:
        self.alpha = T1.ElasticTransform._pair(float(alpha) if isinstance(alpha, int) else alpha, "alpha")
        self.sigma = T1.ElasticTransform._pair(float(sigma) if isinstance(sigma, int) else sigma, "sigma")
        self.interpolation = _interp(interpolation)
        self.fill = fill
        self._fill = _setup_fill_arg(fill)

    def make_params(self, flat_inputs):
        size = list(query_size(flat_inputs))
        return dict(displacement=T1.ElasticTransform.get_params(self.alpha, self.sigma, size))

    def transform(self, inpt, params):
        return F.elastic(inpt, **params, fill=_get_fill(self._fill, type(inpt)), interpolation=self.interpolation)


class RandomIoUCrop(Transform):
    """SSD's random crop: keep the boxes whose centres fall in the crop, with IoU above a sampled threshold.

    Needs bounding boxes and an image in the sample.

    Args:
        min_scale (float): minimum crop side as a fraction of the image side. Default ``0.3``.
        max_scale (float): maximum crop side as a fraction of the image side. Default ``1.0``.
        min_aspect_ratio (float): minimum aspect ratio of the crop. Default ``0.5``.
        max_aspect_ratio (float): maximum aspect ratio of the crop. Default ``2.0``.
        sampler_options (sequence of float, optional): minimum-IoU thresholds to sample from (1.0 = no crop).
            Default ``None``: ``[0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]``.
        trials (int): crop attempts per threshold. Default ``40``.

    Raises:
        ValueError: if the scale or aspect-ratio range is invalid.
        TypeError: at call time, if the sample lacks boxes or an image.
    """

    def __init__(self, min_scale: float = 0.3, max_scale: float = 1.0, min_aspect_ratio: float = 0.5,
                 max_aspect_ratio: float = 2.0, sampler_options: Sequence[float] | None = None,
                 trials: int = 40) -> None:
        if not 0 < min_scale <= max_scale:
            raise ValueError(f"need 0 < min_scale <= max_scale, got {min_scale}, {max_scale}")
        if not 0 < min_aspect_ratio <= max_aspect_ratio:
            raise ValueError(f"need 0 < min_aspect_ratio <= max_aspect_ratio, got {min_aspect_ratio}, "
                             f"{max_aspect_ratio}")
        self.min_scale, self.max_scale = min_scale, max_scale
        self.min_aspect_ratio, self.max_aspect_ratio = min_aspect_ratio, max_aspect_ratio
        self.options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0] if sampler_options is None else sampler_options
        self.trials = trials

    def check_inputs(self, flat_inputs):
        if not (has_all(flat_inputs, BoundingBoxes)
                and has_any(flat_inputs, _PILImage.Image, tv_tensors.Image, _is_image_like)):
            raise TypeError(f"{type(self).__name__}() requires input sample to contain tensor or PIL images "
                            "and bounding boxes. Sample can also contain masks.")

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        bboxes = get_bounding_boxes(flat_inputs)
        xyxy_all = F._convert_format_np(F._boxes_np(bboxes), bboxes.format, tv_tensors.BoundingBoxFormat.XYXY)
        while True:
            min_iou = self.options[_random.randint(0, len(self.options))]
            if min_iou >= 1.0:
                return dict()
            for _ in range(self.trials):
                r0, r1 = _random.rand(), _random.rand()
                new_w = int(orig_w * (self.min_scale + (self.max_scale - self.min_scale) * r0))
                new_h = int(orig_h * (self.min_scale + (self.max_scale - self.min_scale) * r1))
                if new_h == 0 or not (self.min_aspect_ratio <= new_w / new_h <= self.max_aspect_ratio):
                    continue
                r0, r1 = _random.rand(), _random.rand()
                left = int((orig_w - new_w) * r0)
                top = int((orig_h - new_h) * r1)
                right, bottom = left + new_w, top + new_h
                if left == right or top == bottom:
                    continue
                cx = 0.5 * (xyxy_all[..., 0] + xyxy_all[..., 2])
                cy = 0.5 * (xyxy_all[..., 1] + xyxy_all[..., 3])
                within = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not within.any():
                    continue
                ious = _box_iou(xyxy_all[within].astype(np.float64), np.array([[left, top, right, bottom]], float))
                if ious.max() < min_iou:
                    continue
                return dict(top=top, left=left, height=new_h, width=new_w, is_within_crop_area=within)

    def transform(self, inpt, params):
        if len(params) < 1:
            return inpt
        out = F.crop(inpt, top=params["top"], left=params["left"], height=params["height"], width=params["width"])
        if isinstance(out, BoundingBoxes):
            arr = np.array(F._boxes_np(out))
            arr[~params["is_within_crop_area"]] = 0
            out = tv_tensors.wrap(arr, like=out)
        return out


def _box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


class ScaleJitter(Transform):
    """Large-scale jitter: resize to fit ``target_size`` times a random scale, keeping the aspect ratio.

    Args:
        target_size (tuple of int): ``(height, width)`` of the target.
        scale_range (tuple of 2 float): range of the random scale. Default ``(0.1, 2.0)``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.
    """

    def __init__(self, target_size: tuple[int, int], scale_range: tuple[float, float] = (0.1, 2.0),
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        self.target_size = target_size
        self.scale_range = scale_range
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        scale = self.scale_range[0] + _random.rand() * (self.scale_range[1] - self.scale_range[0])
        r = min(self.target_size[1] / h, self.target_size[0] / w) * scale
        return dict(size=(int(h * r), int(w * r)))

    def transform(self, inpt, params):
        return F.resize(inpt, size=list(params["size"]), interpolation=self.interpolation, antialias=self.antialias)


class RandomShortestSize(Transform):
    """Resize so that the shorter edge is a size picked at random from ``min_size``.

    Args:
        min_size (int or sequence of int): candidate sizes of the shorter edge.
        max_size (int, optional): upper bound of the longer edge. Default ``None``.
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.
    """

    def __init__(self, min_size: int | Sequence[int], max_size: int | None = None,
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        self.max_size = max_size
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        min_size = self.min_size[_random.randint(0, len(self.min_size))]
        r = min_size / min(h, w)
        if self.max_size is not None:
            r = min(r, self.max_size / max(h, w))
        return dict(size=(int(h * r), int(w * r)))

    def transform(self, inpt, params):
        return F.resize(inpt, size=list(params["size"]), interpolation=self.interpolation, antialias=self.antialias)


class RandomResize(Transform):
    """Resize the shorter edge to a size drawn uniformly from ``[min_size, max_size)``.

    Args:
        min_size (int): smallest size (inclusive).
        max_size (int): largest size (exclusive).
        interpolation (InterpolationMode, str or int): interpolation of images; masks use nearest.
            Default ``InterpolationMode.BILINEAR``.
        antialias (bool, optional): antialias when downsampling images. Default ``True``.

    Raises:
        ValueError: if ``min_size >= max_size``.
    """

    def __init__(self, min_size: int, max_size: int,
                 interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        if min_size >= max_size:
            raise ValueError(f"min_size should be < max_size, got {min_size}, {max_size}")
        self.min_size, self.max_size = min_size, max_size
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        return dict(size=[_random.randint(self.min_size, self.max_size)])

    def transform(self, inpt, params):
        return F.resize(inpt, params["size"], interpolation=self.interpolation, antialias=self.antialias)
