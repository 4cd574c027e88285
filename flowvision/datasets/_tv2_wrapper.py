"""``wrap_dataset_for_transforms_v2``: dataset targets as ``tv_tensors`` (boxes, masks, labels) for transforms v2."""
import collections.abc
from collections import defaultdict
from copy import copy
from typing import Any, Callable, Dict, Optional, Set

import numpy as np

__all__ = ["wrap_dataset_for_transforms_v2"]

VOC_DETECTION_CATEGORIES = [
    "__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
    "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor",
]
_VOC_INDEX = {name: i for i, name in enumerate(VOC_DETECTION_CATEGORIES)}

_FACTORIES: Dict[type, Callable] = {}


def _register(*classes):
    def deco(factory):
        for cls in classes:
            _FACTORIES[cls] = factory
        return factory
    return deco


def _tensor(values, dtype=np.int64):
    """An engine tensor of ``values``."""
    from .. import backend
    return backend.from_numpy(np.asarray(values, dtype=dtype))


def _parse_keys(keys, available: Set[str], default: Set[str]) -> Set[str]:
    if keys is None:
        return set(default)
    if keys == "all":
        return set(available)
    keys = set(keys)
    extra = keys - available
    if extra:
        raise ValueError(f"Target keys {sorted(extra)} are not available")
    return keys


def _batched(dicts) -> Dict[str, list]:
    out = defaultdict(list)
    for d in dicts:
        for k, v in d.items():
            out[k].append(v)
    return dict(out)


def _identity_factory(dataset, target_keys):
    return lambda idx, sample: sample


def _segmentation_factory(dataset, target_keys):
    def wrapper(idx, sample):
        image, mask = sample
        return image, _mask(mask)  # (1, H, W), like torchvision's Mask(PIL image)
    return wrapper


def _voc_detection_factory(dataset, target_keys):
    from .. import tv_tensors
    keys = _parse_keys(target_keys, {"annotation", "boxes", "labels"}, {"boxes", "labels"})

    def wrapper(idx, sample):
        image, target = sample
        objects = _batched(target["annotation"]["object"])
        out = target if "annotation" in keys else {}
        if "boxes" in keys:
            boxes = [[int(b[k]) for k in ("xmin", "ymin", "xmax", "ymax")] for b in objects.get("bndbox", [])]
            out["boxes"] = tv_tensors.BoundingBoxes(np.asarray(boxes, dtype=np.int64).reshape(-1, 4), format="XYXY",
                                                    canvas_size=(image.height, image.width))
        if "labels" in keys:
            out["labels"] = _tensor([_VOC_INDEX[n] for n in objects.get("name", [])])
        return image, out
    return wrapper


def _coco_detection_factory(dataset, target_keys):
    from .. import tv_tensors
    keys = _parse_keys(target_keys,
                       {"segmentation", "area", "iscrowd", "image_id", "bbox", "category_id", "boxes", "masks",
                        "labels"},
                       {"image_id", "boxes", "labels"})

    def to_mask(segmentation, canvas_size):
        try:
            from pycocotools import mask as coco_mask
        except ImportError as e:
            raise ImportError("decoding COCO segmentations into masks needs pycocotools (pip install pycocotools); "
                              "leave 'masks' out of target_keys to do without it") from e
        if isinstance(segmentation, dict):
            if not isinstance(segmentation["counts"], str):
                segmentation = coco_mask.frPyObjects(segmentation, *canvas_size)
        elif isinstance(segmentation, list):
            segmentation = coco_mask.merge(coco_mask.frPyObjects(segmentation, *canvas_size))
        else:
            raise ValueError(f"COCO segmentation expected to be a dict or a list, got {type(segmentation)}")
        return coco_mask.decode(segmentation)

    def wrapper(idx, sample):
        image_id = dataset.ids[idx]
        image, target = sample
        if not target:
            return image, {"image_id": image_id}
        canvas_size = (image.height, image.width)
        batched = _batched(target)
        out: Dict[str, Any] = {}
        if "image_id" in keys:
            out["image_id"] = image_id
        if "boxes" in keys:
            xywh = np.asarray(batched["bbox"], dtype=np.float32).reshape(-1, 4)
            xyxy = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
            out["boxes"] = tv_tensors.BoundingBoxes(xyxy, format="XYXY", canvas_size=canvas_size)
        if "masks" in keys:
            out["masks"] = tv_tensors.Mask(np.stack([to_mask(s, canvas_size) for s in batched["segmentation"]]))
        if "labels" in keys:
            out["labels"] = _tensor(batched["category_id"])
        for k in keys - {"image_id", "boxes", "masks", "labels"}:
            out[k] = batched[k]
        return image, out
    return wrapper


