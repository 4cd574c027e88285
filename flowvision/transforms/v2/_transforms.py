"""torchvision.transforms.v2 classes: one parameter draw per call, applied to images, videos, masks and
bounding boxes alike."""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from PIL import Image as _PILImage

from .. import _random
from .. import functional as F1
from .. import autoaugment as AA
from .. import transforms as T1
from .. import _functional_tensor as F_t
from ..functional import InterpolationMode
from . import functional as F
from . import tv_tensors
from ._transform import (Transform, _RandomApplyTransform, get_bounding_boxes, has_all, has_any, is_pure_tensor,
                         query_chw, query_size, tree_flatten, tree_unflatten, _is_image_like)
from .tv_tensors import BoundingBoxes, Mask, Video

# ----------------------------------------------------------------------------- helpers
_FILL_ERR = "Got inappropriate fill arg"


def _convert_fill(fill):
    if fill is None:
        return None
    if isinstance(fill, (int, float)):
        return fill
    if isinstance(fill, (list, tuple)):
        return [float(v) for v in fill]
    raise TypeError(_FILL_ERR)


def _setup_fill_arg(fill):
    if isinstance(fill, dict):
        return {k: _convert_fill(v) for k, v in fill.items()}
    return {"others": _convert_fill(fill)}


def _get_fill(fill_dict, inpt_type):
    for cls in inpt_type.__mro__:
        if cls in fill_dict:
            return fill_dict[cls]
    return fill_dict.get("others")


def _setup_size(size, error_msg):
    return T1._setup_size(size, error_msg)


def _check_sequence_input(x, name, req_sizes):
    return T1._check_sequence_input(x, name, req_sizes)


def _interp(interpolation):
    return F._check_interpolation(interpolation)


# ----------------------------------------------------------------------------- containers
class Compose(Transform):
    """Apply a list of transforms in order, on a whole sample (images, videos, masks, boxes, labels).

    Args:
        transforms (sequence of callables): the transforms.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
        ValueError: if it is empty.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        needs_unpack = len(inputs) > 1
        for t in self.transforms:
            outputs = t(*inputs)
            inputs = outputs if needs_unpack else (outputs,)
        return outputs

    def __repr__(self):
        return f"{type(self).__name__}(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class RandomApply(Transform):
    """Apply a list of transforms, in order, with probability ``p``.

    Args:
        transforms (sequence of callables): the transforms.
        p (float): probability of applying the transform. Default ``0.5``.

    Raises:
        TypeError: if ``transforms`` is not a sequence or callable.
        ValueError: if ``p`` is outside ``[0, 1]``.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]] | Callable[..., Any], p: float = 0.5) -> None:
        if not isinstance(transforms, (Sequence, Transform)) and not callable(transforms):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.transforms = list(transforms) if isinstance(transforms, Sequence) else [transforms]
        self.p = p

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        if _random.rand() >= self.p:
            return sample
        for t in self.transforms:
            sample = t(sample)
        return sample


