"""GeneralizedRCNNTransform: normalise, resize (with targets), batch with padding, and map predictions back to
the original image sizes — torchvision's rules and arithmetic."""
import math

import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import Tensor, _C, nn

from .image_list import ImageList

__all__ = ["GeneralizedRCNNTransform", "resize_boxes", "resize_keypoints", "paste_masks_in_image"]


def _resize_image_and_masks(image, self_min_size, self_max_size, target=None, fixed_size=None):
    im_shape = tuple(image.shape[-2:])
    size = None
    scale_factor = None
    recompute_scale_factor = None
    if fixed_size is not None:
        size = [fixed_size[1], fixed_size[0]]
    else:
        scale_factor = min(self_min_size / min(im_shape), self_max_size / max(im_shape))
        recompute_scale_factor = True
    image = F.interpolate(image[None], size=size, scale_factor=scale_factor, mode="bilinear",
                          recompute_scale_factor=recompute_scale_factor, align_corners=False)[0]
    if target is None:
        return image, target
    if "masks" in target:
        mask = target["masks"]
        mask = F.interpolate(mask[:, None].float(), size=size, scale_factor=scale_factor,
                             recompute_scale_factor=recompute_scale_factor)[:, 0].byte()
        target["masks"] = mask
    return image, target


def _ratios(new_size, original_size):
    return [np.float32(s) / np.float32(o) for s, o in zip(new_size, original_size)]


def resize_keypoints(keypoints, original_size, new_size):
    ratio_h, ratio_w = _ratios(new_size, original_size)
    scale = np.ones(keypoints.shape[-1], np.float32)
    scale[0], scale[1] = ratio_w, ratio_h
    return keypoints * flow.tensor(scale, dtype=keypoints.dtype)


def resize_boxes(boxes, original_size, new_size):
    ratio_h, ratio_w = _ratios(new_size, original_size)
    xmin, ymin, xmax, ymax = boxes.unbind(1)
    rw = flow.tensor(ratio_w, dtype=flow.float32)
    rh = flow.tensor(ratio_h, dtype=flow.float32)
    return flow.stack((xmin * rw, ymin * rh, xmax * rw, ymax * rh), dim=1)


def _expand_boxes(boxes, scale):
    w_half = (boxes[:, 2] - boxes[:, 0]) * 0.5
    h_half = (boxes[:, 3] - boxes[:, 1]) * 0.5
    x_c = (boxes[:, 2] + boxes[:, 0]) * 0.5
    y_c = (boxes[:, 3] + boxes[:, 1]) * 0.5
    w_half = w_half * scale
    h_half = h_half * scale
    return np.stack([x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half], axis=1)


def _interp_matrix(size, start, length, stop_lo, stop_hi, m_in, dtype):
    """[N, size, m_in] bilinear weights (align_corners=False, torch's source-index rule) that resize each padded
    mask side (m_in) to ``length[i]`` pixels placed at ``start[i]`` in an axis of ``size`` pixels; rows outside
    [stop_lo[i], stop_hi[i]) stay zero."""
    n = start.shape[0]
    pos = np.arange(size)[None, :]                                   # image coordinate
    valid = (pos >= stop_lo[:, None]) & (pos < stop_hi[:, None])
    j = (pos - start[:, None]).astype(dtype)                         # index in the resized mask
    scale = (dtype(m_in) / length.astype(dtype))[:, None]
    src = np.maximum(scale * (j + dtype(0.5)) - dtype(0.5), dtype(0))
    i0 = np.minimum(src.astype(np.int64), m_in - 1)
    step = (i0 < m_in - 1).astype(np.int64)
    l1 = (src - i0.astype(dtype)).astype(dtype)
    l0 = (dtype(1) - l1).astype(dtype)
    out = np.zeros((n, size, m_in), dtype)
    ii, pp = np.nonzero(valid)
    out[ii, pp, i0[ii, pp]] = l0[ii, pp]
    out[ii, pp, i0[ii, pp] + step[ii, pp]] += l1[ii, pp]
    return out


def paste_masks_in_image(masks, boxes, img_shape, padding=1):
    """Paste [N, 1, M, M] mask probabilities into [N, 1, H, W] images at ``boxes`` (Mask R-CNN postprocess).

    torchvision resizes each (padded) mask bilinearly to its integer box size and copies the part inside the
    image; here the separable bilinear resize of all masks is two batched matrix products (no per-box loop).
    A box entirely outside the image gives an empty mask (torchvision raises a shape error there).
    """
    m = masks.detach().numpy()
    im_h, im_w = int(img_shape[0]), int(img_shape[1])
    n = m.shape[0]
    dt = m.dtype.type if m.dtype in (np.float32, np.float64) else np.float32
    if n == 0:
        return flow.zeros((0, 1, im_h, im_w), dtype=masks.dtype)
    M = m.shape[-1]
    scale = float(M + 2 * padding) / M
    mp = np.pad(m[:, 0].astype(dt), ((0, 0), (padding, padding), (padding, padding)))
    bx = boxes.detach().numpy()
    b = _expand_boxes(bx, np.asarray(scale, bx.dtype)).astype(np.int64)
    ws = np.maximum(b[:, 2] - b[:, 0] + 1, 1)
    hs = np.maximum(b[:, 3] - b[:, 1] + 1, 1)
    x0, x1 = np.maximum(b[:, 0], 0), np.minimum(b[:, 2] + 1, im_w)
    y0, y1 = np.maximum(b[:, 1], 0), np.minimum(b[:, 3] + 1, im_h)
    # the resized mask has hs x ws pixels: rows/cols beyond it are not pasted
    x1 = np.minimum(x1, b[:, 0] + ws)
    y1 = np.minimum(y1, b[:, 1] + hs)
    ry = _interp_matrix(im_h, b[:, 1], hs, y0, y1, mp.shape[1], dt)   # [N, H, Mp]
    rx = _interp_matrix(im_w, b[:, 0], ws, x0, x1, mp.shape[2], dt)   # [N, W, Mp]
    out = _C.gemm(_C.gemm(ry, mp), rx, False, True)  # ry @ mp @ rx^T, batched (the engine's threaded GEMM)
    return flow.from_numpy(np.ascontiguousarray(out[:, None].astype(m.dtype, copy=False)))


