"""Per-model preprocessing from the pretrained cfg (timm's eval transform) and ImageNet labels."""
import functools
import math
import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["resolve_data_config", "create_eval_transform", "imagenet_class_names"]


def resolve_data_config(model: Any = None, pretrained_cfg: Optional[Dict[str, Any]] = None,
                        use_test_size: bool = False) -> Dict[str, Any]:
    """``{input_size, interpolation, mean, std, crop_pct, crop_mode}`` from a model or a cfg dict.

    Args:
        model: a model whose ``pretrained_cfg`` attribute is used when ``pretrained_cfg`` is not given.
        pretrained_cfg: the pretrained configuration dict; missing keys take ImageNet defaults.
        use_test_size: use ``test_input_size`` / ``test_crop_pct`` when the cfg has them.

    Returns:
        The data configuration, ready for :func:`create_eval_transform` (``**config``).
    """
    cfg = dict(pretrained_cfg or getattr(model, "pretrained_cfg", None) or {})
    input_size = tuple(cfg.get("input_size", (3, 224, 224)))
    crop_pct = cfg.get("crop_pct", 0.875)
    if use_test_size and cfg.get("test_input_size"):
        input_size = tuple(cfg["test_input_size"])
        crop_pct = cfg.get("test_crop_pct") or crop_pct
    return dict(input_size=input_size, interpolation=cfg.get("interpolation", "bicubic"),
                mean=tuple(cfg.get("mean", (0.485, 0.456, 0.406))), std=tuple(cfg.get("std", (0.229, 0.224, 0.225))),
                crop_pct=crop_pct, crop_mode=cfg.get("crop_mode", "center"))


def create_eval_transform(input_size: Sequence[int] = (3, 224, 224), interpolation: str = "bicubic",
                          mean: Sequence[float] = (0.485, 0.456, 0.406), std: Sequence[float] = (0.229, 0.224, 0.225),
                          crop_pct: float = 0.875, crop_mode: str = "center") -> Any:
    """Resize the shorter side to ``size / crop_pct`` (floor), center crop ``size``, to tensor, normalise.

    Args:
        input_size: ``(C, H, W)`` (or ``(H, W)``) of the model input.
        interpolation: ``"bicubic"``, ``"bilinear"`` or ``"nearest"``.
        mean: per-channel normalization mean.
        std: per-channel normalization standard deviation.
        crop_pct: fraction of the resized image kept by the center crop.
        crop_mode: only ``"center"`` is supported.

    Returns:
        A ``flowvision.transforms.Compose`` taking a PIL image to a normalized ``(C, H, W)`` tensor.

    Raises:
        NotImplementedError: for another ``crop_mode``.
        KeyError: for an unknown ``interpolation``.
    """
    from flowvision import transforms as T
    from flowvision.transforms import InterpolationMode
    if crop_mode != "center":
        raise NotImplementedError(f"crop_mode {crop_mode!r} is not supported yet")
    h, w = input_size[-2:]
    scale: Union[int, Tuple[int, int]]
    if h == w:
        scale = int(math.floor(h / crop_pct))
    else:
        scale = (int(math.floor(h / crop_pct)), int(math.floor(w / crop_pct)))
    interp = {"bicubic": InterpolationMode.BICUBIC, "bilinear": InterpolationMode.BILINEAR,
              "nearest": InterpolationMode.NEAREST}[interpolation]
    return T.Compose([T.Resize(scale, interpolation=interp), T.CenterCrop((h, w)), T.ToTensor(),
                      T.Normalize(mean, std)])


@functools.lru_cache(maxsize=1)
def imagenet_class_names() -> Tuple[str, ...]:
    """The 1000 ImageNet-1k class descriptions, in class-index order.

    Returns:
        1000 strings (comma-separated synonyms each).

    Raises:
        RuntimeError: if the bundled label file does not hold 1000 names.
    """
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "imagenet_classes.txt")
    with open(path, encoding="utf-8") as f:
        names = [line.rstrip("\n") for line in f if line.strip()]
    if len(names) != 1000:
        raise RuntimeError(f"{path}: expected 1000 class names, found {len(names)}")
    return tuple(names)


def softmax_np(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