class RandomChoice(Transform):
    """Apply one transform picked at random from a list.

    Args:
        transforms (sequence of callables): the transforms.
        p (sequence of float, optional): relative probability of each transform (normalized to sum to 1).
            Default ``None``: uniform.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
        ValueError: if ``p`` and ``transforms`` have different lengths.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]], p: Sequence[float] | None = None) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        self.transforms = transforms
        total = sum(p)
        self.p = [prob / total for prob in p]

    def forward(self, *inputs):
        idx = int(np.searchsorted(np.cumsum(self.p), _random.rand(), side="right"))
        return self.transforms[min(idx, len(self.transforms) - 1)](*inputs)


class RandomOrder(Transform):
    """Apply a list of transforms in a random order.

    Args:
        transforms (sequence of callables): the transforms.

    Raises:
        TypeError: if ``transforms`` is not a sequence.
    """

    def __init__(self, transforms: Sequence[Callable[..., Any]]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        for i in _random.randperm(len(self.transforms)):
            sample = self.transforms[i](sample)
        return sample


class Identity(Transform):
    """Return the input unchanged.

    """

    def transform(self, inpt, params):
        return inpt


class Lambda(Transform):
    """Apply a user function to every leaf of the sample (or only to leaves of the given types).

    Args:
        lambd (callable): function applied to each selected leaf.
        *types (type): leaf types to apply it to. Default: all (``object``).

    Raises:
        TypeError: if ``lambd`` is not callable.
    """

    def __init__(self, lambd: Callable[[Any], Any], *types: type) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd
        self.types = types or (object,)

    def transform(self, inpt, params):
        return self.lambd(inpt) if isinstance(inpt, self.types) else inpt

    def _needs_transform_list(self, flat_inputs):
        return [True] * len(flat_inputs)


# ----------------------------------------------------------------------------- type conversion
class ToImage(Transform):
    """Convert PIL images, ``(H, W[, C])`` ndarrays and plain tensors to :class:`Image` tv_tensors.

    """

    _transformed_types = (np.ndarray, _PILImage.Image, "tensor")

    def _needs_transform_list(self, flat_inputs):
        needs = super()._needs_transform_list(flat_inputs)
        return [n and not isinstance(x, tv_tensors.TVTensor) for n, x in zip(needs, flat_inputs)]

    def transform(self, inpt, params):
        return F.to_image(inpt)


class PILToTensor(Transform):
    """Convert PIL images to plain ``(C, H, W)`` tensors of their own dtype, without scaling.

    """

    _transformed_types = (_PILImage.Image,)

    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt)


class ToPILImage(Transform):
    """Convert tensor / ndarray images to PIL Images.

    Args:
        mode (str, optional): PIL mode of the result. Default ``None``: inferred.
    """

    _transformed_types = (np.ndarray, "tensor", tv_tensors.Image)

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def transform(self, inpt, params):
        return F.to_pil_image(inpt, mode=self.mode)


class ToPureTensor(Transform):
    """Replace every tv_tensor of the sample by its plain tensor.

    """

    _transformed_types = (tv_tensors.TVTensor,)

    def transform(self, inpt, params):
        return F.to_pure_tensor(inpt)


class ToTensor(Transform):
    """Deprecated in torchvision v2 (use ToImage + ToDtype(float32, scale=True)); kept for parity."""
    _transformed_types = (np.ndarray, _PILImage.Image)

    def __init__(self):
        warnings.warn("The transform `ToTensor()` is deprecated and will be removed in a future release. "
                      "Instead, please use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.")

    def transform(self, inpt, params):
        return F1.to_tensor(inpt)


class ToDtype(Transform):
    """``dtype`` may be one dtype (applied to images and videos; with ``scale`` their values are rescaled),
    or a dict ``{type: dtype}`` with ``"others"`` for the remaining types (``None`` leaves a type alone)."""

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        if not isinstance(dtype, dict) and not (hasattr(dtype, "np") or isinstance(dtype, (type, np.dtype))):
            raise ValueError(f"dtype must be a dtype or a dict of dtypes, got {type(dtype)} instead.")
        self.dtype = dtype
        self.scale = scale

    def _dtype_for(self, inpt):
        if not isinstance(self.dtype, dict):
            if isinstance(inpt, (BoundingBoxes, Mask)):
                return None  # like torchvision: a single dtype converts images and videos only
            return self.dtype
        for cls in type(inpt).__mro__:
            if cls in self.dtype:
                return self.dtype[cls]
        return self.dtype.get("others")

    def transform(self, inpt, params):
        dtype = self._dtype_for(inpt)
        if dtype is None or isinstance(inpt, _PILImage.Image):
            return inpt
        scale = self.scale and not isinstance(inpt, (BoundingBoxes, Mask))
        return F.to_dtype(inpt, dtype=dtype, scale=scale)


class ConvertImageDtype(Transform):
    """Convert images to ``dtype``, rescaling their values to the dtype's range.

    Args:
        dtype (backend or numpy dtype, optional): target dtype. Default ``None``: float32.
    """

    def __init__(self, dtype: Any = None) -> None:
        self.dtype = dtype

    def transform(self, inpt, params):
        if isinstance(inpt, (BoundingBoxes, Mask, _PILImage.Image)):
            return inpt
        return F.to_dtype(inpt, dtype=self.dtype, scale=True)


class Normalize(Transform):
    """Normalize float images and videos per channel: ``(x - mean) / std``.

    Args:
        mean (number or sequence of float): per-channel means.
        std (number or sequence of float): per-channel standard deviations, non-zero.
        inplace (bool): write the result into the input. Default ``False``.

    Raises:
        TypeError, ValueError: as :class:`flowvision.transforms.Normalize`.
    """

    _transformed_types = (tv_tensors.Image, Video, np.ndarray, "tensor")

    def __init__(self, mean: float | Sequence[float], std: float | Sequence[float], inplace: bool = False) -> None:
        T1.Normalize(mean, std, inplace)  # argument checks
        self.mean = list(np.atleast_1d(mean))
        self.std = list(np.atleast_1d(std))
        self.inplace = inplace

    def transform(self, inpt, params):
        return F.normalize(inpt, self.mean, self.std, self.inplace)


class RGB(Transform):
    """Convert images to RGB: one-channel images get three equal channels, RGB images are unchanged.

    """

    def transform(self, inpt, params):
        return F.grayscale_to_rgb(inpt)


# ----------------------------------------------------------------------------- geometry
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

    def __init__(self, size: int | Sequence[int] | None, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, max_size: int | None = None, antialias: bool | None = True) -> None:
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

    def __init__(self, size: int | Sequence[int], scale: Sequence[float] = (0.08, 1.0), ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0), interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:
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

    def __init__(self, padding: int | Sequence[int], fill: float | Sequence[float] | dict[Any, Any] | None = 0, padding_mode: str = "constant") -> None:
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

    def __init__(self, fill: float | Sequence[float] | dict[Any, Any] | None = 0, side_range: Sequence[float] = (1.0, 4.0), p: float = 0.5) -> None:
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

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None, pad_if_needed: bool = False, fill: float | Sequence[float] | dict[Any, Any] | None = 0, padding_mode: str = "constant") -> None:
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

    def __init__(self, degrees: float | Sequence[float], interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST, expand: bool = False, center: Sequence[float] | None = None, fill: float | Sequence[float] | dict[Any, Any] | None = 0) -> None:
        self.degrees = T1._setup_angle(degrees, name="degrees", req_sizes=(2,))
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

    def __init__(self, degrees: float | Sequence[float], translate: Sequence[float] | None = None, scale: Sequence[float] | None = None, shear: float | Sequence[float] | None = None, interpolation: InterpolationMode | str | int = InterpolationMode.NEAREST, fill: float | Sequence[float] | dict[Any, Any] | None = 0, center: Sequence[float] | None = None) -> None:
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

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | dict[Any, Any] | None = 0) -> None:
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

    def __init__(self, alpha: float | Sequence[float] = 50.0, sigma: float | Sequence[float] = 5.0, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, fill: float | Sequence[float] | dict[Any, Any] | None = 0) -> None:
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

    def __init__(self, min_scale: float = 0.3, max_scale: float = 1.0, min_aspect_ratio: float = 0.5, max_aspect_ratio: float = 2.0, sampler_options: Sequence[float] | None = None, trials: int = 40) -> None:
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

    def __init__(self, target_size: tuple[int, int], scale_range: tuple[float, float] = (0.1, 2.0), interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:
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

    def __init__(self, min_size: int | Sequence[int], max_size: int | None = None, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:
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

    def __init__(self, min_size: int, max_size: int, interpolation: InterpolationMode | str | int = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:
        if min_size >= max_size:
            raise ValueError(f"min_size should be < max_size, got {min_size}, {max_size}")
        self.min_size, self.max_size = min_size, max_size
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def make_params(self, flat_inputs):
        return dict(size=[_random.randint(self.min_size, self.max_size)])

    def transform(self, inpt, params):
        return F.resize(inpt, params["size"], interpolation=self.interpolation, antialias=self.antialias)


# ----------------------------------------------------------------------------- colour
class _ColorTransform(Transform):
    _transformed_types = (tv_tensors.Image, Video, _PILImage.Image, np.ndarray, "tensor")


class ColorJitter(_ColorTransform):
    """Randomly change brightness, contrast, saturation and hue, in a random order.

    Args:
        brightness (float or (min, max), optional): factor range ``[max(0, 1 - b), 1 + b]`` or the given range.
            Default ``None`` (unchanged).
        contrast (float or (min, max), optional): as ``brightness``. Default ``None``.
        saturation (float or (min, max), optional): as ``brightness``. Default ``None``.
        hue (float or (min, max), optional): shift range ``[-h, h]`` or the given range, within ``[-0.5, 0.5]``.
            Default ``None``.

    Raises:
        TypeError, ValueError: as :class:`flowvision.transforms.ColorJitter`.
    """

    def __init__(self, brightness: float | Sequence[float] | None = None, contrast: float | Sequence[float] | None = None, saturation: float | Sequence[float] | None = None, hue: float | Sequence[float] | None = None) -> None:
        v1 = T1.ColorJitter(brightness or 0, contrast or 0, saturation or 0, hue or 0)
        self.brightness, self.contrast, self.saturation, self.hue = v1.brightness, v1.contrast, v1.saturation, v1.hue

    def make_params(self, flat_inputs):
        fn_idx, b, c, s, h = T1.ColorJitter.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return dict(fn_idx=fn_idx, brightness_factor=b, contrast_factor=c, saturation_factor=s, hue_factor=h)

    def transform(self, inpt, params):
        for i in params["fn_idx"]:
            if i == 0 and params["brightness_factor"] is not None:
                inpt = F.adjust_brightness(inpt, params["brightness_factor"])
            elif i == 1 and params["contrast_factor"] is not None:
                inpt = F.adjust_contrast(inpt, params["contrast_factor"])
            elif i == 2 and params["saturation_factor"] is not None:
                inpt = F.adjust_saturation(inpt, params["saturation_factor"])
            elif i == 3 and params["hue_factor"] is not None:
                inpt = F.adjust_hue(inpt, params["hue_factor"])
        return inpt


class RandomPhotometricDistort(_ColorTransform):
    """SSD's photometric distortion: each colour change and a channel permutation is applied with probability ``p``.

    Args:
        brightness (tuple of 2 float): range of the brightness factor. Default ``(0.875, 1.125)``.
        contrast (tuple of 2 float): range of the contrast factor (applied before or after the others at random).
            Default ``(0.5, 1.5)``.
        saturation (tuple of 2 float): range of the saturation factor. Default ``(0.5, 1.5)``.
        hue (tuple of 2 float): range of the hue shift. Default ``(-0.05, 0.05)``.
        p (float): probability of each distortion. Default ``0.5``.
    """

    def __init__(self, brightness: Sequence[float] = (0.875, 1.125), contrast: Sequence[float] = (0.5, 1.5), saturation: Sequence[float] = (0.5, 1.5), hue: Sequence[float] = (-0.05, 0.05), p: float = 0.5) -> None:
        self.brightness, self.contrast, self.saturation, self.hue, self.p = brightness, contrast, saturation, hue, p

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        params = {}
        for key, rng in (("brightness_factor", self.brightness), ("contrast_factor", self.contrast),
                         ("saturation_factor", self.saturation), ("hue_factor", self.hue)):
            params[key] = _random.uniform(rng[0], rng[1]) if _random.rand() < self.p else None
        params["contrast_before"] = _random.rand() < 0.5
        params["channel_permutation"] = _random.randperm(c) if _random.rand() < self.p else None
        return params

    def transform(self, inpt, params):
        if params["brightness_factor"] is not None:
            inpt = F.adjust_brightness(inpt, params["brightness_factor"])
        if params["contrast_factor"] is not None and params["contrast_before"]:
            inpt = F.adjust_contrast(inpt, params["contrast_factor"])
        if params["saturation_factor"] is not None:
            inpt = F.adjust_saturation(inpt, params["saturation_factor"])
        if params["hue_factor"] is not None:
            inpt = F.adjust_hue(inpt, params["hue_factor"])
        if params["contrast_factor"] is not None and not params["contrast_before"]:
            inpt = F.adjust_contrast(inpt, params["contrast_factor"])
        if params["channel_permutation"] is not None:
            inpt = F.permute_channels(inpt, params["channel_permutation"])
        return inpt


class RandomChannelPermutation(_ColorTransform):
    """Permute the channels of images and videos at random.

    """

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        return dict(permutation=_random.randperm(c))

    def transform(self, inpt, params):
        return F.permute_channels(inpt, params["permutation"])


class Grayscale(_ColorTransform):
    """Convert images and videos to grayscale.

    Args:
        num_output_channels (int): 1, or 3 for three equal channels. Default ``1``.

    Raises:
        ValueError: if ``num_output_channels`` is neither 1 nor 3.
    """

    def __init__(self, num_output_channels: int = 1) -> None:
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, num_output_channels=self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform):
    """Convert images to grayscale with probability ``p``, keeping their number of channels.

    Args:
        p (float): probability of the conversion. Default ``0.1``.
    """

    _transformed_types = _ColorTransform._transformed_types

    def __init__(self, p: float = 0.1) -> None:
        super().__init__(p=p)

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        return dict(num_input_channels=c)

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, num_output_channels=params["num_input_channels"])


class GaussianBlur(_ColorTransform):
    """Blur images and videos with a Gaussian kernel of random standard deviation.

    Args:
        kernel_size (int or sequence of int): odd, positive kernel size.
        sigma (float or (min, max)): the standard deviation or its range. Default ``(0.1, 2.0)``.

    Raises:
        ValueError: as :class:`flowvision.transforms.GaussianBlur`.
    """

    def __init__(self, kernel_size: int | Sequence[int], sigma: float | Sequence[float] = (0.1, 2.0)) -> None:
        v1 = T1.GaussianBlur(kernel_size, sigma)
        self.kernel_size, self.sigma = v1.kernel_size, v1.sigma

    def make_params(self, flat_inputs):
        s = _random.uniform(self.sigma[0], self.sigma[1])
        return dict(sigma=[s, s])

    def transform(self, inpt, params):
        return F.gaussian_blur(inpt, list(self.kernel_size), params["sigma"])


class GaussianNoise(_ColorTransform):
    """Add Gaussian noise to float images and videos.

    Args:
        mean (float): mean of the noise. Default ``0.0``.
        sigma (float): standard deviation of the noise, non-negative. Default ``0.1``.
        clip (bool): clamp the result to ``[0, 1]``. Default ``True``.

    Raises:
        ValueError: if ``sigma`` is negative.
    """

    def __init__(self, mean: float = 0.0, sigma: float = 0.1, clip: bool = True) -> None:
        if sigma < 0:
            raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
        self.mean, self.sigma, self.clip = mean, sigma, clip

    def transform(self, inpt, params):
        return F.gaussian_noise(inpt, mean=self.mean, sigma=self.sigma, clip=self.clip)


class _RandomColorOp(_RandomApplyTransform):
    _transformed_types = _ColorTransform._transformed_types


class RandomInvert(_RandomColorOp):
    """Invert the colors of images and videos with probability ``p``.

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.invert(inpt)


