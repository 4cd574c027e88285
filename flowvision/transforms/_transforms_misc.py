"""v1 transform classes on whole tensors: LinearTransformation (whitening) and RandomErasing."""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _random
from . import functional as F
from ._transform_base import Transform


class LinearTransformation(Transform):
    """Flatten a ``(C, H, W)`` tensor image, subtract ``mean_vector`` and multiply by ``transformation_matrix``.

    Used e.g. for ZCA whitening; the result is reshaped back to the input's shape.

    Args:
        transformation_matrix (Tensor or array): ``(D, D)`` matrix with ``D = C * H * W``.
        mean_vector (Tensor or array): ``(D,)`` vector.

    Raises:
        ValueError: if the matrix is not square, the vector's length differs from ``D``, or their dtypes differ; at
            call time, if the image does not have ``D`` elements.
    """

    def __init__(self, transformation_matrix: Any, mean_vector: Any) -> None:
        from . import _functional_tensor as F_t

        m = F_t.to_numpy(transformation_matrix) if F_t.is_tensor(transformation_matrix) else np.asarray(
            transformation_matrix)
        v = F_t.to_numpy(mean_vector) if F_t.is_tensor(mean_vector) else np.asarray(mean_vector)
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise ValueError(f"transformation_matrix should be square. Got {tuple(m.shape)} rectangular matrix.")
        if v.shape[0] != m.shape[0]:
            raise ValueError(
                f"mean_vector should have the same length {v.shape[0]} as any one of the dimensions of the "
                f"transformation_matrix [{tuple(m.shape)}]"
            )
        if m.dtype != v.dtype:
            raise ValueError(f"Input tensors should have the same dtype. Got {m.dtype} and {v.dtype}")
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector
        self._m, self._v = m, v

    def forward(self, tensor):
        from . import _functional_tensor as F_t

        is_np = isinstance(tensor, np.ndarray)
        if is_np:
            a = tensor if tensor.ndim == 2 else np.moveaxis(tensor, -1, -3)
            if tensor.ndim == 2:
                a = a[None]
        else:
            a = F_t.to_numpy(tensor)
        if a.ndim < 3:
            raise ValueError(f"Expected an image of shape (..., C, H, W), got {tuple(a.shape)}")
        n = a.shape[-3] * a.shape[-2] * a.shape[-1]
        if n != self._m.shape[0]:
            raise ValueError(
                "Input tensor and transformation matrix have incompatible shape."
                f"[{a.shape[-3]} x {a.shape[-2]} x {a.shape[-1]}] != {self._m.shape[0]}"
            )
        if a.dtype != self._m.dtype:
            raise ValueError(
                f"Input tensor and transformation matrix should have the same dtype. Got {a.dtype} and {self._m.dtype}"
            )
        flat = a.reshape(-1, n)
        out = ((flat - self._v) @ self._m).reshape(a.shape)
        if is_np:
            out = np.moveaxis(out, -3, -1)
            return np.ascontiguousarray(out[..., 0] if tensor.ndim == 2 else out)
        return F_t.from_numpy(out)

    def __repr__(self):
        return f"{self.__class__.__name__}(transformation_matrix={self._m.tolist()}, mean_vector={self._v.tolist()})"


class RandomErasing(Transform):
    """Erase a random rectangle of a tensor / ndarray image with probability ``p`` (after ToTensor, as torchvision).

    Args:
        p (float): probability of erasing. Default ``0.5``.
        scale (sequence of 2 float): range of the erased area as a fraction of the image area. Default ``(0.02, 0.33)``.
        ratio (sequence of 2 float): range of the rectangle's aspect ratio. Default ``(0.3, 3.3)``.
        value (number, sequence or str): erasing value; a number for all channels, one per channel, or ``"random"``
            for per-pixel normal noise. Default ``0``.
        inplace (bool): erase in place. Default ``False``.

    Raises:
        TypeError: if ``value``, ``scale`` or ``ratio`` has a wrong type.
        ValueError: if ``value`` is a string other than ``"random"``, ``scale`` is outside ``[0, 1]``, ``ratio`` is
            not positive or ``p`` outside ``[0, 1]``; at call time, TypeError for a PIL image.
    """

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3),
                 value: float | Sequence[float] | str = 0, inplace: bool = False) -> None:
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if ratio[0] <= 0:
            raise ValueError("Ratio should be positive")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = F.get_dimensions(img)
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * _random.uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_random.uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = _random.normal((img_c, h, w))
            else:
                v = np.asarray(value, np.float32)[:, None, None]
            i = _random.randint(0, img_h - h + 1)
            j = _random.randint(0, img_w - w + 1)
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if F._is_pil_image(img):
            raise TypeError(f"img should be Tensor Image. Got {type(img)}")
        if _random.rand() < self.p:
            c = F.get_dimensions(img)[0]
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            else:
                value = [float(v) for v in self.value]
            if value is not None and len(value) not in (1, c):
                raise ValueError(
                    f"If value is a sequence, it should have either a single value or {c} (number of input channels)"
                )
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            if v is img:
                return img
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")