class GeneralizedRCNNTransform(nn.Module):
    """Input transform of the R-CNN family: ``forward(images: list[CHW float in 0..1], targets=None) ->
    (ImageList, targets)``; ``postprocess(result, image_shapes, original_image_sizes)`` maps boxes, masks and
    keypoints back to the original sizes."""

    def __init__(self, min_size, max_size, image_mean, image_std, size_divisible=32, fixed_size=None, **kwargs):
        super().__init__()
        if not isinstance(min_size, (list, tuple)):
            min_size = (min_size,)
        self.min_size = min_size
        self.max_size = max_size
        self.image_mean = image_mean
        self.image_std = image_std
        self.size_divisible = size_divisible
        self.fixed_size = fixed_size
        self._skip_resize = kwargs.pop("_skip_resize", False)
        if kwargs:
            raise TypeError(f"unexpected keyword arguments: {sorted(kwargs)}")

    def forward(self, images, targets=None):
        if isinstance(images, Tensor) and images.ndim == 4:  # a batch tensor iterates into images (torchvision)
            images = list(images.unbind(0))
        if not isinstance(images, (list, tuple)):
            raise TypeError(f"images is expected to be a list of 3d tensors, got {type(images).__name__}")
        images = list(images)
        if targets is not None:
            if len(targets) != len(images):
                raise ValueError(f"got {len(images)} images but {len(targets)} targets")
            targets = [dict(t) for t in targets]
        for i in range(len(images)):
            image = images[i]
            target_index = targets[i] if targets is not None else None
            if not isinstance(image, Tensor) or image.dim() != 3:
                raise ValueError("images is expected to be a list of 3d tensors of shape [C, H, W], got "
                                 f"{getattr(image, 'shape', type(image).__name__)}")
            image = self.normalize(image)
            image, target_index = self.resize(image, target_index)
            images[i] = image
            if targets is not None and target_index is not None:
                targets[i] = target_index
        image_sizes = [(int(img.shape[-2]), int(img.shape[-1])) for img in images]
        batched = self.batch_images(images, size_divisible=self.size_divisible)
        return ImageList(batched, image_sizes), targets

    def normalize(self, image):
        if not image.is_floating_point():
            raise TypeError(f"Expected input images to be of floating type (in range [0, 1]), but found type "
                            f"{image.dtype} instead")
        mean = flow.tensor(self.image_mean, dtype=image.dtype)
        std = flow.tensor(self.image_std, dtype=image.dtype)
        return (image - mean[:, None, None]) / std[:, None, None]

    def torch_choice(self, k):
        index = int(flow.empty(1).uniform_(0.0, float(len(k))).item())
        return k[index]

    def resize(self, image, target=None):
        h, w = image.shape[-2:]
        if self.training:
            if self._skip_resize:
                return image, target
            size = self.torch_choice(self.min_size)
        else:
            size = self.min_size[-1]
        image, target = _resize_image_and_masks(image, size, self.max_size, target, self.fixed_size)
        if target is None:
            return image, target
        target["boxes"] = resize_boxes(target["boxes"], (h, w), image.shape[-2:])
        if "keypoints" in target:
            target["keypoints"] = resize_keypoints(target["keypoints"], (h, w), image.shape[-2:])
        return image, target

    def max_by_axis(self, the_list):
        maxes = list(the_list[0])
        for sub in the_list[1:]:
            for i, item in enumerate(sub):
                maxes[i] = max(maxes[i], item)
        return maxes

    def batch_images(self, images, size_divisible=32):
        max_size = self.max_by_axis([list(img.shape) for img in images])
        stride = float(size_divisible)
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)
        padded = []
        for img in images:
            pc, ph, pw = (m - s for m, s in zip(max_size, img.shape))
            padded.append(F.pad(img, (0, pw, 0, ph, 0, pc)) if (pc or ph or pw) else img)
        return flow.stack(padded)

    def postprocess(self, result, image_shapes, original_image_sizes):
        if self.training:
            return result
        for i, (pred, im_s, o_im_s) in enumerate(zip(result, image_shapes, original_image_sizes)):
            boxes = resize_boxes(pred["boxes"], im_s, o_im_s)
            result[i]["boxes"] = boxes
            if "masks" in pred:
                result[i]["masks"] = paste_masks_in_image(pred["masks"], boxes, o_im_s)
            if "keypoints" in pred:
                result[i]["keypoints"] = resize_keypoints(pred["keypoints"], im_s, o_im_s)
        return result

    def __repr__(self):
        s = f"{self.__class__.__name__}("
        ind = "\n    "
        s += f"{ind}Normalize(mean={self.image_mean}, std={self.image_std})"
        s += f"{ind}Resize(min_size={self.min_size}, max_size={self.max_size}, mode='bilinear')"
        return s + "\n)"