class RandomPosterize(_RandomColorOp):
    """Posterize uint8 images (keep ``bits`` bits per channel) with probability ``p``.

    Args:
        bits (int): bits to keep, in ``[0, 8]``.
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.bits = bits

    def transform(self, inpt, params):
        return F.posterize(inpt, bits=self.bits)


class RandomSolarize(_RandomColorOp):
    """Solarize images (invert pixels ``>= threshold``) with probability ``p``.

    Args:
        threshold (float): pixels at or above it are inverted.
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.threshold = threshold

    def transform(self, inpt, params):
        return F.solarize(inpt, threshold=self.threshold)


class RandomAutocontrast(_RandomColorOp):
    """Autocontrast images and videos with probability ``p``.

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.autocontrast(inpt)


class RandomEqualize(_RandomColorOp):
    """Equalize the histogram of uint8 images and videos with probability ``p``.

    Args:
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def transform(self, inpt, params):
        return F.equalize(inpt)


class RandomAdjustSharpness(_RandomColorOp):
    """Adjust the sharpness of images and videos with probability ``p``.

    Args:
        sharpness_factor (float): non-negative; 0 blurs, 1 keeps the image, 2 doubles the sharpness.
        p (float): probability of applying the transform. Default ``0.5``.
    """

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.sharpness_factor = sharpness_factor

    def transform(self, inpt, params):
        return F.adjust_sharpness(inpt, sharpness_factor=self.sharpness_factor)


