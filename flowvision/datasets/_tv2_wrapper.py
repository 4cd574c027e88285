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
    from .. import tv_tensors

    def wrapper(idx, sample):
        image, mask = sample
        # torchvision's Mask(PIL image) is (1, H, W), like pil_to_tensor
        return image, tv_tensors.Mask(np.asarray(mask)[None])
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


def _register_all() -> None:
    from . import cifar, coco, folder, imagenet, mnist, voc
    _register(cifar.CIFAR10, cifar.CIFAR100, imagenet.ImageNet, mnist.MNIST, mnist.FashionMNIST,
              folder.DatasetFolder, folder.ImageFolder, coco.CocoCaptions)(_identity_factory)
    _register(voc.VOCSegmentation)(_segmentation_factory)
    _register(voc.VOCDetection)(_voc_detection_factory)
    _register(coco.CocoDetection)(_coco_detection_factory)


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
        ``CocoDetection`` targets a dict of lists with ``boxes`` converted from XYWH to XYXY,
        ``VOCSegmentation`` masks a :class:`~flowvision.tv_tensors.Mask`.
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
            if target_keys is not None and factory not in (_voc_detection_factory, _coco_detection_factory):
                raise ValueError(f"`target_keys` is only supported for CocoDetection and VOCDetection, "
                                 f"but got {cls.__name__}.")
            break
    else:
        raise TypeError(f"No wrapper exists for dataset class {type(dataset).__name__}. Please wrap the output "
                        "yourself.")
    wrapped_cls = type(f"Wrapped{type(dataset).__name__}", (_TVTensorWrapper, type(dataset)), {})
    return wrapped_cls(dataset, target_keys, factory)
