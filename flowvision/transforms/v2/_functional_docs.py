"""Docstrings of the colour dispatchers of ``transforms.v2.functional`` that are built by a factory.

Every one takes ``inpt`` (Image, Video, plain tensor, numpy HWC array or PIL image) first; masks and bounding boxes
pass through unchanged, and a type with a kernel registered by ``register_kernel`` goes to that kernel.
"""

_IN = """inpt (Image, Video, Mask, BoundingBoxes, Tensor, numpy.ndarray or PIL Image): the input; masks and boxes
        are returned unchanged."""


def _doc(summary: str, args: str = "", returns: str = "the {what} image, of the type of ``inpt``.",
         what: str = "adjusted", raises: str = "") -> str:
    text = f"{summary}\n\nArgs:\n    {_IN}\n"
    if args:
        text += "".join(f"    {line}\n" for line in args.strip("\n").split("\n"))
    text += f"\nReturns:\n    {returns.format(what=what)}\n"
    if raises:
        text += "\nRaises:\n" + "".join(f"    {line}\n" for line in raises.strip("\n").split("\n"))
    return text


_CHANNELS = "TypeError: if a tensor/ndarray has neither 1 nor 3 channels."

COLOR_DOCS = {
    "adjust_brightness": _doc(
        "Adjust the brightness of an image.",
        "brightness_factor (float): non-negative; 0 gives a black image, 1 the original, 2 twice the brightness.",
        raises=f"ValueError: if ``brightness_factor`` is negative.\n{_CHANNELS}"),
    "adjust_contrast": _doc(
        "Adjust the contrast of an image (blend with the mean of its grayscale version).",
        "contrast_factor (float): non-negative; 0 gives a solid gray image, 1 the original, 2 twice the contrast.",
        raises=f"ValueError: if ``contrast_factor`` is negative.\n{_CHANNELS}"),
    "adjust_saturation": _doc(
        "Adjust the color saturation of an image (blend with its grayscale version).",
        "saturation_factor (float): non-negative; 0 gives a grayscale image, 1 the original, 2 twice the\n"
        "    saturation.",
        raises=f"ValueError: if ``saturation_factor`` is negative.\n{_CHANNELS}"),
    "adjust_hue": _doc(
        "Shift the hue of an image (in HSV space).",
        "hue_factor (float): in ``[-0.5, 0.5]``, the shift as a fraction of the hue circle; 0 keeps the image.",
        raises=f"ValueError: if ``hue_factor`` is outside ``[-0.5, 0.5]``.\n{_CHANNELS}"),
    "adjust_gamma": _doc(
        "Gamma-correct an image: ``gain * x ** gamma`` on values scaled to ``[0, 1]``.",
        "gamma (float): non-negative exponent; below 1 brightens dark regions, above 1 darkens them.\n"
        "gain (float): constant multiplier. Default ``1``.",
        what="corrected", raises="ValueError: if ``gamma`` is negative."),
    "adjust_sharpness": _doc(
        "Adjust the sharpness of an image (blend with a smoothed version).",
        "sharpness_factor (float): non-negative; 0 gives a blurred image, 1 the original, 2 twice the sharpness.",
        raises=f"ValueError: if ``sharpness_factor`` is negative.\n{_CHANNELS}"),
    "invert": _doc("Invert the colors of an image (``max - x``).", what="inverted"),
    "posterize": _doc(
        "Keep only the ``bits`` most significant bits of each channel of a uint8 image.",
        "bits (int): bits to keep, in ``[0, 8]``.", what="posterized",
        raises="ValueError: if ``bits`` is out of range.\nTypeError: if a tensor/ndarray is not uint8."),
    "solarize": _doc(
        "Invert every pixel value at or above ``threshold``.",
        "threshold (float): pixels ``>= threshold`` are inverted.", what="solarized",
        raises="TypeError: if ``threshold`` is above the maximum value of the image's dtype."),
    "autocontrast": _doc(
        "Stretch each channel so that its darkest pixel becomes black and its lightest white.", what="adjusted"),
    "equalize": _doc(
        "Equalize the histogram of each channel of a uint8 image.", what="equalized",
        raises="TypeError: if a tensor/ndarray is not uint8."),
    "gaussian_blur": _doc(
        "Blur an image with a Gaussian kernel.",
        "kernel_size (int or sequence of int): odd, positive kernel size ``(kx, ky)``.\n"
        "sigma (float or sequence of float, optional): standard deviation ``(sx, sy)``. Default ``None``:\n"
        "    ``0.3 * ((k - 1) * 0.5 - 1) + 0.8`` per dimension.",
        what="blurred",
        raises="TypeError: if ``kernel_size`` or ``sigma`` has a wrong type.\n"
               "ValueError: if ``kernel_size`` is even or not positive, or ``sigma`` is not positive."),
    "normalize": _doc(
        "Normalize a float image with a per-channel mean and standard deviation: ``(x - mean) / std``.",
        "mean (sequence of float): per-channel means.\n"
        "std (sequence of float): per-channel standard deviations.\n"
        "inplace (bool): write the result into the input. Default ``False``.",
        what="normalized",
        raises="TypeError: if the image is not a float image.\n"
               "ValueError: if ``mean``/``std`` have a wrong length or the image has fewer than 3 dimensions."),
    "grayscale_to_rgb": _doc(
        "Repeat the channel of a one-channel image three times (images with 3 or more channels are returned as is).",
        what="RGB"),
    "permute_channels": _doc(
        "Reorder the channels of an image.",
        "permutation (sequence of int): ``out[..., i, :, :] = inpt[..., permutation[i], :, :]``.",
        what="permuted"),
    "gaussian_noise": _doc(
        "Add Gaussian noise ``N(mean, sigma)`` to a float image.",
        "mean (float): mean of the noise. Default ``0.0``.\n"
        "sigma (float): standard deviation of the noise, non-negative. Default ``0.1``.\n"
        "clip (bool): clamp the result to ``[0, 1]``. Default ``True``.",
        what="noisy",
        raises="ValueError: if the image is not a float image or ``sigma`` is negative."),
    "jpeg": _doc(
        "Compress and decompress a uint8 image with JPEG at the given quality (a JPEG-artefact augmentation).",
        "quality (int): JPEG quality, 1 to 100.", what="re-encoded",
        raises="TypeError: if a tensor/ndarray is not uint8."),
}