class JPEG(_ColorTransform):
    """JPEG-compress uint8 images at a quality drawn from a range (JPEG-artefact augmentation).

    Args:
        quality (int or (min, max)): JPEG quality in ``[1, 100]``, or the range it is drawn from (inclusive).

    Raises:
        ValueError: if ``quality`` is out of ``[1, 100]`` or not an int / (min, max) pair.
    """

    def __init__(self, quality: int | Sequence[int]) -> None:
        if isinstance(quality, int):
            quality = [quality, quality]
        if len(quality) != 2 or not (1 <= quality[0] <= quality[1] <= 100):
            raise ValueError(f"quality must be an int or a (min, max) pair in [1, 100], got {quality}")
        self.quality = quality

    def make_params(self, flat_inputs):
        return dict(quality=_random.randint(self.quality[0], self.quality[1] + 1))

    def transform(self, inpt, params):
        return F.jpeg(inpt, quality=params["quality"])


class LinearTransformation(_ColorTransform):
    """Flatten tensor images, subtract ``mean_vector`` and multiply by ``transformation_matrix`` (e.g. whitening).

    Args:
        transformation_matrix (Tensor or array): ``(D, D)`` matrix with ``D = C * H * W``.
        mean_vector (Tensor or array): ``(D,)`` vector.

    Raises:
        ValueError: as :class:`flowvision.transforms.LinearTransformation`; TypeError at call time for PIL images.
    """

    def __init__(self, transformation_matrix: Any, mean_vector: Any) -> None:
        self._v1 = T1.LinearTransformation(transformation_matrix, mean_vector)

    def transform(self, inpt, params):
        if isinstance(inpt, _PILImage.Image):
            raise TypeError("LinearTransformation does not work on PIL Images")
        return F._rewrap(self._v1(F._plain(inpt)), inpt)


