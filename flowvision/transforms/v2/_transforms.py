"""torchvision.transforms.v2 classes: one parameter draw per call, applied to images, videos, masks and
bounding boxes alike."""
import math
import warnings
from collections.abc import Sequence

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
    def __init__(self, transforms):
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
    def __init__(self, transforms, p=0.5):
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
    def __init__(self, transforms, p=None):
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
    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        for i in _random.randperm(len(self.transforms)):
            sample = self.transforms[i](sample)
        return sample


class Identity(Transform):
    def transform(self, inpt, params):
        return inpt


class Lambda(Transform):
    def __init__(self, lambd, *types):
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
    _transformed_types = (np.ndarray, _PILImage.Image, "tensor")

    def _needs_transform_list(self, flat_inputs):
        needs = super()._needs_transform_list(flat_inputs)
        return [n and not isinstance(x, tv_tensors.TVTensor) for n, x in zip(needs, flat_inputs)]

    def transform(self, inpt, params):
        return F.to_image(inpt)


class PILToTensor(Transform):
    _transformed_types = (_PILImage.Image,)

    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt)


class ToPILImage(Transform):
    _transformed_types = (np.ndarray, "tensor", tv_tensors.Image)

    def __init__(self, mode=None):
        self.mode = mode

    def transform(self, inpt, params):
        return F.to_pil_image(inpt, mode=self.mode)


class ToPureTensor(Transform):
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

    def __init__(self, dtype, scale=False):
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
    def __init__(self, dtype=None):
        self.dtype = dtype

    def transform(self, inpt, params):
        if isinstance(inpt, (BoundingBoxes, Mask, _PILImage.Image)):
            return inpt
        return F.to_dtype(inpt, dtype=self.dtype, scale=True)


class Normalize(Transform):
    _transformed_types = (tv_tensors.Image, Video, np.ndarray, "tensor")

    def __init__(self, mean, std, inplace=False):
        T1.Normalize(mean, std, inplace)  # argument checks
        self.mean = list(np.atleast_1d(mean))
        self.std = list(np.atleast_1d(std))
        self.inplace = inplace

    def transform(self, inpt, params):
        return F.normalize(inpt, self.mean, self.std, self.inplace)


class RGB(Transform):
    def transform(self, inpt, params):
        return F.grayscale_to_rgb(inpt)


# ----------------------------------------------------------------------------- geometry
class Resize(Transform):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
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
    def __init__(self, size):
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def transform(self, inpt, params):
        return F.center_crop(inpt, output_size=self.size)


class RandomResizedCrop(Transform):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
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
    _transformed_types = (tv_tensors.Image, Video, _PILImage.Image, np.ndarray, "tensor")

    def __init__(self, size):
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, BoundingBoxes, Mask):
            raise TypeError(f"BoundingBoxes'es and Mask's are not supported by {type(self).__name__}()")

    def transform(self, inpt, params):
        return F.five_crop(inpt, self.size)


class TenCrop(FiveCrop):
    def __init__(self, size, vertical_flip=False):
        super().__init__(size)
        self.vertical_flip = vertical_flip

    def transform(self, inpt, params):
        return F.ten_crop(inpt, self.size, vertical_flip=self.vertical_flip)


class RandomHorizontalFlip(_RandomApplyTransform):
    def transform(self, inpt, params):
        return F.horizontal_flip(inpt)


class RandomVerticalFlip(_RandomApplyTransform):
    def transform(self, inpt, params):
        return F.vertical_flip(inpt)


class Pad(Transform):
    def __init__(self, padding, fill=0, padding_mode="constant"):
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
    def __init__(self, fill=0, side_range=(1.0, 4.0), p=0.5):
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
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
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
    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
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
    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
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
    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
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
    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
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
    """SSD's random crop: keep boxes whose centres fall in the crop, with IoU above a sampled threshold."""

    def __init__(self, min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0,
                 sampler_options=None, trials=40):
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
    def __init__(self, target_size, scale_range=(0.1, 2.0), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
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
    def __init__(self, min_size, max_size=None, interpolation=InterpolationMode.BILINEAR, antialias=True):
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
    def __init__(self, min_size, max_size, interpolation=InterpolationMode.BILINEAR, antialias=True):
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
    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
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
    def __init__(self, brightness=(0.875, 1.125), contrast=(0.5, 1.5), saturation=(0.5, 1.5), hue=(-0.05, 0.05),
                 p=0.5):
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
    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        return dict(permutation=_random.randperm(c))

    def transform(self, inpt, params):
        return F.permute_channels(inpt, params["permutation"])


class Grayscale(_ColorTransform):
    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, num_output_channels=self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform):
    _transformed_types = _ColorTransform._transformed_types

    def __init__(self, p=0.1):
        super().__init__(p=p)

    def make_params(self, flat_inputs):
        c, _, _ = query_chw(flat_inputs)
        return dict(num_input_channels=c)

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, num_output_channels=params["num_input_channels"])


