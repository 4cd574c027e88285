"""torchvision.transforms.functional, on PIL images, numpy HWC arrays and backend tensors.

Dispatch is by type: PIL images go to ``_functional_pil`` (torchvision's PIL semantics),
numpy arrays ``(H, W)`` / ``(H, W, C)`` / ``(..., H, W, C)`` and backend tensors
``(..., C, H, W)`` go to ``_functional_numpy`` (torchvision's tensor semantics; tensors are
viewed channels-last without a copy).
"""
from . import _functional_numpy as F_np  # noqa: F401  (re-exported: callers reach the kernels as F.F_np)
from ._functional_color import (_adjust_by_factor, _check_ndim3, _check_rgb, _color, adjust_brightness,  # noqa: F401
                                adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, adjust_sharpness,
                                autocontrast, equalize, erase, gaussian_blur, invert, posterize, rgb_to_grayscale,
                                solarize, to_grayscale)
from ._functional_conversion import (_to_tensor_normalize, _uint8_tensor_normalize, convert_image_dtype,  # noqa: F401
                                     normalize, pil_to_tensor, to_pil_image, to_tensor)
from ._functional_dispatch import (InterpolationMode, _apply_array, _check_nonempty, _hwc,  # noqa: F401
                                   _interpolation_modes_from_int, _is_numpy, _is_pil_image, _is_tensor, _kind,
                                   _max_value, _np_out, _np_view, _pil_from, get_dimensions, get_image_num_channels,
                                   get_image_size, pil_modes_mapping)
from ._functional_geometry import (_check_fill, _check_interpolation, _check_size_arg,  # noqa: F401
                                   _compute_resized_output_size, _crop_resize, _get_inverse_affine_matrix,
                                   _get_perspective_coeffs, _parse_padding, _setup_size, affine, center_crop, crop,
                                   elastic_transform, five_crop, hflip, pad, perspective, resize, resized_crop, rotate,
                                   ten_crop, vflip)

__all__ = [
    "InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
    "pil_to_tensor", "convert_image_dtype", "to_pil_image", "normalize", "resize", "pad", "crop",
    "center_crop", "resized_crop", "hflip", "perspective", "vflip", "five_crop", "ten_crop",
    "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "rotate",
    "affine", "to_grayscale", "rgb_to_grayscale", "erase", "gaussian_blur", "invert", "posterize",
    "solarize", "adjust_sharpness", "autocontrast", "equalize", "elastic_transform",
]