# ----------------------------------------------------------------------------- meta
class ConvertBoundingBoxFormat(Transform):
    """Convert bounding boxes to another format.

    Args:
        format (BoundingBoxFormat or str): target format (``"XYXY"``, ``"XYWH"`` or ``"CXCYWH"``).
    """

    _transformed_types = (BoundingBoxes,)

    def __init__(self, format: Any) -> None:
        self.format = tv_tensors._parse_format(format)

    def transform(self, inpt, params):
        return F.convert_bounding_box_format(inpt, new_format=self.format)


class ClampBoundingBoxes(Transform):
    """Clamp bounding boxes to their canvas.

    Args:
        clamping_mode (str, optional): ``"soft"``, ``"hard"``, ``None`` (no clamping) or ``"auto"`` (each box
            tensor's own mode). Default ``"auto"``.
    """

    _transformed_types = (BoundingBoxes,)

    def __init__(self, clamping_mode: str | None = "auto") -> None:
        self.clamping_mode = clamping_mode

    def transform(self, inpt, params):
        return F.clamp_bounding_boxes(inpt, clamping_mode=self.clamping_mode)


def _find_labels_default(inputs):
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if is_pure_tensor(inputs):
        return inputs
    if not isinstance(inputs, dict):
        raise ValueError("When using the default labels_getter, the input passed to forward must be a dictionary or "
                         f"a two-tuple whose second item is a dictionary or a tensor, but got {type(inputs)} instead.")
    key = next((k for k in inputs if isinstance(k, str) and k.lower() == "labels"), None)
    if key is None:
        key = next((k for k in inputs if isinstance(k, str) and "label" in k.lower()), None)
    if key is None:
        raise ValueError("Could not infer where the labels are in the sample. Try passing a callable as the "
                         "labels_getter parameter? If there are no labels in the sample by design, pass "
                         "labels_getter=None.")
    return inputs[key]