def _mask(pil_image):
    """A PIL mask as a (1, H, W) Mask; 16-bit images become int32 (the engine has no uint16)."""
    from .. import tv_tensors
    arr = np.asarray(pil_image)
    if arr.dtype == np.uint16 or arr.dtype.kind == "u" and arr.dtype.itemsize > 1:
        arr = arr.astype(np.int32)
    return tv_tensors.Mask(arr[None] if arr.ndim == 2 else arr)


def _by_type(target, target_types, wrappers):
    """Apply ``wrappers[type]`` to each part of a (possibly single) multi-type target."""
    parts = target if isinstance(target, (tuple, list)) else [target]
    out = tuple(wrappers.get(t, lambda x: x)(item) for t, item in zip(target_types, parts))
    return out[0] if len(out) == 1 else out


def _xywh_boxes(values, canvas_size, dtype):
    from .. import tv_tensors
    xywh = np.asarray(values, dtype=dtype).reshape(-1, 4)
    xyxy = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
    return tv_tensors.BoundingBoxes(xyxy, format="XYXY", canvas_size=canvas_size)


def _not_supported(what):
    raise RuntimeError(f"{what} is currently not supported by this wrapper.")


def _sbd_factory(dataset, target_keys):
    if dataset.mode == "boundaries":
        _not_supported("SBDataset with mode='boundaries'")
    return _segmentation_factory(dataset, target_keys)


def _caltech101_factory(dataset, target_keys):
    if "annotation" in dataset.target_type:
        _not_supported("Caltech101 dataset with `target_type=['annotation', ...]`")
    return _identity_factory(dataset, target_keys)


def _celeba_factory(dataset, target_keys):
    if any(t in dataset.target_type for t in ("attr", "landmarks")):
        _not_supported("`CelebA` dataset with `target_type=['attr', 'landmarks', ...]`")

    def wrapper(idx, sample):
        image, target = sample
        size = (image.height, image.width)
        return image, _by_type(target, dataset.target_type,
                               {"bbox": lambda b: _xywh_boxes(np.asarray(b), size, np.int64)})
    return wrapper


KITTI_CATEGORIES = ["Car", "Van", "Truck", "Pedestrian", "Person_sitting", "Cyclist", "Tram", "Misc", "DontCare"]
_KITTI_INDEX = {name: i for i, name in enumerate(KITTI_CATEGORIES)}


def _kitti_factory(dataset, target_keys):
    from .. import tv_tensors
    keys = _parse_keys(target_keys, {"type", "truncated", "occluded", "alpha", "bbox", "dimensions", "location",
                                     "rotation_y", "boxes", "labels"}, {"boxes", "labels"})

    def wrapper(idx, sample):
        image, target = sample
        if target is None:
            return image, target
        batched = _batched(target)
        out: Dict[str, Any] = {}
        if "boxes" in keys:
            out["boxes"] = tv_tensors.BoundingBoxes(
                np.asarray(batched.get("bbox", []), dtype=np.float32).reshape(-1, 4), format="XYXY",
                canvas_size=(image.height, image.width))
        if "labels" in keys:
            out["labels"] = _tensor([_KITTI_INDEX[t] for t in batched.get("type", [])])
        for k in keys - {"boxes", "labels"}:
            out[k] = batched[k]
        return image, out
    return wrapper


def _pet_factory(dataset, target_keys):
    def wrapper(idx, sample):
        image, target = sample
        if target is not None:
            target = _by_type(target, dataset._target_types, {"segmentation": _mask})
        return image, target
    return wrapper