class GaussianBlur(_ColorTransform):
    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        v1 = T1.GaussianBlur(kernel_size, sigma)
        self.kernel_size, self.sigma = v1.kernel_size, v1.sigma

    def make_params(self, flat_inputs):
        s = _random.uniform(self.sigma[0], self.sigma[1])
        return dict(sigma=[s, s])

    def transform(self, inpt, params):
        return F.gaussian_blur(inpt, list(self.kernel_size), params["sigma"])


class GaussianNoise(_ColorTransform):
    def __init__(self, mean=0.0, sigma=0.1, clip=True):
        if sigma < 0:
            raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
        self.mean, self.sigma, self.clip = mean, sigma, clip

    def transform(self, inpt, params):
        return F.gaussian_noise(inpt, mean=self.mean, sigma=self.sigma, clip=self.clip)


class _RandomColorOp(_RandomApplyTransform):
    _transformed_types = _ColorTransform._transformed_types


class RandomInvert(_RandomColorOp):
    def transform(self, inpt, params):
        return F.invert(inpt)


class RandomPosterize(_RandomColorOp):
    def __init__(self, bits, p=0.5):
        super().__init__(p=p)
        self.bits = bits

    def transform(self, inpt, params):
        return F.posterize(inpt, bits=self.bits)


class RandomSolarize(_RandomColorOp):
    def __init__(self, threshold, p=0.5):
        super().__init__(p=p)
        self.threshold = threshold

    def transform(self, inpt, params):
        return F.solarize(inpt, threshold=self.threshold)


class RandomAutocontrast(_RandomColorOp):
    def transform(self, inpt, params):
        return F.autocontrast(inpt)


class RandomEqualize(_RandomColorOp):
    def transform(self, inpt, params):
        return F.equalize(inpt)


class RandomAdjustSharpness(_RandomColorOp):
    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p=p)
        self.sharpness_factor = sharpness_factor

    def transform(self, inpt, params):
        return F.adjust_sharpness(inpt, sharpness_factor=self.sharpness_factor)


class JPEG(_ColorTransform):
    def __init__(self, quality):
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
    def __init__(self, transformation_matrix, mean_vector):
        self._v1 = T1.LinearTransformation(transformation_matrix, mean_vector)

    def transform(self, inpt, params):
        if isinstance(inpt, _PILImage.Image):
            raise TypeError("LinearTransformation does not work on PIL Images")
        return F._rewrap(self._v1(F._plain(inpt)), inpt)


# ----------------------------------------------------------------------------- meta
class ConvertBoundingBoxFormat(Transform):
    _transformed_types = (BoundingBoxes,)

    def __init__(self, format):
        self.format = tv_tensors._parse_format(format)

    def transform(self, inpt, params):
        return F.convert_bounding_box_format(inpt, new_format=self.format)


class ClampBoundingBoxes(Transform):
    _transformed_types = (BoundingBoxes,)

    def __init__(self, clamping_mode="auto"):
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
    def __init__(self, min_size=1.0, min_area=1.0, labels_getter="default"):
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
    _transformed_types = (tv_tensors.Image, Video, np.ndarray, "tensor", BoundingBoxes, Mask)

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0.0, inplace=False):
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
    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
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

    def __init__(self, *args, **kwargs):
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
    _v1_cls = AA.AutoAugment


class RandAugment(_V1ImageWrapper):
    _v1_cls = AA.RandAugment


class TrivialAugmentWide(_V1ImageWrapper):
    _v1_cls = AA.TrivialAugmentWide


class AugMix(_V1ImageWrapper):
    _v1_cls = AA.AugMix


class UniformTemporalSubsample(Transform):
    _transformed_types = (Video,)

    def __init__(self, num_samples):
        self.num_samples = num_samples

    def transform(self, inpt, params):
        a = F._plain(inpt).numpy()
        t = a.shape[-4]
        idx = np.linspace(0, t - 1, self.num_samples).astype(np.int64)
        return F._rewrap(F_t.from_numpy(np.take(a, idx, axis=-4)), inpt)