def _parse_labels_getter(labels_getter):
    if labels_getter == "default":
        return _find_labels_default
    if callable(labels_getter):
        return labels_getter
    if labels_getter is None:
        return lambda _: None
    raise ValueError(f"labels_getter should either be 'default', a callable, or None, but got {labels_getter}.")


class SanitizeBoundingBoxes(Transform):
    """Remove degenerate boxes (too small or outside the canvas) and the matching labels and masks.

    Args:
        min_size (float): minimum width and height of a kept box, ``>= 1``. Default ``1.0``.
        min_area (float): minimum area of a kept box, ``>= 1``. Default ``1.0``.
        labels_getter (str, callable or None): how to find the labels: ``"default"`` takes the ``"labels"`` key
            (case-insensitive; else the first key containing "label") of a dict sample, or of the second item of a
            2-tuple sample (a tensor there is the labels); a callable takes the sample; ``None`` sanitizes boxes only.
            Default ``"default"``.

    Raises:
        ValueError: if ``min_size``/``min_area`` is below 1 or ``labels_getter`` is invalid; at call time, if the
            labels cannot be found or do not match the boxes.
    """

    def __init__(self, min_size: float = 1.0, min_area: float = 1.0, labels_getter: str | Callable[[Any], Any] | None = "default") -> None:
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        self.min_size, self.min_area = min_size, min_area
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        labels = self._labels_getter(inputs)
        if labels is not None:
            if F_t.is_tensor(labels) or isinstance(labels, np.ndarray):
                labels = (labels,)
            elif isinstance(labels, (tuple, list)):
                for e in labels:
                    if not (F_t.is_tensor(e) or isinstance(e, np.ndarray)):
                        raise ValueError(f"The labels in the input to forward() must be a tensor or None, got "
                                         f"{type(e)} instead.")
            else:
                raise ValueError(f"The labels in the input to forward() must be a tensor or None, got {type(labels)}"
                                 " instead.")
        flat, spec = tree_flatten(inputs)
        boxes = get_bounding_boxes(flat)
        if labels is not None:
            for lab in labels:
                if boxes.shape[0] != lab.shape[0]:
                    raise ValueError(f"Number of boxes (shape={tuple(boxes.shape)}) and must match the number of "
                                     f"labels. Found labels with shape={tuple(lab.shape)}).")
        valid = F._sanitize_mask(F._boxes_np(boxes), boxes.format, boxes.canvas_size, self.min_size, self.min_area)
        out = []
        for x in flat:
            is_label = labels is not None and any(x is lab for lab in labels)
            if not (is_label or isinstance(x, (BoundingBoxes, Mask))):
                out.append(x)
                continue
            arr = x if isinstance(x, np.ndarray) else F._plain(x).numpy()
            if arr.shape[0] != valid.shape[0]:
                out.append(x)
                continue
            kept = arr[valid]
            if isinstance(x, np.ndarray):
                out.append(kept)
            elif is_label and not isinstance(x, tv_tensors.TVTensor):
                out.append(F_t.from_numpy(kept))
            else:
                out.append(tv_tensors.wrap(kept, like=x))
        return tree_unflatten(out, spec)