def _cityscapes_factory(dataset, target_keys):
    from .. import tv_tensors
    if any(t in dataset.target_type for t in ("polygon", "color")):
        _not_supported("`Cityscapes` dataset with `target_type=['polygon', 'color', ...]`")

    def instances(mask):
        # ids >= 1000 encode class * 1000 + instance; smaller ids are classes without instances
        data = np.asarray(_mask(mask).numpy())
        ids = np.unique(data)
        labels = np.where(ids >= 1000, ids // 1000, ids)
        return {"masks": tv_tensors.Mask(np.stack([data == i for i in ids])), "labels": _tensor(labels, data.dtype)}

    def wrapper(idx, sample):
        image, target = sample
        return image, _by_type(target, dataset.target_type, {"instance": instances, "semantic": _mask})
    return wrapper


def _widerface_factory(dataset, target_keys):
    keys = _parse_keys(target_keys, {"bbox", "blur", "expression", "illumination", "occlusion", "pose", "invalid"},
                       {"bbox", "blur", "expression", "illumination", "occlusion", "pose", "invalid"})

    def wrapper(idx, sample):
        image, target = sample
        if target is None:
            return image, target
        out = {k: target[k] for k in keys}
        if "bbox" in keys:
            out["bbox"] = _xywh_boxes(np.asarray(target["bbox"].numpy()), (image.height, image.width), np.int64)
        return image, out
    return wrapper


_TARGET_KEY_FACTORIES = ("_voc_detection_factory", "_coco_detection_factory", "_kitti_factory", "_widerface_factory")


def _register_all() -> None:
    from . import (caltech, celeba, cifar, coco, detection, fine_grained, folder, imagenet, mnist, segmentation,
                   voc)
    _register(cifar.CIFAR10, cifar.CIFAR100, imagenet.ImageNet, mnist.MNIST, mnist.FashionMNIST,
              folder.DatasetFolder, folder.ImageFolder, coco.CocoCaptions, caltech.Caltech256, fine_grained.GTSRB,
              fine_grained.Imagenette)(_identity_factory)
    _register(voc.VOCSegmentation)(_segmentation_factory)
    _register(voc.VOCDetection)(_voc_detection_factory)
    _register(coco.CocoDetection)(_coco_detection_factory)
    _register(segmentation.SBDataset)(_sbd_factory)
    _register(caltech.Caltech101)(_caltech101_factory)
    _register(celeba.CelebA)(_celeba_factory)
    _register(detection.Kitti)(_kitti_factory)
    _register(fine_grained.OxfordIIITPet)(_pet_factory)
    _register(segmentation.Cityscapes)(_cityscapes_factory)
    _register(detection.WIDERFace)(_widerface_factory)


class _TVTensorWrapper:
    """Delegates to the dataset; applies the dataset's transforms after wrapping the sample."""

    def __init__(self, dataset, target_keys, factory):
        self._dataset = dataset
        self._target_keys = target_keys
        self._wrapper = factory(dataset, target_keys)
        # the transforms must see the wrapped sample: take them from the dataset and apply them here
        self.transform, dataset.transform = dataset.transform, None
        self.target_transform, dataset.target_transform = dataset.target_transform, None
        self.transforms, dataset.transforms = dataset.transforms, None

    def __getattr__(self, item):
        return getattr(self.__dict__["_dataset"], item)

    def __getitem__(self, idx):
        sample = self._wrapper(idx, self._dataset[idx])
        if self.transforms is not None:
            sample = self.transforms(*sample)
        return sample

    def __len__(self):
        return len(self._dataset)

    def __reduce__(self):
        dataset = copy(self._dataset)
        dataset.transform, dataset.target_transform, dataset.transforms = \
            self.transform, self.target_transform, self.transforms
        return wrap_dataset_for_transforms_v2, (dataset, self._target_keys)


def wrap_dataset_for_transforms_v2(dataset: Any, target_keys: Optional[Any] = None) -> Any:
    """Wrap a flowvision dataset so its samples carry ``flowvision.tv_tensors`` for ``transforms.v2``.

    Args:
        dataset: a dataset of :mod:`flowvision.datasets` (classification datasets pass through unchanged).
        target_keys: for detection datasets, the target keys to return; ``None`` for the defaults
            (VOCDetection: boxes, labels; CocoDetection: image_id, boxes, labels), ``"all"`` for every key.

    Returns:
        An object of a subclass of the dataset's class: ``VOCDetection`` targets become
        ``{"boxes": BoundingBoxes(XYXY), "labels": int64 tensor}`` (VOC's 20 classes, 0 = background),
        ``CocoDetection`` targets a dict of lists with ``boxes`` converted from XYWH to XYXY, ``Kitti`` boxes and
        labels, ``WIDERFace`` and ``CelebA`` boxes in XYXY, segmentation masks (VOC, SBD, Cityscapes, pets) a
        :class:`~flowvision.tv_tensors.Mask`; Cityscapes instance targets ``{"masks", "labels"}`` (16-bit ids
        become int32: the engine has no uint16).
    """
    from .vision import VisionDataset
    if not (target_keys is None or target_keys == "all" or (
            isinstance(target_keys, collections.abc.Collection) and all(isinstance(k, str) for k in target_keys))):
        raise ValueError(f"`target_keys` can be None, 'all', or a collection of strings denoting the keys to be "
                         f"returned, but got {target_keys}")
    if not isinstance(dataset, VisionDataset):
        raise TypeError(f"This wrapper is meant for subclasses of flowvision.datasets.VisionDataset, but got a "
                        f"'{type(dataset).__name__}' instead; wrap the samples of a custom dataset yourself.")
    if not _FACTORIES:
        _register_all()
    for cls in type(dataset).__mro__:
        if cls in _FACTORIES:
            factory = _FACTORIES[cls]
            if target_keys is not None and factory.__name__ not in _TARGET_KEY_FACTORIES:
                raise ValueError(f"`target_keys` is currently only supported for `CocoDetection`, `VOCDetection`, "
                                 f"`Kitti`, and `WIDERFace`, but got {cls.__name__}.")
            break
    else:
        raise TypeError(f"No wrapper exists for dataset class {type(dataset).__name__}. Please wrap the output "
                        "yourself.")
    wrapped_cls = type(f"Wrapped{type(dataset).__name__}", (_TVTensorWrapper, type(dataset)), {})
    return wrapped_cls(dataset, target_keys, factory)
