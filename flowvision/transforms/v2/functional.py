"""torchvision.transforms.v2.functional: one dispatcher per op, one kernel per input type.

Kernels: images (``Image`` / ``Video`` / plain tensors / numpy HWC arrays / PIL) go to the v1
functional kernels; ``Mask`` uses nearest interpolation; ``BoundingBoxes`` are transformed as
coordinates (numpy, in the boxes' float dtype like torchvision) and keep their ``canvas_size`` in step.
``register_kernel(functional, cls)`` adds a kernel for a custom type.
"""
from ..functional import InterpolationMode
from ._functional_boxes import (_boxes_affine, _boxes_np, _clamp_np, _convert_format_np, _new_boxes,  # noqa: F401
                                _sanitize_mask, clamp_bounding_boxes, convert_bounding_box_format,
                                sanitize_bounding_boxes)
from ._functional_color import (adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation,
                                adjust_sharpness, autocontrast, equalize, erase, gaussian_blur, gaussian_noise,
                                grayscale_to_rgb, invert, jpeg, normalize, permute_channels, posterize,
                                rgb_to_grayscale, solarize, to_grayscale)
from ._functional_conversion import (convert_image_dtype, get_dimensions, get_num_channels, get_num_frames, get_size,
                                     pil_to_tensor, to_dtype, to_image, to_pil_image, to_pure_tensor)
from ._functional_dispatch import (_KERNELS, _check_interpolation, _custom_kernel, _dispatch, _image_op,  # noqa: F401
                                   _kind, _plain, _rewrap, register_kernel)
from ._functional_geometry import (affine, center_crop, crop, elastic, elastic_transform, five_crop, hflip,
                                   horizontal_flip, pad, perspective, resize, resized_crop, rotate, ten_crop,
                                   vertical_flip, vflip)

__all__ = [
    "register_kernel", "resize", "crop", "center_crop", "resized_crop", "pad", "horizontal_flip", "vertical_flip",
    "hflip", "vflip", "rotate", "affine", "perspective", "elastic", "elastic_transform", "five_crop", "ten_crop",
    "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "adjust_sharpness",
    "rgb_to_grayscale", "to_grayscale", "grayscale_to_rgb", "invert", "posterize", "solarize", "autocontrast",
    "equalize", "gaussian_blur", "gaussian_noise", "permute_channels", "normalize", "erase", "to_dtype",
    "convert_image_dtype", "to_image", "to_pil_image", "pil_to_tensor", "to_pure_tensor", "get_size",
    "get_dimensions", "get_num_channels", "get_num_frames", "convert_bounding_box_format",
    "clamp_bounding_boxes", "sanitize_bounding_boxes", "jpeg", "InterpolationMode",
]