# ----------------------------------------------------------------------------- erasing, mixing
class RandomErasing(_RandomApplyTransform):
    """Erase a random rectangle of images and videos with probability ``p`` (boxes and masks are left alone).

    Args:
        p (float): probability of erasing. Default ``0.5``.
        scale (sequence of 2 float): range of the erased area as a fraction of the image. Default ``(0.02, 0.33)``.
        ratio (sequence of 2 float): range of the rectangle's aspect ratio. Default ``(0.3, 3.3)``.
        value (number, sequence or str): erasing value, one per channel, or ``"random"`` for normal noise.
            Default ``0.0``.
        inplace (bool): erase in place. Default ``False``.

    Raises:
        TypeError, ValueError: as :class:`flowvision.transforms.RandomErasing`.
    """

    _transformed_types = (tv_tensors.Image, Video, np.ndarray, "tensor", BoundingBoxes, Mask)

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3), value: float | Sequence[float] | str = 0.0, inplace: bool = False) -> None:
        v1 = T1.RandomErasing(p, scale, ratio, value, inplace)
        super().__init__(p=p)
        self.scale, self.ratio, self.value, self.inplace = v1.scale, v1.ratio, value, inplace
        if isinstance(value, (int, float)):
            self._fill = [float(value)]
        elif isinstance(value, str):
            self._fill = None
        else:
            self._fill = [float(v) for v in value]

    def make_params(self, flat_inputs):
        c, h, w = query_chw(flat_inputs)
        if self._fill is not None and len(self._fill) not in (1, c):
            raise ValueError(f"If value is a sequence, it should have either a single value or {c} "
                             "(number of inpt channels)")
        i, j, eh, ew, v = T1.RandomErasing.get_params(np.empty((h, w, c), np.uint8), self.scale, self.ratio,
                                                      self._fill)
        if isinstance(v, np.ndarray) and v.shape == (h, w, c):
            return dict(i=None)
        return dict(i=i, j=j, h=eh, w=ew, v=v)

    def transform(self, inpt, params):
        if params["i"] is None or isinstance(inpt, (BoundingBoxes, Mask)):
            return inpt
        return F.erase(inpt, params["i"], params["j"], params["h"], params["w"], params["v"], self.inplace)


class _BaseMixUpCutMix(Transform):
    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None, labels_getter: str | Callable[[Any], Any] | None = "default") -> None:
        if alpha <= 0:
            raise ValueError(f"alpha should be positive, got {alpha}")
        self.alpha = float(alpha)
        self.num_classes = num_classes
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat, spec = tree_flatten(inputs)
        needs = self._needs_transform_list(flat)
        if has_any(flat, _PILImage.Image, BoundingBoxes, Mask):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding boxes and masks.")
        labels = self._labels_getter(inputs)
        if not F_t.is_tensor(labels):
            raise ValueError(f"The labels must be a tensor, but got {type(labels)} instead.")
        lab = F_t.to_numpy(labels)
        if lab.ndim not in (1, 2):
            raise ValueError("labels should be index based with shape (batch_size,) or probability based with shape "
                             f"(batch_size, num_classes), but got a tensor of shape {tuple(lab.shape)} instead.")
        if lab.ndim == 2 and self.num_classes is not None and lab.shape[-1] != self.num_classes:
            raise ValueError(f"When passing 2D labels, the number of elements in last dimension must match "
                             f"num_classes: {lab.shape[-1]} != {self.num_classes}. You can Leave num_classes to None.")
        if lab.ndim == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")
        if lab.ndim == 1 and lab.dtype.kind not in "iu":
            raise TypeError(f"index-based (1D) labels must be integers, got {lab.dtype}")
        params = {"labels": labels, "batch_size": lab.shape[0],
                  **self.make_params([x for x, n in zip(flat, needs) if n])}
        idx = next(i for i, x in enumerate(flat) if x is labels)
        needs[idx] = True
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return tree_unflatten(out, spec)

    def _check_image(self, arr, is_video, batch_size):
        expected = 5 if is_video else 4
        if arr.ndim != expected:
            raise ValueError(f"Expected a batched input with {expected} dims, but got {arr.ndim} dimensions instead.")
        if arr.shape[0] != batch_size:
            raise ValueError(f"The batch size of the image or video does not match the batch size of the labels: "
                             f"{arr.shape[0]} != {batch_size}.")

    def _mix_label(self, label, lam):
        lab = F_t.to_numpy(label)
        if lab.ndim == 1:
            if lab.size and (lab.min() < 0 or lab.max() >= self.num_classes):
                raise ValueError(f"labels should be in [0, {self.num_classes}), got {lab.min()}..{lab.max()}")
            onehot = np.zeros((lab.shape[0], self.num_classes), np.int64)
            onehot[np.arange(lab.shape[0]), lab] = 1
            lab = onehot
        lab = lab.astype(np.float32) if lab.dtype.kind != "f" else lab
        out = np.roll(lab, 1, 0) * lab.dtype.type(1.0 - lam) + lab * lab.dtype.type(lam)
        return F_t.from_numpy(out.astype(lab.dtype))


class MixUp(_BaseMixUpCutMix):
    """MixUp (arXiv:1710.09412) on a batch: blend each sample and its label with the batch rolled by one.

    The mixing weight is drawn from ``Beta(alpha, alpha)``. Images must be float.

    Args:
        alpha (float): parameter of the Beta distribution, positive. Default ``1.0``.
        num_classes (int, optional): number of classes; needed for index (1-D) labels. Default ``None``.
        labels_getter (str, callable or None): how to find the labels (as :class:`SanitizeBoundingBoxes`).
            Default ``"default"``.

    Raises:
        ValueError: if ``alpha`` is not positive; at call time, for PIL images/boxes/masks, unbatched input or labels
            that do not match.
    """

    def make_params(self, flat_inputs):
        return dict(lam=_random.beta(self.alpha, self.alpha))

    def transform(self, inpt, params):
        lam = params["lam"]
        if inpt is params["labels"]:
            return self._mix_label(inpt, lam)
        if isinstance(inpt, (tv_tensors.Image, Video)) or is_pure_tensor(inpt):
            a = F_t.to_numpy(F._plain(inpt))
            self._check_image(a, isinstance(inpt, Video), params["batch_size"])
            if a.dtype.kind != "f":
                raise TypeError(f"MixUp expects float images, got {a.dtype} (use ToDtype(float32, scale=True))")
            out = np.roll(a, 1, 0) * a.dtype.type(1.0 - lam) + a * a.dtype.type(lam)
            return F._rewrap(F_t.from_numpy(out.astype(a.dtype)), inpt)
        return inpt


class CutMix(_BaseMixUpCutMix):
    """CutMix (arXiv:1905.04899) on a batch: paste a random box from the batch rolled by one, mix labels by area.

    The box area is drawn from ``Beta(alpha, alpha)``.

    Args:
        alpha (float): parameter of the Beta distribution, positive. Default ``1.0``.
        num_classes (int, optional): number of classes; needed for index (1-D) labels. Default ``None``.
        labels_getter (str, callable or None): how to find the labels (as :class:`SanitizeBoundingBoxes`).
            Default ``"default"``.

    Raises:
        ValueError: if ``alpha`` is not positive; at call time, for PIL images/boxes/masks, unbatched input or labels
            that do not match.
    """

    def make_params(self, flat_inputs):
        lam = _random.beta(self.alpha, self.alpha)
        h, w = query_size(flat_inputs)
        r_x = _random.randint(0, w)
        r_y = _random.randint(0, h)
        r = 0.5 * math.sqrt(1.0 - lam)
        rw, rh = int(r * w), int(r * h)
        x1, y1 = max(r_x - rw, 0), max(r_y - rh, 0)
        x2, y2 = min(r_x + rw, w), min(r_y + rh, h)
        lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (w * h))
        return dict(box=(x1, y1, x2, y2), lam_adjusted=lam_adjusted)

    def transform(self, inpt, params):
        if inpt is params["labels"]:
            return self._mix_label(inpt, params["lam_adjusted"])
        if isinstance(inpt, (tv_tensors.Image, Video)) or is_pure_tensor(inpt):
            a = F_t.to_numpy(F._plain(inpt))
            self._check_image(a, isinstance(inpt, Video), params["batch_size"])
            x1, y1, x2, y2 = params["box"]
            out = a.copy()
            out[..., y1:y2, x1:x2] = np.roll(a, 1, 0)[..., y1:y2, x1:x2]
            return F._rewrap(F_t.from_numpy(out), inpt)
        return inpt


# ----------------------------------------------------------------------------- auto-augment (images)
class _V1ImageWrapper(_ColorTransform):
    _v1_cls = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._v1 = self._v1_cls(*args, **kwargs)

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, BoundingBoxes, Mask):
            raise TypeError(f"{type(self).__name__}() supports images only in flowvision (no boxes or masks)")

    def transform(self, inpt, params):
        return F._rewrap(self._v1(F._plain(inpt)), inpt)

    def __getattr__(self, name):
        # the wrapped transform is a child module: Module.__getattr__ finds it in _modules
        v1 = super().__getattr__("_v1")
        return v1 if name == "_v1" else getattr(v1, name)


class AutoAugment(_V1ImageWrapper):
    """AutoAugment on images (arguments and semantics of :class:`flowvision.transforms.AutoAugment`).

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.AutoAugment


class RandAugment(_V1ImageWrapper):
    """RandAugment on images (arguments and semantics of :class:`flowvision.transforms.RandAugment`).

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.RandAugment


class TrivialAugmentWide(_V1ImageWrapper):
    """TrivialAugmentWide on images (arguments of :class:`flowvision.transforms.TrivialAugmentWide`).

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.TrivialAugmentWide


class AugMix(_V1ImageWrapper):
    """AugMix on images (arguments and semantics of :class:`flowvision.transforms.AugMix`).

    Raises:
        TypeError: at call time, for bounding boxes or masks (not supported).
    """

    _v1_cls = AA.AugMix


class UniformTemporalSubsample(Transform):
    """Keep ``num_samples`` frames of a video, evenly spaced in time.

    Args:
        num_samples (int): number of frames to keep.
    """

    _transformed_types = (Video,)

    def __init__(self, num_samples: int) -> None:
        self.num_samples = num_samples

    def transform(self, inpt, params):
        a = F._plain(inpt).numpy()
        t = a.shape[-4]
        idx = np.linspace(0, t - 1, self.num_samples).astype(np.int64)
        return F._rewrap(F_t.from_numpy(np.take(a, idx, axis=-4)), inpt)
